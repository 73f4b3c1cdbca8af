#!/bin/bash
# engine-owns-interfaces.sh — the engine owns the interfaces it calls: no
# file of sim/ includes a header of models/, replay/ or cli/ (the policies
# include sim/sim-elevator.h, sim/sim-devmodel.h and sim/sim-writeback.h,
# as the kernel's elevators include the block core's elevator.h), and each
# policy family's header builds on the engine's interface header.
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
status=0

reverse=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"(models|replay|cli)/' \
            "$SRC"/sim/*.c "$SRC"/sim/*.h || true)
if [ -n "$reverse" ]; then
  echo "sim/ includes outside the engine:"
  echo "$reverse"
  status=1
fi

check_uses () {   # HEADER INTERFACE
  if ! grep -q "#include \"$2\"" "$SRC/$1"; then
    echo "$1 does not include $2"
    status=1
  fi
}
check_uses models/sched/sched.h sim/sim-elevator.h
check_uses models/dev/dev.h sim/sim-devmodel.h
check_uses models/wb/wb.h sim/sim-writeback.h

[ $status = 0 ] && echo "sim/ includes only sim/ and traces/ headers"
exit $status
