#!/bin/bash
# wbt-kernel.sh — the kernel's blk-wbt next to iosim's (sim/sim-wbt.h).
#
# A loop device on a file in /dev/shm, mq-deadline (or none), wbt_lat_usec
# set to 1 us so that every window with reads in it misses the target:
# buffered dd passes of 192 MiB (conv=fsync) next to an O_DIRECT 64 KiB
# reader, until wbt has scaled down to step 4 (at most 20 passes).
# The kernel's wbt tracepoints (a tracefs instance: wbt_step, wbt_timer) and
# /sys/block/loopN/inflight sampled every 10 ms are recorded.  The same
# stack is simulated (a loop device in front of a fixed model of 100 MB/s,
# wbt_lat_usec = 1, a buffered writer of 1 GiB with end_fsync and an
# O_DIRECT reader) with --trace-sched.
#
# What the test asserts:
#  - the new loop device's queue says what the simulation assumes for a
#    loop device: wbt_lat_usec 2000 (non-rotational at creation),
#    write_cache "write back", max_segments 128, hw_queue_depth 128;
#  - every scale step the kernel traced (direction, step, window, the
#    background / normal / max limits) that the simulation also took is
#    traced by it with the very same numbers (calc_wb_limits,
#    rq_depth_calc_max_depth with the queue depth 128, rwb_arm_timer), and
#    both scaled down to step 4 (max 1) at least once;
#  - the writes in flight at the driver never exceeded the largest
#    max_depth the kernel traced (16 before any step).
# The in-flight distribution of both is printed next to each other, for the
# eye; timing on tmpfs says nothing about a disk.
#
# Restores everything: the elevator and wbt_lat_usec are put back and, as a
# written wbt_lat_usec leaves the queue's wbt in its manual state for good
# (block/blk-wbt.c wbt_set_lat), the detached loop device is removed and
# added again through /dev/loop-control so that the next user gets a queue
# in its default state; the tracefs instance and the file go.
#
# Run it under the shared lock (other realdev runs use loop devices and
# tracefs): flock /tmp/iosim-realdev.lock meson test -C build --suite realdev
# Exits 77 (skip) with the reason without root, loop devices, tracefs with
# the wbt events, /dev/shm, python3 or $IOSIM_BIN.  About 10 s.
set -euo pipefail

skip () { echo "SKIP: $*"; exit 77; }
fail () { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (loop devices, sysfs, tracefs)"
[ -c /dev/loop-control ] || skip "no /dev/loop-control"
command -v losetup >/dev/null || skip "no losetup"
command -v python3 >/dev/null || skip "no python3"
tracing=/sys/kernel/tracing
[ -d "$tracing/events/wbt" ] || skip "no tracefs wbt events at $tracing (CONFIG_BLK_WBT, tracefs mounted)"
[ -d /dev/shm ] || skip "no /dev/shm"
bin=${IOSIM_BIN:-}
[ -n "$bin" ] && [ -x "$bin" ] || skip "IOSIM_BIN is not set to the iosim binary"

work=$(mktemp -d /tmp/iosim-wbt-kernel.XXXXXX)
img=/dev/shm/iosim-wbt-kernel.$$.img
inst=$tracing/instances/iosim-wbt-kernel-$$
dev= qd= orig_sched= orig_wbt= wbt_written=0 sampler= reader=
cleanup () {
  set +e
  [ -n "$sampler" ] && kill "$sampler" 2>/dev/null && wait "$sampler" 2>/dev/null
  [ -n "$reader" ] && kill "$reader" 2>/dev/null && wait "$reader" 2>/dev/null
  if [ -d "$inst" ]; then
    echo 0 > "$inst/tracing_on"
    echo 0 > "$inst/events/wbt/enable"
    rmdir "$inst"
  fi
  if [ -n "$dev" ]; then
    [ -n "$orig_sched" ] && echo "$orig_sched" > "$qd/scheduler"
    [ "$wbt_written" = 1 ] && [ -n "$orig_wbt" ] && echo "$orig_wbt" > "$qd/wbt_lat_usec"
    losetup -d "$dev"
    if [ "$wbt_written" = 1 ]; then
      python3 - "${dev#/dev/loop}" <<'RENEW' || echo "WARNING: could not renew $dev: its wbt state stays manual"
import fcntl, os, sys, time
LOOP_CTL_ADD, LOOP_CTL_REMOVE = 0x4C80, 0x4C81   # include/uapi/linux/loop.h
fd = os.open("/dev/loop-control", os.O_RDWR)
for _ in range(50):                                # losetup -d may still be releasing it
    try:
        fcntl.ioctl(fd, LOOP_CTL_REMOVE, int(sys.argv[1]))
        break
    except OSError:
        time.sleep(0.1)
else:
    sys.exit(1)
fcntl.ioctl(fd, LOOP_CTL_ADD, int(sys.argv[1]))
RENEW
    fi
  fi
  rm -f "$img"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

truncate -s 512M "$img"
dev=$(losetup -f --show "$img") || skip "losetup could not attach a loop device"
qd=/sys/block/${dev#/dev/}/queue
orig_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "$qd/scheduler")
orig_wbt=$(cat "$qd/wbt_lat_usec")

# What the simulation assumes of a new loop device.
echo "$dev: rotational $(cat "$qd/rotational") wbt_lat_usec $orig_wbt write_cache '$(cat "$qd/write_cache")'" \
     "max_segments $(cat "$qd/max_segments") max_sectors_kb $(cat "$qd/max_sectors_kb")" \
     "hw_queue_depth $(cat /sys/module/loop/parameters/hw_queue_depth)"
[ "$(cat "$qd/rotational")" = 0 ] || fail "a new loop device on /dev/shm is rotational"
[ "$orig_wbt" = 2000 ] || fail "wbt_lat_usec of a new loop device is $orig_wbt, the simulation assumes 2000"
[ "$(cat "$qd/write_cache")" = "write back" ] || fail "the loop device has no write-back cache"
[ "$(cat "$qd/max_segments")" = 128 ] || fail "max_segments is $(cat "$qd/max_segments"), the simulation assumes 128"
[ "$(cat /sys/module/loop/parameters/hw_queue_depth)" = 128 ] || skip "loop hw_queue_depth is not 128"

sched=mq-deadline
grep -qw mq-deadline "$qd/scheduler" || sched=none
echo "$sched" > "$qd/scheduler"
wbt_written=1
echo 1 > "$qd/wbt_lat_usec"

mkdir "$inst"
echo 8192 > "$inst/buffer_size_kb"
echo 1 > "$inst/events/wbt/wbt_step/enable"
echo 1 > "$inst/events/wbt/wbt_timer/enable"
echo 1 > "$inst/tracing_on"

# Writes in flight at the driver every 10 ms (the second field of inflight).
( while :; do awk '{ print $2 }' "/sys/block/${dev#/dev/}/inflight"; sleep 0.01; done ) \
  > "$work/inflight" &
sampler=$!
# The reader must outlast the writer: a window without reads is not a
# miss, and wbt scales such windows up (a lone dd reads the 512 MiB file
# in under a second on an idle machine).
( trap 'kill $! 2>/dev/null; exit 0' TERM
  while :; do dd if="$dev" of=/dev/null bs=64k iflag=direct 2>/dev/null & wait $!; done ) &
reader=$!
major_minor=$(cat "/sys/block/${dev#/dev/}/dev")
for _ in $(seq 20); do
  dd if=/dev/zero of="$dev" bs=64k count=3072 conv=fsync 2>/dev/null
  grep -F " $major_minor: " "$inst/trace" | grep -q "wbt_step.*step=4," && break
done
kill "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true
reader=
kill "$sampler"
wait "$sampler" 2>/dev/null || true
sampler=
echo 0 > "$inst/tracing_on"
grep -F " $major_minor: " "$inst/trace" | grep -E "wbt_(step|timer)" > "$work/kernel.txt" || true

# The same stack simulated.
cat > "$work/sim.ini" <<EOF
[sim]
duration = 5s
seed = 1
[host]
memory = 1GiB
writeback = io-less-3.2
[device d]
kind = fixed
overhead = 50us
bandwidth = 100MB/s
via = loop
sched = $sched
wbt_lat_usec = 1
[process reader]
device = d
op = read
pattern = sequential
io = direct
bs = 64KiB
[process writer]
device = d
op = write
pattern = sequential
io = buffered
bs = 64KiB
offset = 256MiB
size = 1GiB
end_fsync = true
EOF
"$bin" run "$work/sim.ini" --trace-sched "$work/sim-sched.txt" --trace-out "$work/sim-trace.txt" \
  > "$work/sim.txt" || fail "iosim run failed"

python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
def steps(lines, pat):
    out = {}
    for line in lines:
        m = re.search(pat, line)
        if m:
            msg, step, win, bg, normal, mx = m.groups()
            out.setdefault((msg.replace(" ", "_"), int(step)), set()).add(
                (int(win), int(bg), int(normal), int(mx)))
    return out
kern = steps(open(f"{work}/kernel.txt"),
             r"wbt_step: \S+ (scale up|scale down): step=(-?\d+), window=(\d+)us, "
             r"background=(\d+), normal=(\d+), max=(\d+)")
sim = steps(open(f"{work}/sim-sched.txt"),
            r"wbt_step msg=(scale_up|scale_down) step=(-?\d+) window_us=(\d+) "
            r"background=(\d+) normal=(\d+) max=(\d+)")
print("kernel steps:", sorted(kern), "\nsimulated steps:", sorted(sim))
ok = True
common = sorted(set(kern) & set(sim))
for key in common:
    print(f"  {key}: kernel {sorted(kern[key])} simulated {sorted(sim[key])}")
    if kern[key] != sim[key]:
        ok = False
for name, d in (("kernel", kern), ("simulation", sim)):
    if ("scale_down", 4) not in d:
        print(f"FAIL: the {name} never scaled down to step 4")
        ok = False
if len(common) < 4:
    print("FAIL: fewer than 4 scale steps in common")
    ok = False
# Writes in flight at the driver, sampled.
samples = [int(x) for x in open(f"{work}/inflight") if x.strip().isdigit()]
maxes = [16] + [mx for v in kern.values() for (_, _, _, mx) in v]
print(f"kernel writes in flight at the driver: {len(samples)} samples, max {max(samples or [0])}; "
      f"largest max_depth traced {max(maxes)}")
if samples and max(samples) > max(maxes):
    print("FAIL: more writes in flight than any wbt limit")
    ok = False
def hist(xs):
    n = len(xs) or 1
    return " ".join(f"{k}:{100.0 * xs.count(k) / n:.0f}%" for k in sorted(set(xs))[:8])
print("kernel, share of samples by writes in flight:", hist(samples))
at_dev, sim_w = 0, []
for line in open(f"{work}/sim-trace.txt"):
    f = line.split()
    if len(f) > 6 and f[5] in ("D", "C") and "W" in f[6]:
        at_dev += 1 if f[5] == "D" else -1
        if f[5] == "D":
            sim_w.append(at_dev)
print("simulated, share of write issues by writes in flight:", hist(sim_w))
sys.exit(0 if ok else 1)
PY
