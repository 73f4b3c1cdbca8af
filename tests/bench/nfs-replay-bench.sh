#!/bin/bash
# nfs-replay-bench.sh — server-side NFS replay of a large capture (issue 7):
# how faithfully `iosim replay --target-dir` keeps the traced schedule with
# a pool of 1, 4 and 8 workers, how fast it goes as fast as possible, and
# that its memory stays bounded.
#
# For each stored capture in IOSIM_BENCH_NFS_CAPTURES (default: the
# NFSv3 loopback capture with READ/WRITE/COMMIT/SETATTR/CREATE, snaplen 200,
# and the NFSv3 sample with every name procedure), gen-nfs-pcap.py copies it
# with shifted times and client ports until the copy holds at least
# IOSIM_BENCH_NFS_OPS replayable operations (default 100000).  The copy is
# replayed with --allow-write onto a directory in /dev/shm (tmpfs: no root
# needed) with --timing recorded at a speed that makes the intended rate
# IOSIM_BENCH_NFS_RATE operations/s (default 20000), once per thread count
# in IOSIM_BENCH_NFS_THREADS (default "1 4 8"), then with --timing afap and
# 8 threads.  Printed per run: operations, errors, intended and achieved
# ops/s, issue error p50/p99/max (issue time minus intended time, from
# iosim's --json), the replay's own span, the command's wall time and peak
# RSS (/usr/bin/time -v; both include decoding the capture and making the
# files).  Skips (exit 77) without the iosim binary, python3, /usr/bin/time
# or the stored captures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
shared=${IOSIM_SHARED_TESTDATA:-$here/../../../shared/testdata}
captures=${IOSIM_BENCH_NFS_CAPTURES:-generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha-snap200.pcap nfs-pcap-suricata-verify/nfsv3-udp.pcap}
ops_target=${IOSIM_BENCH_NFS_OPS:-100000}
rate=${IOSIM_BENCH_NFS_RATE:-20000}
threads=${IOSIM_BENCH_NFS_THREADS:-1 4 8}
[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: /usr/bin/time not installed (apt-get install time)"; exit 77; }
[ -d /dev/shm ] || { echo "SKIP: no /dev/shm"; exit 77; }

work=$(mktemp -d /dev/shm/iosim-nfs-bench.XXXXXX)
cleanup () { rm -rf "$work"; }
trap cleanup EXIT INT TERM

# field KEY FILE: a number from iosim's --json
field () { python3 -c 'import json,sys; print(json.load(open(sys.argv[2]))[sys.argv[1]])' "$1" "$2"; }

# run LABEL ARGS...: one replay, one line of figures
run () {
  local label=$1; shift
  local json=$work/run.json
  rm -rf "$work/target"; mkdir "$work/target"
  local status=0
  /usr/bin/time -v -o "$work/time.txt" "$bin" replay "$big" --target-dir "$work/target" \
      --allow-write --json "$json" "$@" > "$work/out.txt" 2> "$work/err.txt" || status=$?
  if [ ! -s "$json" ]; then
    echo "  $label: iosim replay failed (status $status):"; sed 's/^/    /' "$work/err.txt"
    return 0
  fi
  local wall rss
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
  printf '  %-22s ops %7s errors %3s  intended %9.0f/s achieved %9.0f/s  issue error p50 %9.1f us p99 %9.1f us max %10.1f us  replay %7.3f s  wall %8s  peak RSS %7.1f MiB\n' \
    "$label" "$(field ops "$json")" "$(field errors "$json")" "$(field intended_iops "$json")" \
    "$(field achieved_iops "$json")" "$(echo "$(field issue_error_p50_ns "$json") / 1000" | bc -l)" \
    "$(echo "$(field issue_error_p99_ns "$json") / 1000" | bc -l)" \
    "$(echo "$(field issue_error_max_ns "$json") / 1000" | bc -l)" \
    "$(echo "$(field elapsed_ns "$json") / 1000000000" | bc -l)" "$wall" "$(echo "$rss / 1024" | bc -l)"
}

command -v bc >/dev/null || { echo "SKIP: bc not installed"; exit 77; }
ran=0
for cap in $captures; do
  src=$shared/$cap
  if [ ! -f "$src" ]; then
    echo "SKIP: $cap not available (IOSIM_SHARED_TESTDATA)"
    continue
  fi
  mkdir -p "$work/probe"
  per=$("$bin" replay "$src" --target-dir "$work/probe" --allow-write --dry-run \
        | sed -n 's/.* records, \([0-9]*\) operations.*/\1/p')
  copies=$(( (ops_target + per - 1) / per ))
  size_mb=$(( copies * $(stat -c %s "$src") / 1000000 + 1 ))
  big=$work/big.pcap
  python3 "$here/gen-nfs-pcap.py" "$src" "$big" "$size_mb" > /dev/null
  plan=$("$bin" replay "$big" --target-dir "$work/probe" --allow-write --dry-run)
  ops=$(echo "$plan" | sed -n 's/.* records, \([0-9]*\) operations.*/\1/p')
  span=$(echo "$plan" | sed -n 's/^  span: \([0-9.]*\) s/\1/p')
  speed=$(echo "$rate * $span / $ops" | bc -l)
  echo "$cap: $(stat -c %s "$big") bytes, $ops operations over ${span} s traced; --speed $(printf %.3f "$speed") for $rate ops/s"
  echo "$plan" | grep -E '^  name space:' || true
  for t in $threads; do
    run "recorded, threads $t" --timing recorded --speed "$speed" --threads "$t"
  done
  run "afap, threads 8" --timing afap --threads 8
  ran=1
  rm -f "$big"
done
[ $ran = 1 ] || exit 77
