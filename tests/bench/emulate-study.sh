#!/bin/bash
# emulate-study.sh — the kernel's elevators on an emulated 7200 rpm disk
# next to iosim's simulation of the same stack (issue 13, "What it
# enables").  On `iosim emulate --model disk-7200-sata --size 8GiB` (a
# fresh emulator per run, so every run starts from the same head position
# and cache state, as the simulation does), under the kernel's bfq,
# mq-deadline, kyber and none (set in /sys/block/loopN/queue/scheduler),
# fio runs three workloads on the raw device for a fixed time:
#   dump    four processes reading interleaved 64 KiB chunks of one 2 GiB
#           region (dump(8) style: fio rw=read:192k, offset i*64k),
#           O_DIRECT, one request each at a time; the simulated readers
#           start in the order, and at the offsets in time, in which
#           their first requests reached the emulator (fio starts its
#           jobs in whatever order its forks get the CPUs, and each
#           reader keeps its place in the round after that);
#   seqrand one sequential reader (64 KiB, O_DIRECT) against one random
#           reader (4 KiB, O_DIRECT, over the whole 8 GiB), both psync;
#   rw      a sequential reader (64 KiB, O_DIRECT) next to a buffered
#           writer (64 KiB sequential writes through the page cache to
#           another region of the device, 512 MiB, fsync at the end);
#           once more under mq-deadline with the kernel's writeback
#           throttling off (wbt_lat_usec = 0).
# The same processes are then simulated by `iosim run` on a generated
# scenario (disk-7200-sata behind `via = loop`, the same offsets, sizes
# and I/O kinds, this machine's memory and dirty sysctls for the writer,
# io-less-3.2 writeback, the loop queue's wbt_lat_usec as read during the
# run: 0 where wbt is off, under bfq too; for rw the reader stops after
# the run time and the writer runs to the end of its fsync, as fio's jobs
# do), and `iosim compare` gives the demerit of the
# simulated response times against fio's per-I/O completion latencies
# (--write_lat_log, clat, converted to iosim's results CSV).
# Printed per run: what reached the emulator (its timing error, request
# sizes, depth in flight, the share of requests that continue the previous
# one, the first arrivals in 64 KiB chunks: the dump pattern), then one
# markdown table: workload, elevator, process, MB/s and mean latency
# measured and simulated, demerit.  Nothing is tuned towards the
# measurement: the scenario states the stack as the kernel shows it
# (loop_rotational from the loop queue's rotational flag, wbt_lat_usec
# from its wbt_lat_usec).
#
# Needs root, /dev/fuse, /dev/loop-control, fio and python3; exits 77
# (skip) with the reason otherwise.  Works in a temporary directory (fio
# writes its logs into its cwd) and stops the emulator on every path,
# putting back the loop queue's elevator and wbt_lat_usec first (a loop
# device keeps them after it is detached).
#
# Command (from the source tree, after meson compile -C build):
#   sudo IOSIM_BIN=build/cli/iosim tests/bench/emulate-study.sh
# IOSIM_STUDY_RUNTIME_S: seconds per run (default 15; 13 runs, about 4 min);
# IOSIM_STUDY_KEEP=1 keeps the work directory (logs, scenarios, JSON);
# IOSIM_STUDY_WORKLOADS / IOSIM_STUDY_ELEVATORS: subsets (space-separated).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
runtime_s=${IOSIM_STUDY_RUNTIME_S:-15}
workloads=${IOSIM_STUDY_WORKLOADS:-dump seqrand rw}
elevators=${IOSIM_STUDY_ELEVATORS:-bfq mq-deadline kyber none}
model=disk-7200-sata
size=8GiB

[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, FUSE mount)"; exit 77; }
[ -c /dev/fuse ] || { echo "SKIP: no /dev/fuse"; exit 77; }
[ -c /dev/loop-control ] || { echo "SKIP: no /dev/loop-control (no loop devices)"; exit 77; }
command -v fio >/dev/null || { echo "SKIP: fio not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }

work=$(mktemp -d /tmp/iosim-emulate-study.XXXXXX)
chmod 700 "$work"
cd "$work"
pid= dev= orig_sched= orig_wbt= wbt_written=0
# A loop device keeps its queue settings after it is detached (the next
# user of /dev/loopN would inherit them): put back the elevator and the
# writeback-throttling latency before the emulator detaches it.  Writing
# wbt_lat_usec also turns the queue's wbt state from "default" to
# "manual" for good (block/blk-wbt.c wbt_set_min_lat), so that bfq no
# longer switches wbt off (wbt_disable_default acts on the default state
# only): after such a run the detached loop device is removed and added
# again through /dev/loop-control, which gives a queue in its default
# state (LOOP_CTL_REMOVE fails with EBUSY if someone attached it
# meanwhile; then it is reported and left).
renew_loop () {
  python3 - "${1#/dev/loop}" <<'RENEW' || echo "WARNING: could not renew $1: its wbt state stays manual"
import fcntl, os, sys
LOOP_CTL_ADD, LOOP_CTL_REMOVE = 0x4C80, 0x4C81   # include/uapi/linux/loop.h
fd = os.open("/dev/loop-control", os.O_RDWR)
fcntl.ioctl(fd, LOOP_CTL_REMOVE, int(sys.argv[1]))
fcntl.ioctl(fd, LOOP_CTL_ADD, int(sys.argv[1]))
RENEW
}
stop_emulator () {
  local qd=/sys/block/${dev#/dev/}/queue
  if [ -n "$orig_sched" ]; then echo "$orig_sched" > "$qd/scheduler" || true; fi
  if [ "$wbt_written" = 1 ] && [ -n "$orig_wbt" ]; then echo "$orig_wbt" > "$qd/wbt_lat_usec" || true; fi
  orig_sched= orig_wbt=
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  pid=
  if [ "$wbt_written" = 1 ]; then renew_loop "$dev"; wbt_written=0; fi
}
cleanup () {
  stop_emulator
  cd /
  if [ "${IOSIM_STUDY_KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_emulator DIR: serve the model; sets pid and dev.
start_emulator () {
  local d=$1
  : > "$d/dev"
  "$bin" emulate --model "$model" --size "$size" --journal-dir "$work" \
    --stats "$d/stats.json" --requests "$d/requests.csv" > "$d/dev" 2> "$d/emulate.err" &
  pid=$!
  for _ in $(seq 200); do [ -s "$d/dev" ] && break; sleep 0.05; done
  [ -s "$d/dev" ] || { cat "$d/emulate.err"; echo "FAIL: iosim emulate did not start"; exit 1; }
  dev=$(head -1 "$d/dev")
  local qd=/sys/block/${dev#/dev/}/queue
  orig_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "$qd/scheduler")
  orig_wbt=$(cat "$qd/wbt_lat_usec" 2>/dev/null || true)
}

# fio_jobs WORKLOAD DEVICE: the fio job file.
fio_jobs () {
  local w=$1 dev=$2
  cat <<EOF
[global]
filename=$dev
ioengine=psync
bs=64k
log_offset=1
group_reporting=0
EOF
  case $w in
    dump)
      for i in 0 1 2 3; do
        cat <<EOF
[dump.$i]
rw=read:192k
direct=1
offset=$((i * 64))k
size=2g
time_based=1
runtime=${runtime_s}s
write_lat_log=dump.$i
EOF
      done ;;
    seqrand)
      cat <<EOF
[sequential]
rw=read
direct=1
offset=0
size=4g
time_based=1
runtime=${runtime_s}s
write_lat_log=sequential
[random]
rw=randread
bs=4k
direct=1
offset=0
size=8g
time_based=1
runtime=${runtime_s}s
write_lat_log=random
EOF
      ;;
    rw)
      cat <<EOF
[reader]
rw=read
direct=1
offset=0
size=4g
time_based=1
runtime=${runtime_s}s
write_lat_log=reader
[writer]
rw=write
direct=0
offset=4g
size=512m
end_fsync=1
write_lat_log=writer
EOF
      ;;
  esac
}

meminfo_kib () { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# scenario WORKLOAD ELEVATOR ROTATIONAL WBT_LAT_USEC: the iosim scenario of
# the same stack.
scenario () {
  local w=$1 e=$2 rot=$3 wbt=$4 starts=${5:-0us}
  cat <<EOF
# generated by tests/bench/emulate-study.sh: $w under $e
[sim]
seed = 1
EOF
  # fio's rw writer is not time_based: it runs to the end of its fsync,
  # past the reader's run time; the other workloads stop together.
  [ "$w" = rw ] || echo "duration = ${runtime_s}s"
  if [ "$w" = rw ]; then
    cat <<EOF
[host]
memory = $(meminfo_kib MemTotal)KiB
writeback = io-less-3.2
[writeback]
dirty_ratio = $(cat /proc/sys/vm/dirty_ratio)
dirty_background_ratio = $(cat /proc/sys/vm/dirty_background_ratio)
dirty_expire_centisecs = $(cat /proc/sys/vm/dirty_expire_centisecs)
dirty_writeback_centisecs = $(cat /proc/sys/vm/dirty_writeback_centisecs)
EOF
    local db dbb
    db=$(cat /proc/sys/vm/dirty_bytes); dbb=$(cat /proc/sys/vm/dirty_background_bytes)
    [ "$db" = 0 ] || echo "dirty_bytes = ${db}B"
    [ "$dbb" = 0 ] || echo "dirty_background_bytes = ${dbb}B"
  fi
  # The emulated stack: the model behind a loop device with direct I/O on
  # a FUSE file; FUSE max_read/max_write 256 pages, max_background as
  # iosim emulate negotiates it (see loop-disk.ini).
  cat <<EOF
[device sda]
model = $model
queue_depth = 1
via = loop
loop_max_io = 1MiB
loop_max_background = 512
loop_rotational = $rot
wbt_lat_usec = $wbt
sched = $e
EOF
  case $w in
    dump)
      cat <<EOF
[process dump]
device = sda
op = read
pattern = sequential
stream = interleaved
threads = 4
start = $starts
io = direct
bs = 64KiB
offset = 0
size = 2GiB
EOF
      ;;
    seqrand)
      cat <<EOF
[process sequential]
device = sda
op = read
pattern = sequential
io = direct
bs = 64KiB
offset = 0
region = 4GiB
[process random]
device = sda
op = read
pattern = random
io = direct
bs = 4KiB
offset = 0
region = 8GiB
EOF
      ;;
    rw)
      cat <<EOF
[process reader]
device = sda
op = read
pattern = sequential
io = direct
bs = 64KiB
offset = 0
region = 4GiB
stop = ${runtime_s}s
[process writer]
device = sda
op = write
pattern = sequential
io = buffered
bs = 64KiB
offset = 4GiB
size = 512MiB
end_fsync = true
EOF
      ;;
  esac
}

cat > "$work/study.py" <<'PY'
import glob, json, os, sys

def convert(run_dir, out):
    """fio clat logs (log_offset=1: msec, nsec, ddir, bs, offset[, prio])
    to iosim's results CSV.  fio logs each I/O at its completion with a
    millisecond time stamp: complete_ns is that time (shifted by 1 s so
    that issue_ns stays positive), issue_ns = complete_ns - latency."""
    with open(out, "w") as f:
        f.write("process,pid,op,offset_bytes,bytes,issue_ns,complete_ns\n")
        for n, path in enumerate(sorted(glob.glob(os.path.join(run_dir, "*_clat.*.log")))):
            name = os.path.basename(path).split("_clat.")[0]
            for line in open(path):
                v = [x.strip() for x in line.split(",")]
                if len(v) < 5:
                    continue
                t_ms, lat_ns, ddir, bs, off = (int(x) for x in v[:5])
                op = {0: "read", 1: "write"}.get(ddir)
                if op is None:
                    continue
                done = (t_ms + 1000) * 1000000
                f.write(f"{name},{n + 1},{op},{off},{bs},{done - lat_ns},{done}\n")

def pattern(run_dir):
    """How the I/O reached the emulator: sizes, depth, sequentiality."""
    d = json.load(open(os.path.join(run_dir, "stats.json")))
    sizes = ", ".join(f"{int(k)//1024} KiB x{v}" for k, v in d["request_sizes_bytes"].items())
    rows = open(os.path.join(run_dir, "requests.csv")).read().splitlines()
    hdr = rows[0].split(",")
    io, ib = hdr.index("offset_bytes") if "offset_bytes" in hdr else hdr.index("offset"), \
        hdr.index("bytes")
    prev_end, seq, n, first = None, 0, 0, []
    for r in rows[1:]:
        v = r.split(",")
        off, b = int(v[io]), int(v[ib])
        if len(first) < 8:
            first.append(str(off // 65536))
        if prev_end is not None:
            n += 1
            seq += off == prev_end
        prev_end = off + b
    share = 100.0 * seq / n if n else 0.0
    e = d["timing_error_ns"]
    return (f"timing error p50 {e['p50']/1e3:.0f} us p99 {e['p99']/1e3:.0f} us; "
            f"requests {sum(d['request_sizes_bytes'].values())}, sizes {sizes}; in flight max "
            f"{d['in_flight']['max']} mean {d['in_flight']['mean_at_arrival']:.2f}; "
            f"{share:.1f} % start where the previous one ended; first arrivals in 64 KiB "
            f"chunks: {' '.join(first)}")

def row(workload, elevator, run_dir):
    fio = json.load(open(os.path.join(run_dir, "fio.json")))
    sim = json.load(open(os.path.join(run_dir, "sim.json")))["runs"][0]
    cmp_ = {p["name"]: p for p in json.load(open(os.path.join(run_dir, "compare.json")))["processes"]}
    sim_p = {p["name"]: p for p in sim["processes"]}
    out = []
    for job in fio["jobs"]:
        name = job["jobname"]
        d = job["write"] if job["write"]["io_bytes"] > 0 else job["read"]
        s = sim_p.get(name)
        c = cmp_.get(name)
        out.append("| {} | {} | {} | {:.2f} | {} | {:.2f} | {} | {} |".format(
            workload, elevator.replace("+nowbt", ", wbt off"), name, d["bw_bytes"] / 1e6,
            f"{s['mb_per_s']:.2f}" if s else "-",
            d["clat_ns"]["mean"] / 1e6,
            f"{s['latency_ns']['mean'] / 1e6:.2f}" if s else "-",
            f"{c['demerit_ms']:.2f} ({c['demerit_pct']:.0f} %)" if c else "-"))
    return out

def starts(run_dir, readers=4, chunk=65536):
    """When each dump reader's first request reached the emulator, from
    the first: thread t reads chunks t, t + readers, ... (fio offset t *
    64k, rw=read:192k), so its first request is chunk t.  fio starts its
    jobs in an order its forks and the CPUs decide, and that order lasts:
    each reader reissues as its read completes."""
    rows = open(os.path.join(run_dir, "requests.csv")).read().splitlines()
    hdr = rows[0].split(",")
    io, ia = hdr.index("offset_bytes"), hdr.index("arrival_ns")
    first = {}
    for r in rows[1:]:
        v = r.split(",")
        t = int(v[io]) // chunk
        if t < readers:
            first[t] = min(first.get(t, 1 << 62), int(v[ia]))
    if len(first) < readers:
        return "0us"
    t0 = min(first.values())
    return ",".join(f"{(first[t] - t0) / 1e3:.3f}us" for t in range(readers))

cmd = sys.argv[1]
if cmd == "starts":
    print(starts(sys.argv[2]))
elif cmd == "convert":
    convert(sys.argv[2], sys.argv[3])
elif cmd == "pattern":
    print(pattern(sys.argv[2]))
elif cmd == "table":
    print("| workload | elevator | process | measured MB/s | simulated MB/s | "
          "measured mean latency (ms) | simulated mean latency (ms) | demerit ms (% of measured mean) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for arg in sys.argv[2:]:
        w, e, d = arg.split(":", 2)
        print("\n".join(row(w, e, d)))
PY

q () { cat "/sys/block/${dev#/dev/}/queue/$1"; }

echo "iosim emulate --model $model --size $size; kernel $(uname -r), $(nproc) CPUs," \
     "load $(cut -d' ' -f1-3 /proc/loadavg); ${runtime_s} s per run"
runs=()
for w in $workloads; do
  list=$elevators
  # The reader next to the writer once more with blk-wbt off
  # (wbt_lat_usec = 0): the kernel throttles writeback when reads are
  # slower than 2 ms on a non-rotational queue, except under bfq, which
  # turns wbt off itself.
  [ "$w" = rw ] && [[ " $elevators " == *" mq-deadline "* ]] && list="$list mq-deadline+nowbt"
  for e in $list; do
    sched=${e%+nowbt}
    d=$work/$w-$e
    mkdir -p "$d"
    start_emulator "$d"
    grep -qw -- "$sched" "/sys/block/${dev#/dev/}/queue/scheduler" \
      || { echo "SKIP: elevator $sched not offered by $dev ($(q scheduler))"; stop_emulator; continue; }
    echo "$sched" > "/sys/block/${dev#/dev/}/queue/scheduler"
    if [ "$e" != "$sched" ]; then
      wbt_written=1
      echo 0 > "/sys/block/${dev#/dev/}/queue/wbt_lat_usec"
    fi
    rot=$(q rotational)
    [ "$rot" = 1 ] && rot=true || rot=false
    wbt=$(q wbt_lat_usec)
    echo "$w / $e: $dev scheduler '$(q scheduler)' nr_requests $(q nr_requests)" \
         "rotational $(q rotational) wbt_lat_usec $wbt"
    fio_jobs "$w" "$dev" > "$d/jobs.fio"
    (cd "$d" && fio --output-format=json --output=fio.json jobs.fio)
    stop_emulator
    echo "  at the emulator: $(python3 "$work/study.py" pattern "$d")"
    python3 "$work/study.py" convert "$d" "$d/measured.csv"
    starts=0us
    [ "$w" = dump ] && starts=$(python3 "$work/study.py" starts "$d")
    scenario "$w" "$sched" "$rot" "$wbt" "$starts" > "$d/scenario.ini"
    "$bin" run "$d/scenario.ini" --json "$d/sim.json" --io-log "$d/simulated.csv" > "$d/sim.txt"
    "$bin" compare "$d/simulated.csv" "$d/measured.csv" --json "$d/compare.json" > "$d/compare.txt"
    runs+=("$w:$e:$d")
  done
done
echo
python3 "$work/study.py" table "${runs[@]}"
