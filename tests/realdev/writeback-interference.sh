#!/bin/bash
# writeback-interference.sh — the real-kernel side of issue 4 ("Against the
# real kernel"): how much a buffered writer streaming to a slow device slows a
# reader of another, faster device.  Device A (a loop device filled with data)
# is throttled to 32 MB/s for reads; device B (a loop device holding ext4) is
# throttled to 1 MB/s for writes.  We time a buffered 128 MiB read of A alone,
# then again while `dd` streams buffered writes to a file on B, and print both
# times, the slowdown factor, the page-cache figures the simulator needs
# (Dirty/Writeback peaks, dirty thresholds, dirty_* sysctls) and a last line
# `slowdown_factor: X.XX`.
#
# Throttling: the cgroup v1 blkio controller (rules on the root cgroup, where
# the kernel's flusher threads live, so writeback is throttled too) or, failing
# that, cgroup v2 io.max on a child cgroup with io and memory enabled (cgroup
# writeback).  Both throttles are checked by measurement before the figures are
# trusted: the solo read must run within ±25 % of the read rate, and a probe
# written back by the flusher (syncfs) within ±25 % of the write rate.
#
# What the test asserts: the setup works (both throttles measured in range, the
# writer really dirtied pages before the read, the read under the writer still
# obeys the read throttle), and the simulator agrees: the same setup is
# simulated with the io-less-3.2 era (this machine's memory size, dirty
# sysctls and A's read_ahead_kb and scheduler; A and B as fixed-rate devices
# at the throttles' rates; the same reader, writer and head start), solo and
# with the writer, and the simulated slowdown factor must be within 10 % of
# the measured one.  The simulated runs use $IOSIM_BIN (set by meson) and
# python3 to read their JSON; without them the comparison is skipped.
#
# Reading the result: the summary gives the machine's memory, dirty limits and
# where the writer sleeps.  On a large-memory machine the writer never reaches
# the global dirty threshold; it stalls instead in ext4_nonda_switch (B nearly
# full of delayed allocations), so the reader is not slowed (factor near 1).
#
# Exits 77 with "SKIP: reason" without root, loop devices, mkfs.ext4 or a
# throttle that measurably applies.  Cleanup (throttle rules, mounts, loop
# devices, cgroup, temp files) runs on every exit.  Runtime about 20 s.
#
# Environment (defaults from the issue):
#   IOSIM_WBI_READ_MIB    MiB read from A                    (128)
#   IOSIM_WBI_A_MIB       size of A in MiB                   (256)
#   IOSIM_WBI_B_MIB       size of B (ext4) in MiB            (512)
#   IOSIM_WBI_READ_BPS    read throttle on A, bytes/s        (32000000)
#   IOSIM_WBI_WRITE_BPS   write throttle on B, bytes/s       (1000000)
#   IOSIM_WBI_WARMUP_S    writer head start before the read  (5)
#   IOSIM_WBI_TMPDIR      where the backing files go         (/var/tmp)
set -euo pipefail

READ_MIB=${IOSIM_WBI_READ_MIB:-128}
A_MIB=${IOSIM_WBI_A_MIB:-256}
B_MIB=${IOSIM_WBI_B_MIB:-512}
READ_BPS=${IOSIM_WBI_READ_BPS:-32000000}
WRITE_BPS=${IOSIM_WBI_WRITE_BPS:-1000000}
WARMUP_S=${IOSIM_WBI_WARMUP_S:-5}
TMP_PARENT=${IOSIM_WBI_TMPDIR:-/var/tmp}
# How far a measured rate may stray from its throttle before we conclude the
# throttle does not apply (the read includes readahead and slice rounding).
TOL_PCT=25

skip () { echo "SKIP: $*"; exit 77; }
fail () { echo "FAIL: $*"; exit 1; }

for v in READ_MIB A_MIB B_MIB READ_BPS WRITE_BPS WARMUP_S; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || fail "$v must be a positive integer, got '${!v}'"
done
[ "$READ_MIB" -le "$A_MIB" ] || fail "READ_MIB ($READ_MIB) exceeds A_MIB ($A_MIB)"

[ "$(id -u)" = 0 ] || skip "needs root (loop devices, cgroup throttling, drop_caches)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control"
for tool in losetup blockdev mkfs.ext4 mount umount dd awk; do
  command -v "$tool" >/dev/null || skip "no $tool"
done
[ -w /proc/sys/vm/drop_caches ] || skip "cannot write /proc/sys/vm/drop_caches"

now () { date +%s.%N; }
# calc EXPR: floating-point arithmetic through awk (bc is not everywhere).
calc () { awk "BEGIN { printf \"%.6f\", $1 }"; }
mb () { awk -v x="$1" 'BEGIN { printf "%.2f", x / 1e6 }'; }  # bytes -> MB, 2 decimals
in_range () {  # in_range RATE TARGET: is RATE within ±TOL_PCT % of TARGET?
  awk -v r="$1" -v t="$2" -v p="$TOL_PCT" \
    'BEGIN { exit !(r >= t * (100 - p) / 100 && r <= t * (100 + p) / 100) }'
}
sysblk () { echo "/sys/block/$(basename "$1")"; }
written_sectors () { awk '{ print $7 }' "$(sysblk "$1")/stat"; }
meminfo_kib () { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
vmstat_val () { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# --- throttle backend: cgroup v1 blkio, else cgroup v2 io.max --------------
BACKEND=
V1_DIR=$(awk '$3 == "cgroup" && $4 ~ /(^|,)blkio(,|$)/ { print $2; exit }' /proc/mounts)
V2_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$V1_DIR" ] && [ -w "$V1_DIR/blkio.throttle.read_bps_device" ]; then
  BACKEND=v1
elif [ -n "$V2_ROOT" ] && grep -qw io "$V2_ROOT/cgroup.controllers" 2>/dev/null \
     && grep -qw memory "$V2_ROOT/cgroup.controllers" 2>/dev/null; then
  BACKEND=v2
else
  skip "no throttle: neither a cgroup v1 blkio hierarchy nor cgroup v2 with io and memory controllers"
fi

WORK=
MNT=
LOOP_A=
LOOP_B=
MM_A=
MM_B=
CG=
V2_ENABLED=()
WRITER_PID=
SAMPLER_PID=

stop_pid () {
  [ -n "$1" ] || return 0
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# Lifting the throttles comes before anything that waits on B's writeback
# (stopping a writer that waits on it, deleting the file, umount):
# hundreds of MiB queued at 1 MB/s would otherwise take minutes to drain.
lift_throttles () {
  if [ "$BACKEND" = v1 ]; then
    [ -z "$MM_A" ] || echo "$MM_A 0" > "$V1_DIR/blkio.throttle.read_bps_device"
    [ -z "$MM_B" ] || echo "$MM_B 0" > "$V1_DIR/blkio.throttle.write_bps_device"
  elif [ -n "$CG" ] && [ -d "$CG" ]; then
    for mm in $MM_A $MM_B; do echo "$mm rbps=max wbps=max" > "$CG/io.max"; done
  fi
}

cleanup () {
  set +e
  stop_pid "$SAMPLER_PID"
  lift_throttles
  stop_pid "$WRITER_PID"
  # Deleting the stream file discards its remaining dirty pages.
  [ -n "$MNT" ] && rm -f "$MNT/stream" "$MNT/probe"
  [ -n "$MNT" ] && mountpoint -q "$MNT" && umount "$MNT"
  [ -n "$LOOP_B" ] && losetup -d "$LOOP_B"
  [ -n "$LOOP_A" ] && losetup -d "$LOOP_A"
  if [ -n "$CG" ] && [ -d "$CG" ]; then
    while read -r pid; do echo "$pid" > "$V2_ROOT/cgroup.procs"; done < "$CG/cgroup.procs"
    rmdir "$CG"
    for c in "${V2_ENABLED[@]}"; do echo "-$c" > "$V2_ROOT/cgroup.subtree_control"; done
  fi
  [ -n "$WORK" ] && rm -rf "$WORK"
} 2>/dev/null
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_exec CMD...: replace this (sub)shell by CMD, placed where the throttle
# applies to it; run CMD...: the same in a child, waited for.
run_exec () {
  if [ "$BACKEND" = v2 ]; then
    exec bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$CG" "$@"
  fi
  exec "$@"
}
run () { ( run_exec "$@" ); }

# --- devices ---------------------------------------------------------------
[ -d "$TMP_PARENT" ] || TMP_PARENT=/tmp
WORK=$(mktemp -d -p "$TMP_PARENT" iosim-wbi.XXXXXX)
BACKING_FS=$(stat -f -c %T "$WORK")
MNT=$WORK/mnt
mkdir "$MNT"

head -c "$((A_MIB * 1048576))" /dev/urandom > "$WORK/a.img"
sync "$WORK/a.img"
truncate -s "${B_MIB}M" "$WORK/b.img"

attach () {  # attach FILE: a loop device over FILE, direct I/O when possible
  losetup -f --show --direct-io=on "$1" 2>/dev/null || losetup -f --show "$1"
}
LOOP_A=$(attach "$WORK/a.img") || skip "losetup failed"
LOOP_B=$(attach "$WORK/b.img") || skip "losetup failed"
MM_A=$(cat "$(sysblk "$LOOP_A")/dev")
MM_B=$(cat "$(sysblk "$LOOP_B")/dev")
DIO_A=$(cat "$(sysblk "$LOOP_A")/loop/dio" 2>/dev/null || echo "?")
DIO_B=$(cat "$(sysblk "$LOOP_B")/loop/dio" 2>/dev/null || echo "?")

# Inode tables and journal written now, so no lazy-init thread competes with
# the writer for B's throttled bandwidth later.
mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0,nodiscard "$LOOP_B" \
  || fail "mkfs.ext4 on $LOOP_B failed"
mount -o noinit_itable "$LOOP_B" "$MNT" || skip "cannot mount ext4 from $LOOP_B"

# --- throttles -------------------------------------------------------------
if [ "$BACKEND" = v1 ]; then
  echo "$MM_A $READ_BPS" > "$V1_DIR/blkio.throttle.read_bps_device"
  echo "$MM_B $WRITE_BPS" > "$V1_DIR/blkio.throttle.write_bps_device"
  BACKEND_DESC="cgroup v1 blkio, rules on the root cgroup $V1_DIR"
else
  CG=$V2_ROOT/iosim-wbi.$$
  mkdir "$CG"
  for c in memory io; do
    if ! grep -qw "$c" "$V2_ROOT/cgroup.subtree_control"; then
      echo "+$c" > "$V2_ROOT/cgroup.subtree_control" || skip "cannot enable the $c controller"
      V2_ENABLED+=("$c")
    fi
  done
  echo "$MM_A rbps=$READ_BPS" > "$CG/io.max"
  echo "$MM_B wbps=$WRITE_BPS" > "$CG/io.max"
  BACKEND_DESC="cgroup v2 io.max on $CG"
fi

# Writeback throttle check: the flusher writes a probe back (syncfs queues
# the work to the flusher threads); B's written sectors over the time taken
# must come out near the write rate.
PROBE_MIB=$(( (3 * WRITE_BPS + 1048575) / 1048576 ))
run dd if=/dev/zero of="$MNT/probe" bs=1M count="$PROBE_MIB" status=none
s0=$(written_sectors "$LOOP_B")
t0=$(now)
sync -f "$MNT/probe"
t1=$(now)
s1=$(written_sectors "$LOOP_B")
PROBE_S=$(calc "$t1 - $t0")
PROBE_RATE=$(calc "($s1 - $s0) * 512 / $PROBE_S")
rm -f "$MNT/probe"
in_range "$PROBE_RATE" "$WRITE_BPS" \
  || skip "the write throttle does not apply to writeback ($BACKEND_DESC): probe written back at $(mb "$PROBE_RATE") MB/s, throttle $(mb "$WRITE_BPS") MB/s"

# read_a: drop A's cached pages and time a buffered read of READ_MIB from A.
read_a () {
  local t0 t1
  t0=$(now)
  run dd if="$LOOP_A" of=/dev/null bs=1M count="$READ_MIB" status=none
  t1=$(now)
  calc "$t1 - $t0"
}
drop_a_cache () {
  blockdev --flushbufs "$LOOP_A"
  echo 3 > /proc/sys/vm/drop_caches
}
READ_BYTES=$((READ_MIB * 1048576))

# --- (a) solo ----------------------------------------------------------------
drop_a_cache
SOLO_S=$(read_a)
SOLO_RATE=$(calc "$READ_BYTES / $SOLO_S")
in_range "$SOLO_RATE" "$READ_BPS" \
  || skip "the read throttle does not apply ($BACKEND_DESC): solo read at $(mb "$SOLO_RATE") MB/s, throttle $(mb "$READ_BPS") MB/s"

# --- (b) with a buffered writer streaming to B --------------------------------
drop_a_cache
SAMPLES=$WORK/meminfo.samples
( while :; do
    echo "$(meminfo_kib Dirty) $(meminfo_kib Writeback)"
    sleep 0.2
  done ) > "$SAMPLES" &
SAMPLER_PID=$!
( run_exec dd if=/dev/zero of="$MNT/stream" bs=1M status=none 2>"$WORK/writer.err" ) &
WRITER_PID=$!
sleep "$WARMUP_S"
WRITER_MIB_START=$(( $(stat -c %s "$MNT/stream" 2>/dev/null || echo 0) / 1048576 ))
THRESH_PAGES=$(vmstat_val nr_dirty_threshold)
BG_THRESH_PAGES=$(vmstat_val nr_dirty_background_threshold)
DIRTY_START_KIB=$(meminfo_kib Dirty)
WB_START_KIB=$(meminfo_kib Writeback)
sb0=$(written_sectors "$LOOP_B")
WITH_S=$(read_a)
sb1=$(written_sectors "$LOOP_B")
WRITER_MIB_END=$(( $(stat -c %s "$MNT/stream") / 1048576 ))
if kill -0 "$WRITER_PID" 2>/dev/null; then
  # Where the writer sleeps tells which mechanism holds it: balance_dirty_pages
  # (dirty throttling), or e.g. ext4_nonda_switch's wb_wait_for_completion when
  # B is nearly full of delayed allocations.
  WRITER_STATE="alive at the read's end, state $(awk '{ print $3 }' "/proc/$WRITER_PID/stat" 2>/dev/null || echo "?")"
  WRITER_STATE+=", waiting in $(cat "/proc/$WRITER_PID/wchan" 2>/dev/null || echo "?")"
else
  WRITER_STATE="had stopped before the read ended ($(tr -d '\n' < "$WORK/writer.err" | cut -c1-80))"
fi
stop_pid "$SAMPLER_PID"; SAMPLER_PID=
lift_throttles
stop_pid "$WRITER_PID"; WRITER_PID=
rm -f "$MNT/stream"
WITH_RATE=$(calc "$READ_BYTES / $WITH_S")
B_RATE=$(calc "($sb1 - $sb0) * 512 / $WITH_S")
read -r PEAK_DIRTY_KIB PEAK_WB_KIB < <(awk '
  $1 > d { d = $1 } $2 > w { w = $2 } END { print d + 0, w + 0 }' "$SAMPLES")
SLOWDOWN=$(awk -v a="$SOLO_S" -v b="$WITH_S" 'BEGIN { printf "%.2f", b / a }')

mib () { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
pages_mib () { awk -v p="$1" -v s="$(getconf PAGESIZE)" 'BEGIN { printf "%.1f", p * s / 1048576 }'; }

echo "== writeback interference, kernel $(uname -r)"
echo "machine:     MemTotal $(mib "$(meminfo_kib MemTotal)") MiB, dirty_ratio $(cat /proc/sys/vm/dirty_ratio)," \
     "dirty_background_ratio $(cat /proc/sys/vm/dirty_background_ratio)," \
     "dirty_bytes $(cat /proc/sys/vm/dirty_bytes), dirty_background_bytes $(cat /proc/sys/vm/dirty_background_bytes)," \
     "dirty_expire_centisecs $(cat /proc/sys/vm/dirty_expire_centisecs)," \
     "dirty_writeback_centisecs $(cat /proc/sys/vm/dirty_writeback_centisecs)"
echo "thresholds:  nr_dirty_threshold $THRESH_PAGES pages ($(pages_mib "$THRESH_PAGES") MiB)," \
     "nr_dirty_background_threshold $BG_THRESH_PAGES pages ($(pages_mib "$BG_THRESH_PAGES") MiB)"
echo "throttle:    $BACKEND_DESC"
echo "devices:     A $LOOP_A ($MM_A, ${A_MIB} MiB, read $READ_BPS B/s, dio $DIO_A)," \
     "B $LOOP_B ($MM_B, ${B_MIB} MiB ext4, write $WRITE_BPS B/s, dio $DIO_B), backing fs $BACKING_FS"
echo "write probe: ${PROBE_MIB} MiB written back by the flusher at $(mb "$PROBE_RATE") MB/s in $(printf %.2f "$PROBE_S") s"
printf 'solo read:   %d MiB in %.2f s (%.1f MB/s)\n' "$READ_MIB" "$SOLO_S" "$(mb "$SOLO_RATE")"
printf 'with writer: %d MiB in %.2f s (%.1f MB/s)\n' "$READ_MIB" "$WITH_S" "$(mb "$WITH_RATE")"
echo "writer:      ${WRITER_MIB_START} MiB written after ${WARMUP_S} s head start, $((WRITER_MIB_END - WRITER_MIB_START)) MiB more during the read;" \
     "$WRITER_STATE"
echo "page cache:  at read start Dirty $(mib "$DIRTY_START_KIB") MiB, Writeback $(mib "$WB_START_KIB") MiB;" \
     "peak Dirty $(mib "$PEAK_DIRTY_KIB") MiB, peak Writeback $(mib "$PEAK_WB_KIB") MiB (system-wide /proc/meminfo)"
echo "device B:    $(awk -v s="$((sb1 - sb0))" 'BEGIN { printf "%.1f", s * 512 / 1048576 }') MiB written during the read ($(mb "$B_RATE") MB/s)"

# The setup must really have made the interference possible.
[ "$WRITER_MIB_START" -gt 0 ] || fail "the writer dirtied nothing before the read started"
awk -v r="$WITH_RATE" -v t="$READ_BPS" -v p="$TOL_PCT" 'BEGIN { exit !(r <= t * (100 + p) / 100) }' \
  || fail "the read under the writer ran faster than the read throttle allows (A's data cached?)"

echo "slowdown_factor: $SLOWDOWN"

# --- the same setup in the simulator ------------------------------------------
if [ -z "${IOSIM_BIN:-}" ] || [ ! -x "${IOSIM_BIN:-}" ] || ! command -v python3 >/dev/null; then
  echo "simulation: skipped (IOSIM_BIN or python3 missing)"
  exit 0
fi
A_SCHED=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$(sysblk "$LOOP_A")/queue/scheduler")
A_RA_KB=$(cat "$(sysblk "$LOOP_A")/queue/read_ahead_kb")
SOLO_EXPECT_S=$(( READ_MIB * 1048576 / READ_BPS + 1 ))
SIM_DURATION_S=$(( WARMUP_S + 8 * SOLO_EXPECT_S + 10 ))
# sim_scenario WITH_WRITER: the scenario text (devices at the throttle rates).
sim_scenario () {
  local dirty_bytes dirty_bg_bytes
  dirty_bytes=$(cat /proc/sys/vm/dirty_bytes)
  dirty_bg_bytes=$(cat /proc/sys/vm/dirty_background_bytes)
  cat <<SCEN
# Generated by writeback-interference.sh: the measured setup, simulated.
[host]
memory = $(meminfo_kib MemTotal)KiB
writeback = io-less-3.2
[writeback]
dirty_ratio = $(cat /proc/sys/vm/dirty_ratio)
dirty_background_ratio = $(cat /proc/sys/vm/dirty_background_ratio)
dirty_expire_centisecs = $(cat /proc/sys/vm/dirty_expire_centisecs)
dirty_writeback_centisecs = $(cat /proc/sys/vm/dirty_writeback_centisecs)
SCEN
  [ "$dirty_bytes" = 0 ] || echo "dirty_bytes = ${dirty_bytes}B"
  [ "$dirty_bg_bytes" = 0 ] || echo "dirty_background_bytes = ${dirty_bg_bytes}B"
  cat <<SCEN
[sim]
duration = ${SIM_DURATION_S}s
seed = 1
[device a]
kind = fixed
overhead = 0.1ms
bandwidth = $(awk -v r="$READ_BPS" 'BEGIN { printf "%.6f", r / 1e6 }')MB/s
sched = $A_SCHED
read_ahead_kb = $A_RA_KB
[device b]
kind = fixed
overhead = 0.1ms
bandwidth = $(awk -v r="$WRITE_BPS" 'BEGIN { printf "%.6f", r / 1e6 }')MB/s
sched = none
[process reader]
device = a
io = buffered
bs = 1MiB
size = ${READ_MIB}MiB
start = ${WARMUP_S}s
SCEN
  if [ "$1" = 1 ]; then
    cat <<SCEN
[process writer]
device = b
op = write
io = buffered
bs = 1MiB
size = $((B_MIB - 64))MiB
SCEN
  fi
}
# sim_read_s WITH_WRITER: simulated seconds the reader took.
sim_read_s () {
  local ini=$WORK/sim-$1.ini
  sim_scenario "$1" > "$ini"
  "$IOSIM_BIN" run -q --json "$WORK/sim-$1.json" "$ini" || fail "iosim run $ini failed"
  python3 - "$WORK/sim-$1.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
reader = next(p for p in run["processes"] if p["name"] == "reader")
if reader["mb_per_s"] <= 0:
    sys.exit("the simulated reader read nothing")
print("%.6f" % (reader["bytes"] / (reader["mb_per_s"] * 1e6)))
PY
}
SIM_SOLO_S=$(sim_read_s 0)
SIM_WITH_S=$(sim_read_s 1)
SIM_SLOWDOWN=$(awk -v a="$SIM_SOLO_S" -v b="$SIM_WITH_S" 'BEGIN { printf "%.2f", b / a }')
printf 'simulated:   io-less-3.2, solo %.2f s, with writer %.2f s, slowdown_factor %s (measured %s)\n' \
  "$SIM_SOLO_S" "$SIM_WITH_S" "$SIM_SLOWDOWN" "$SLOWDOWN"
awk -v m="$SLOWDOWN" -v s="$SIM_SLOWDOWN" 'BEGIN { d = s - m; if (d < 0) d = -d; exit !(d <= 0.10 * m) }' \
  || fail "simulated slowdown $SIM_SLOWDOWN is not within 10 % of the measured $SLOWDOWN"
echo "simulation agrees within 10 %"
