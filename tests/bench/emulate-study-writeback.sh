#!/bin/bash
# emulate-study-writeback.sh — a reader on an emulated 7200 rpm disk while
# dd writes to an emulated USB stick, with dirty limits that bite on a
# large machine (issue 13, "What it enables", second table), next to
# iosim's io-less-3.2 simulation of the same setup with the same limits.
#   disk:  iosim emulate --model disk-7200-sata --size 8GiB \
#            --dirty-bytes 32MiB --dirty-background-bytes 8MiB
#   stick: iosim emulate --model usb-stick --size 2GiB
#   reader: fio, buffered sequential 64 KiB reads of the disk (psync,
#           the loop queue's read_ahead_kb), for a fixed time; once alone
#           and once next to the writer;
#   writer: dd if=/dev/zero of=STICK bs=1M count=N conv=fsync (buffered,
#           fsync at the end).
# vm.dirty_bytes and vm.dirty_background_bytes are lowered for the runs
# (default 32 MiB and 8 MiB) by the disk's emulator, which journals the
# originals first and puts them back when it stops; after a SIGKILL
# `iosim restore` does (the command is printed first).  The
# simulation: both devices behind `via = loop` with the loop queues'
# settings, this machine's memory, writeback = io-less-3.2 with the same
# dirty_bytes / dirty_background_bytes and the kernel's expire and
# writeback intervals; the reader with the same elevator as the kernel's
# loop queue (none by default), the writer with end_fsync.
# Printed: one markdown table (run, process, MB/s and mean latency measured
# and simulated, demerit of the reader's response times) and the kernel's
# peak Dirty + Writeback from /proc/meminfo during the run with the writer.
#
# Needs root, /dev/fuse, /dev/loop-control, fio and python3; exits 77
# (skip) with the reason otherwise.  Works in a temporary directory.
#
# Command (from the source tree, after meson compile -C build):
#   sudo IOSIM_BIN=build/cli/iosim tests/bench/emulate-study-writeback.sh
# IOSIM_STUDY_RUNTIME_S: the reader's seconds (default 20);
# IOSIM_STUDY_DD_MIB: MiB dd writes (default 128);
# IOSIM_STUDY_DIRTY_BYTES / IOSIM_STUDY_DIRTY_BG_BYTES: the lowered limits
# (sizes with units, as iosim takes them);
# IOSIM_STUDY_KEEP=1 keeps the work directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
runtime_s=${IOSIM_STUDY_RUNTIME_S:-20}
dd_mib=${IOSIM_STUDY_DD_MIB:-128}
dirty_bytes=${IOSIM_STUDY_DIRTY_BYTES:-32MiB}
dirty_bg_bytes=${IOSIM_STUDY_DIRTY_BG_BYTES:-8MiB}

[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, FUSE mount, vm sysctls)"; exit 77; }
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
[ -c /dev/loop-control ] || { echo "SKIP: no /dev/loop-control (no loop devices)"; exit 77; }
command -v fio >/dev/null || { echo "SKIP: fio not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }

vm=/proc/sys/vm
dirty_now () {
  echo "dirty_bytes $(cat $vm/dirty_bytes) dirty_background_bytes $(cat $vm/dirty_background_bytes)" \
       "dirty_ratio $(cat $vm/dirty_ratio) dirty_background_ratio $(cat $vm/dirty_background_ratio)"
}
echo "vm dirty sysctls now: $(dirty_now)"

work=$(mktemp -d /tmp/iosim-emulate-study-wb.XXXXXX)
chmod 700 "$work"
cd "$work"
# The emulators journal in $work: after a SIGKILL of this script (its
# emulators keep running: stop them first) the journal puts the limits back.
echo "if this script is killed with SIGKILL, stop its emulators, then: iosim restore --dir $work"
disk_pid= stick_pid= disk= stick= mon_pid= dd_pid=
stop_pid () { if [ -n "$1" ]; then kill -TERM "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; fi; }
cleanup () {
  stop_pid "$dd_pid"; dd_pid=
  stop_pid "$mon_pid"; mon_pid=
  stop_pid "$disk_pid"; disk_pid=
  stop_pid "$stick_pid"; stick_pid=
  cd /
  if [ "${IOSIM_STUDY_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# emulate NAME MODEL SIZE [ARGS...]: start an emulator, print its pid; the
# device node lands in NAME.dev.
emulate () {
  local name=$1 model=$2 size=$3
  shift 3
  : > "$work/$name.dev"
  "$bin" emulate --model "$model" --size "$size" --journal-dir "$work" \
    --stats "$work/$name.stats.json" "$@" > "$work/$name.dev" 2> "$work/$name.err" &
  echo $!
}
wait_dev () {
  for _ in $(seq 200); do [ -s "$work/$1.dev" ] && break; sleep 0.05; done
  [ -s "$work/$1.dev" ] || { cat "$work/$1.err"; echo "FAIL: iosim emulate ($1) did not start"; exit 1; }
  head -1 "$work/$1.dev"
}

# run NAME WITH_WRITER: fresh emulators, the reader (and dd), then stop.
run () {
  local name=$1 with=$2 d=$work/$1
  mkdir -p "$d"
  # The disk's emulator owns the dirty limits: set when it is ready, put
  # back when it stops (journaled in between).
  disk_pid=$(emulate disk disk-7200-sata 8GiB --dirty-bytes "$dirty_bytes" \
             --dirty-background-bytes "$dirty_bg_bytes"); disk=$(wait_dev disk)
  echo "$name: lowered by the disk's emulator: $(dirty_now)"
  stick_pid=$(emulate stick usb-stick 2GiB); stick=$(wait_dev stick)
  local dq=/sys/block/${disk#/dev/}/queue sq=/sys/block/${stick#/dev/}/queue
  echo "$name: disk $disk (scheduler '$(cat $dq/scheduler)' read_ahead_kb $(cat $dq/read_ahead_kb)" \
       "rotational $(cat $dq/rotational)), stick $stick (scheduler '$(cat $sq/scheduler)'" \
       "max_sectors_kb $(cat $sq/max_sectors_kb))"
  disk_ra_kb=$(cat $dq/read_ahead_kb)
  disk_sched=$(sed 's/.*\[\(.*\)\].*/\1/' $dq/scheduler)
  stick_sched=$(sed 's/.*\[\(.*\)\].*/\1/' $sq/scheduler)
  cat > "$d/reader.fio" <<EOF
[reader]
filename=$disk
ioengine=psync
rw=read
bs=64k
direct=0
invalidate=1
offset=0
size=4g
time_based=1
runtime=${runtime_s}s
log_offset=1
write_lat_log=reader
EOF
  ( while :; do awk '/^(Dirty|Writeback):/ { s += $2 } END { print s }' /proc/meminfo; sleep 0.2; done ) \
    > "$d/dirty_kib.txt" &
  mon_pid=$!
  if [ "$with" = 1 ]; then
    ( cd "$d" && exec dd if=/dev/zero of="$stick" bs=1M count="$dd_mib" conv=fsync 2> dd.txt ) &
    dd_pid=$!
  fi
  (cd "$d" && fio --output-format=json --output=fio.json reader.fio)
  [ -z "$dd_pid" ] || wait "$dd_pid"
  dd_pid=
  stop_pid "$mon_pid"; mon_pid=
  stop_pid "$disk_pid"; disk_pid=
  stop_pid "$stick_pid"; stick_pid=
}

scenario () {
  local with=$1
  cat <<EOF
# generated by tests/bench/emulate-study-writeback.sh
[host]
memory = $(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)KiB
writeback = io-less-3.2
readahead = ondemand-6.18
[writeback]
dirty_bytes = ${dirty_bytes}
dirty_background_bytes = ${dirty_bg_bytes}
dirty_expire_centisecs = $(cat $vm/dirty_expire_centisecs)
dirty_writeback_centisecs = $(cat $vm/dirty_writeback_centisecs)
[sim]
seed = 1
[device sda]
model = disk-7200-sata
queue_depth = 1
via = loop
loop_max_io = 1MiB
loop_max_background = 512
loop_rotational = false
read_ahead_kb = $disk_ra_kb
sched = $disk_sched
[device usb]
model = usb-stick
via = loop
loop_max_io = 1MiB
loop_max_background = 512
loop_rotational = false
sched = $stick_sched
[process reader]
device = sda
op = read
pattern = sequential
io = buffered
# fio's fadvise_hint (on by default): POSIX_FADV_SEQUENTIAL doubles the
# file's readahead
fadvise = sequential
bs = 64KiB
offset = 0
region = 4GiB
stop = ${runtime_s}s
EOF
  [ "$with" = 1 ] && cat <<EOF
[process dd]
device = usb
op = write
pattern = sequential
io = buffered
bs = 1MiB
size = ${dd_mib}MiB
end_fsync = true
EOF
  return 0
}

run alone 0
run with-dd 1
echo "restored by the emulator: $(dirty_now)"

for r in alone with-dd; do
  w=0; [ $r = with-dd ] && w=1
  scenario $w > "$work/$r/scenario.ini"
  "$bin" run "$work/$r/scenario.ini" --json "$work/$r/sim.json" --io-log "$work/$r/simulated.csv" \
    > "$work/$r/sim.txt"
  python3 - "$work/$r" > "$work/$r/measured.csv" <<'PY'
import glob, os, sys
print("process,pid,op,offset_bytes,bytes,issue_ns,complete_ns")
for path in glob.glob(os.path.join(sys.argv[1], "reader_clat.*.log")):
    for line in open(path):
        v = [int(x) for x in line.split(",")[:5]]
        op = {0: "read", 1: "write"}.get(v[2])
        if op:
            done = (v[0] + 1000) * 1000000
            print(f"reader,1,{op},{v[4]},{v[3]},{done - v[1]},{done}")
PY
  "$bin" compare "$work/$r/simulated.csv" "$work/$r/measured.csv" --json "$work/$r/compare.json" \
    > "$work/$r/compare.txt"
done

python3 - "$work" "$dd_mib" <<'PY'
import json, os, re, sys
work, dd_mib = sys.argv[1], int(sys.argv[2])
print()
print("| run | process | measured MB/s | simulated MB/s | measured mean latency (ms) | "
      "simulated mean latency (ms) | demerit ms (% of measured mean) |")
print("|---|---|---:|---:|---:|---:|---:|")
for r in ("alone", "with-dd"):
    d = os.path.join(work, r)
    fio = json.load(open(os.path.join(d, "fio.json")))["jobs"][0]["read"]
    sim = {p["name"]: p for p in json.load(open(os.path.join(d, "sim.json")))["runs"][0]["processes"]}
    c = json.load(open(os.path.join(d, "compare.json")))["processes"][0]
    s = sim["reader"]
    print(f"| {r} | reader | {fio['bw_bytes']/1e6:.2f} | {s['mb_per_s']:.2f} | "
          f"{fio['clat_ns']['mean']/1e6:.3f} | {s['latency_ns']['mean']/1e6:.3f} | "
          f"{c['demerit_ms']:.3f} ({c['demerit_pct']:.0f} %) |")
    if r == "with-dd":
        txt = open(os.path.join(d, "dd.txt")).read()
        m = re.search(r"copied, ([0-9.,]+) s", txt)
        secs = float(m.group(1).replace(",", ".")) if m else float("nan")
        s = sim.get("dd")
        print(f"| {r} | dd (conv=fsync) | {dd_mib * 1048576 / secs / 1e6:.2f} | "
              f"{s['mb_per_s'] if s else float('nan'):.2f} | - | - | - |")
notes = []
for r in ("alone", "with-dd"):
    d = os.path.join(work, r)
    peak = max([int(x) for x in open(os.path.join(d, "dirty_kib.txt")).read().split()] or [0])
    notes.append(f"{r}: kernel peak Dirty+Writeback {peak / 1024:.1f} MiB")
print()
print("; ".join(notes))
PY
