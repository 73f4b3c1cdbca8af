#!/bin/sh
# bench-replay.sh — replay timing quality on a loop device, in the spirit
# of reference/anchors.md §G: evenly spaced 4 KiB random reads at several
# target rates, replayed with `iosim replay --json`; prints intended vs
# achieved IOPS and issue-error p50/p99 per rate.  Not a test: the figures
# depend on the machine and its load.  Needs root.
#
# Usage: tests/replay/bench-replay.sh [IOSIM_BIN [SECONDS [REPLAY OPTIONS...]]]
#   (default: $IOSIM_BIN or ./cli/iosim in the build folder, 2 s per rate;
#   e.g. "... ./cli/iosim 2 --realtime 10")
set -eu

bin=${1:-${IOSIM_BIN:-./cli/iosim}}
seconds=${2:-2}
[ $# -ge 2 ] && shift 2 || shift $#
dir=$(mktemp -d /dev/shm/iosim-bench-XXXXXX)
loop=
cleanup() {
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

truncate -s 1G "$dir/backing.img"
loop=$(losetup -f --show "$dir/backing.img")
dd if=/dev/zero of="$loop" bs=1M count=1024 oflag=direct status=none

printf '%-8s %-6s %12s %12s %14s %14s\n' rate procs intended_iops achieved_iops issue_p50_us issue_p99_us
for spec in 10000:1 20000:1 50000:2 100000:4; do
  rate=${spec%:*}
  procs=${spec#*:}
  n=$((rate * seconds))
  # ftrace blk text, as `iosim capture` writes it: Q, D and C per I/O.
  awk -v n="$n" -v rate="$rate" -v procs="$procs" 'BEGIN {
    print "# tracer: blk"
    seed = 12345
    for (i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648
      sector = (seed % 262144) * 8
      pid = 7000 + i % procs
      t = 100 + i / rate
      printf "%16s-%-5d [000] d..1. %.6f:   7,0    Q  RS %d + 8 [bench]\n", "bench", pid, t, sector
      printf "%16s-%-5d [000] d..1. %.6f:   7,0    D  RS %d + 8 [bench]\n", "bench", pid, t + 0.000001, sector
      printf "%16s-%-5d [000] d.h1. %.6f:   7,0    C  RS %d + 8 [0]\n", "<idle>", 0, t + 0.000002, sector
    }
  }' > "$dir/trace.txt"
  "$bin" replay "$dir/trace.txt" --target "$loop" --json "$dir/out.json" "$@" > /dev/null
  awk -v rate="$rate" -v procs="$procs" -F'[:,]' '
    /"intended_iops"/ { ii = $2 } /"achieved_iops"/ { ai = $2 }
    /"issue_error_p50_ns"/ { p50 = $2 } /"issue_error_p99_ns"/ { p99 = $2 }
    END { printf "%-8s %-6s %12.0f %12.0f %14.1f %14.1f\n", rate, procs, ii, ai, p50 / 1000, p99 / 1000 }
  ' "$dir/out.json"
done
