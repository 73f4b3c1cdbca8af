#!/bin/bash
# emulate-kernel-facts.sh — what this kernel sends to an `iosim emulate`
# device (issue 13: do not pretend the kernel sees a queue-depth-1 disk):
# the loop device's queue limits, what FUSE negotiated, the request sizes
# that reach the emulator for O_DIRECT reads of 512 KiB, 1 MiB and 4 MiB,
# buffered reads and buffered writes, and under each elevator (none,
# mq-deadline, bfq, kyber) how many requests are in flight at the emulator
# when fio keeps 32 random 4 KiB O_DIRECT reads outstanding.  Everything is
# from the emulator's own --stats (requests as FUSE delivers them).  The
# elevator of the loop device is set per run and put back before the device
# is detached.  Needs root, /dev/fuse, /dev/loop-control, fio, python3;
# exits 77 (skip) otherwise.
#
# Command: sudo IOSIM_BIN=build/cli/iosim tests/bench/emulate-kernel-facts.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
[ -c /dev/fuse ] && [ -c /dev/loop-control ] || { echo "SKIP: no /dev/fuse or loop devices"; exit 77; }
command -v fio >/dev/null && command -v python3 >/dev/null || { echo "SKIP: needs fio and python3"; exit 77; }

work=$(mktemp -d /tmp/iosim-emulate-facts.XXXXXX)
chmod 700 "$work"
pid= dev= orig_sched=
stop () {
  if [ -n "$orig_sched" ] && [ -n "$dev" ]; then
    echo "$orig_sched" > "/sys/block/${dev#/dev/}/queue/scheduler" || true
    orig_sched=
  fi
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=
}
cleanup () { stop; rm -rf "$work"; }
trap cleanup EXIT INT TERM

start () {
  : > "$work/dev"
  "$bin" emulate --model disk-7200-sata --size 4GiB --journal-dir "$work" \
    --stats "$work/stats.json" > "$work/dev" 2> "$work/err" &
  pid=$!
  for _ in $(seq 200); do [ -s "$work/dev" ] && break; sleep 0.05; done
  [ -s "$work/dev" ] || { cat "$work/err"; echo "FAIL: iosim emulate did not start"; exit 1; }
  dev=$(head -1 "$work/dev")
}

report () {
  python3 - "$1" "$work/stats.json" <<'PY'
import json, sys
name, d = sys.argv[1], json.load(open(sys.argv[2]))
r, f = d["requests"], d["in_flight"]
sizes = ", ".join(f"{int(k)//1024} KiB x{v}" for k, v in d["request_sizes_bytes"].items())
print(f"{name:<44} reads {r['read']['count']:4d} writes {r['write']['count']:4d} "
      f"flushes {r['flush']['count']}  in flight max {f['max']:3d} mean {f['mean_at_arrival']:5.1f}"
      f"  sizes: {sizes}")
PY
}

q () { cat "/sys/block/${dev#/dev/}/queue/$1"; }

start
echo "kernel $(uname -r); loop hw_queue_depth $(cat /sys/module/loop/parameters/hw_queue_depth)"
echo "loop queue: scheduler '$(q scheduler)' nr_requests $(q nr_requests) max_sectors_kb $(q max_sectors_kb)" \
     "max_hw_sectors_kb $(q max_hw_sectors_kb) max_segments $(q max_segments)" \
     "max_segment_size $(q max_segment_size) logical_block_size $(q logical_block_size)" \
     "rotational $(q rotational) read_ahead_kb $(q read_ahead_kb) dio $(cat /sys/block/${dev#/dev/}/loop/dio)"
dd if="$dev" of=/dev/null bs=512k count=16 iflag=direct status=none
stop
python3 -c 'import json,sys; print("FUSE negotiated:", json.load(open(sys.argv[1]))["fuse"])' "$work/stats.json"
report "O_DIRECT read 512 KiB x16, one at a time"

run () { # NAME COMMAND
  start
  eval "$2" > /dev/null 2>&1
  stop
  report "$1"
}
run "O_DIRECT read 1 MiB x8, one at a time" 'dd if=$dev of=/dev/null bs=1M count=8 iflag=direct'
run "O_DIRECT read 4 MiB x4, one at a time" 'dd if=$dev of=/dev/null bs=4M count=4 iflag=direct'
run "buffered read 16 MiB (dd bs=64k)" 'dd if=$dev of=/dev/null bs=64k count=256'
run "O_DIRECT write 512 KiB x8" 'dd if=/dev/zero of=$dev bs=512k count=8 oflag=direct'
run "buffered write 8 MiB + fsync" 'dd if=/dev/zero of=$dev bs=64k count=128 conv=fsync'
for sched in none mq-deadline bfq kyber; do
  start
  orig_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "/sys/block/${dev#/dev/}/queue/scheduler")
  echo "$sched" > "/sys/block/${dev#/dev/}/queue/scheduler"
  fio --name=facts --filename="$dev" --direct=1 --ioengine=libaio --iodepth=32 --rw=randread \
    --bs=4k --size=4g --runtime=3 --time_based --output-format=terse > /dev/null
  stop
  report "$sched: fio randread 4 KiB iodepth 32, 3 s"
done
