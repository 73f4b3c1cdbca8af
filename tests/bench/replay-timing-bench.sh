#!/bin/bash
# replay-timing-bench.sh — how closely `iosim replay` keeps a trace's
# timing, next to fio's iolog replay of the same trace on the same device
# in the same run (issue 7).  For each rate in IOSIM_BENCH_RATES (default
# 10000 50000 100000 200000 IOPS) a trace of evenly spaced 4 KiB random
# reads from IOSIM_BENCH_PROCS processes (default 1) lasting
# IOSIM_BENCH_SECONDS (default 2) is replayed on a loop device over a file
# in /dev/shm by each engine (psync, psync --threads 4, io_uring, libaio,
# and io_uring and libaio again with --poll --cpus LAST --isolate: the
# submitter busy-waits and reaps on a CPU that other work is moved off)
# and by fio (--read_iolog, iolog v3 with µs times, libaio, direct; at
# our depth and at 16, IOSIM_BENCH_FIO_DEPTHS),
# the asynchronous ones and fio at one queue depth, IOSIM_BENCH_IODEPTH
# (default 128: a loop device here serves ~50k IOPS at depth 32, so a
# shallower queue measures the device, not the pacing).  Printed per run:
#  - ours: achieved IOPS and issue error p50/p99/max from iosim's own
#    per-I/O log (issue time minus intended time, absolute schedule);
#  - kernel view, for iosim and fio alike: a tracefs capture of
#    block_bio_queue on the loop device gives achieved IOPS (issue span)
#    and the issue lateness relative to the most punctual I/O (event time
#    minus intended time, less the smallest such difference: the capture
#    has no common clock with the schedule), in µs resolution.  fio has no per-I/O issue log while replaying, so
#    this is its only issue-time figure; its own iops is printed too.
# IOSIM_BENCH_REPEAT (default 1) runs every iosim engine that many times
# per rate, one round after another.
# Targets (reported, not enforced): achieved within 1 % of intended up to
# 100k IOPS, issue error p50 <= 5 us, p99 <= 50 us.  Needs root; skips
# otherwise, and skips fio or an engine that is not there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
rates=${IOSIM_BENCH_RATES:-10000 50000 100000 200000}
seconds=${IOSIM_BENCH_SECONDS:-2}
procs=${IOSIM_BENCH_PROCS:-1}
engines=${IOSIM_BENCH_ENGINES:-psync psync:4 io_uring libaio io_uring+poll libaio+poll}
# ENGINE+poll: --poll, pinned to the last CPU, isolated when there is another.
last_cpu=$(( $(nproc) - 1 ))
poll_args=(--poll --cpus "$last_cpu")
[ "$last_cpu" -ge 1 ] && poll_args+=(--isolate)
depth=${IOSIM_BENCH_IODEPTH:-128}
repeat=${IOSIM_BENCH_REPEAT:-1}
# fio at our depth, and at 16 (reference/anchors.md §G measured it there).
fio_depths=${IOSIM_BENCH_FIO_DEPTHS:-$depth 16}
[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop device, tracefs)"; exit 77; }
[ -e /dev/loop-control ] || { echo "SKIP: no /dev/loop-control"; exit 77; }
tracefs=/sys/kernel/tracing
[ -e $tracefs/events/block/block_bio_queue ] || tracefs=/sys/kernel/debug/tracing
have_trace=0
[ -e $tracefs/events/block/block_bio_queue/enable ] && have_trace=1

work=$(mktemp -d /dev/shm/iosim-replay-bench.XXXXXX)
loop=
old_clock=
old_buffer=
cleanup () {
  if [ $have_trace = 1 ]; then
    echo 0 > $tracefs/events/block/block_bio_queue/enable || true
    echo 0 > $tracefs/events/block/block_bio_queue/filter || true
    [ -n "$old_clock" ] && echo "$old_clock" > $tracefs/trace_clock || true
    [ -n "$old_buffer" ] && echo "$old_buffer" > $tracefs/buffer_size_kb || true
  fi
  [ -n "$loop" ] && losetup -d "$loop" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

truncate -s 1G "$work/backing.img"
loop=$(losetup -f --show "$work/backing.img")
# Fill the backing file so that reads find pages, not holes.
dd if=/dev/zero of="$loop" bs=1M count=1024 oflag=direct status=none
devt=$(( $(stat -c '0x%t' "$loop") << 20 | $(stat -c '0x%T' "$loop") ))

if [ $have_trace = 1 ]; then
  old_clock=$(sed 's/.*\[\(.*\)\].*/\1/' $tracefs/trace_clock)
  old_buffer=$(cat $tracefs/buffer_size_kb)
  echo mono > $tracefs/trace_clock
  echo 65536 > $tracefs/buffer_size_kb
  echo "dev == $devt" > $tracefs/events/block/block_bio_queue/filter
fi

trace_start () {
  [ $have_trace = 1 ] || return 0
  echo 0 > $tracefs/tracing_on
  echo > $tracefs/trace
  echo 1 > $tracefs/events/block/block_bio_queue/enable
  echo 1 > $tracefs/tracing_on
}
trace_stop () {   # $1: output file
  [ $have_trace = 1 ] || { : > "$1"; return 0; }
  echo 0 > $tracefs/tracing_on
  echo 0 > $tracefs/events/block/block_bio_queue/enable
  grep -F 'block_bio_queue:' $tracefs/trace > "$1" || true
}

# Kernel view: the block_bio_queue times against the intended offsets of
# the trace (in order: one process, or each process's I/Os interleaved by
# time — events and intended times are both sorted).
kernel_view () {  # $1: capture, $2: intended times (ns, one a line)
  python3 - "$1" "$2" <<'EOF'
import sys
ev = []
for line in open(sys.argv[1]):
    try:
        ev.append(float(line.split(': block_bio_queue:')[0].split()[-1]) * 1e9)
    except (ValueError, IndexError):
        pass
want = [int(x) for x in open(sys.argv[2])]
if len(ev) < 2:
    print("kernel: no capture"); sys.exit(0)
ev.sort()
rate = (len(ev) - 1) * 1e9 / (ev[-1] - ev[0])
if len(ev) != len(want):
    # Lost events (buffer overrun) or foreign bios: pairing by rank would
    # compare the wrong I/Os.
    print("kernel: %d/%d bios captured, %.0f IOPS over the capture; incomplete, no lateness"
          % (len(ev), len(want), rate))
    sys.exit(0)
n = len(ev)
err = [ev[i] - want[i] for i in range(n)]
low = min(err)
err = sorted(e - low for e in err)
pct = lambda p: err[min(n - 1, max(0, int(-(-p * n // 100)) - 1))]
print("kernel: %d/%d bios, %.0f IOPS, issue lateness vs most punctual p50 %.1f us p99 %.1f us max %.1f us"
      % (len(ev), len(want), rate, pct(50) / 1e3, pct(99) / 1e3, err[-1] / 1e3))
EOF
}

printf 'rate: intended IOPS; ours: iosim per-I/O log; kernel: block_bio_queue capture (%s)\n' \
  "$([ $have_trace = 1 ] && echo on || echo 'unavailable')"
printf 'queue depth of io_uring, libaio and fio: %s; CPUs: %s\n' "$depth" "$(nproc)"
printf 'targets: achieved within 1%% up to 100k IOPS; issue error p50 <= 5 us, p99 <= 50 us\n'
# The machine's own floor: how often the last CPU is taken away from a
# thread that only reads the clock (tests/bench/spin-gaps.c).
spin_gaps=${IOSIM_SPIN_GAPS:-$here/../../build/tests/spin-gaps}
if [ -x "$spin_gaps" ]; then
  "$spin_gaps" "$last_cpu" 2
else
  echo "spin probe: not built ($spin_gaps)"
fi
for rate in $rates; do
  n=$((rate * seconds))
  echo "== $rate IOPS, $n I/Os, $procs process(es), $seconds s"
  # The same schedule three ways: ftrace blk text for iosim, iolog v3 for
  # fio, intended times for the kernel view.
  python3 - "$n" "$rate" "$procs" "$loop" "$work" <<'EOF'
import random, sys
n, rate, procs, dev, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
r = random.Random(12345)
with open(work + "/trace.txt", "w") as blk, open(work + "/trace.iolog", "w") as fio, \
     open(work + "/intended.txt", "w") as want:
    blk.write("# tracer: blk\n")
    fio.write("fio version 3 iolog\n0 %s add\n0 %s open\n" % (dev, dev))
    for i in range(n):
        sector = r.randrange(262144) * 8          # 4 KiB aligned in the first GiB
        ns = i * 1000000000 // rate
        pid = 7000 + i % procs
        t = 100 + ns / 1e9
        for ev, dt in (("Q", 0), ("D", 1e-6)):
            blk.write("%16s-%-5d [000] d..1. %.9f:   7,0    %s  RS %d + 8 [bench]\n"
                      % ("bench", pid, t + dt, ev, sector))
        blk.write("%16s-%-5d [000] d.h1. %.9f:   7,0    C  RS %d + 8 [0]\n"
                  % ("<idle>", 0, t + 2e-6, sector))
        fio.write("%d %s read %d 4096\n" % (ns // 1000, dev, sector * 512))
        want.write("%d\n" % ns)
    fio.write("%d %s close\n" % (n * 1000000 // rate, dev))
EOF
  # IOSIM_BENCH_REPEAT rounds of every engine: figures vary from run to run.
  for spec in $(for _ in $(seq "$repeat"); do echo $engines; done); do
    engine=${spec%%[:+]*}
    args=(--engine "$engine")
    case "$spec" in
      *:*) args+=(--threads "${spec#*:}") ;;
      *+poll) args+=("${poll_args[@]}") ;;
    esac
    [ "$engine" != psync ] && args+=(--iodepth "$depth")
    label="iosim $spec"
    trace_start
    if ! "$bin" replay "$work/trace.txt" --target "$loop" --json "$work/out.json" "${args[@]}" \
         > "$work/out.txt" 2> "$work/err.txt"; then
      trace_stop "$work/cap.txt"
      echo "$label: failed: $(head -1 "$work/err.txt")"
      continue
    fi
    trace_stop "$work/cap.txt"
    python3 - "$work/out.json" "$label" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ii, ai = j["intended_iops"], j["achieved_iops"]
calls = ("" if j.get("submit_call_p50_ns", 0) == 0 else
         ", submit call p50 %.1f us p99 %.1f us, most in flight %d of %d%s"
         % (j["submit_call_p50_ns"] / 1e3, j["submit_call_p99_ns"] / 1e3,
            j["max_inflight_process"], j["iodepth"],
            " (the device fell behind: I/Os waited for a slot)"
            if j["max_inflight_process"] >= j["iodepth"] else ""))
print("%-20s ours:   %d I/Os, %.0f IOPS of %.0f (%+.2f %%), issue error p50 %.1f us p99 %.1f us max %.1f us, errors %d%s"
      % (sys.argv[2], j["ios"], ai, ii, (ai / ii - 1) * 100 if ii else 0,
         j["issue_error_p50_ns"] / 1e3, j["issue_error_p99_ns"] / 1e3,
         j["issue_error_max_ns"] / 1e3, j["errors"], calls))
EOF
    printf '%-20s ' "$label"; kernel_view "$work/cap.txt" "$work/intended.txt"
  done
  if command -v fio >/dev/null; then
    for fio_depth in $fio_depths; do
      label="fio libaio qd$fio_depth"
      trace_start
      fio --name=r --read_iolog="$work/trace.iolog" --ioengine=libaio --direct=1 \
          --iodepth="$fio_depth" --filename="$loop" --output-format=json \
          --output="$work/fio.json" > /dev/null 2>&1 || true
      trace_stop "$work/cap.txt"
      python3 - "$work/fio.json" "$label" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))["jobs"][0]["read"]
    print("%-20s fio:    %d I/Os, %.0f IOPS (its own figure: I/Os over its runtime %d ms)"
          % (sys.argv[2], r["total_ios"], r["iops"], r["runtime"]))
except Exception as e:
    print("%-20s fio:    no result (%s)" % (sys.argv[2], e))
EOF
      printf '%-20s ' "$label"; kernel_view "$work/cap.txt" "$work/intended.txt"
    done
  else
    echo "fio: not installed"
  fi
done
