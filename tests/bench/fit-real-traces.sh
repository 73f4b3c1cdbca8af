#!/bin/bash
# fit-real-traces.sh — how well a fitted model gives back the response
# times of public traces no one here wrote (../shared/testdata): for each
# trace and each device model kind (fixed, ssd, empirical, and what auto
# chooses), `iosim fit` it, `iosim run` the scenario with seeds 1..N, and
# `iosim compare` the simulated per-I/O latencies with the trace's own
# (fit --measured).  Printed per trace and kind: the mean over seeds of the
# demerit (Ruemmler-Wilkes: RMS distance of the latency CDFs, % of the
# measured mean), of the KS distance, and of the errors of the mean, p50
# and p99, with the spread of the demerit across seeds (a heavy tail of
# 1,000 requests makes it move by half from seed to seed).
#
# Needs python3 and the shared test data ($IOSIM_SHARED_TESTDATA, default
# ../shared/testdata beside the source tree); exits 77 (skip) otherwise.
#
# Command (from the source tree, after meson compile -C build):
#   IOSIM_BIN=build/cli/iosim tests/bench/fit-real-traces.sh
# IOSIM_BENCH_SEEDS (default 5).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
seeds=${IOSIM_BENCH_SEEDS:-5}
shared=${IOSIM_SHARED_TESTDATA:-$here/../../../shared/testdata}

[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
[ -d "$shared" ] || { echo "SKIP: no shared test data at $shared"; exit 77; }

traces=(
  "snia-msr-cambridge/msr-cambridge1-sample.csv"
  "snia-systor17/systor17-traces-sample.csv.gz"
  "snia-systor17/systor17-additional-sample.csv.gz"
  "blktrace-takeoverjp-sample/sample.blktrace.0"
  "generated-block-loop-kernel6.18/ftrace-block-loop2.txt.gz"
)
work=$(mktemp -d /tmp/iosim-fit-real.XXXXXX)
trap 'rm -rf "$work"' EXIT

rows=$work/rows.txt
: > "$rows"
for t in "${traces[@]}"; do
  path=$shared/$t
  [ -f "$path" ] || { echo "$t: not present, skipped"; continue; }
  for kind in fixed ssd empirical auto; do
    if ! "$bin" fit "$path" --model "$kind" -o "$work/s.ini" --measured "$work/m.csv" \
         > "$work/fit.txt" 2>&1; then
      echo "$t $kind: fit failed: $(tail -1 "$work/fit.txt")"
      continue
    fi
    chosen=$(sed -n 's/^model kind \([a-z]*\) .*/\1/p' "$work/fit.txt" | head -1)
    for s in $(seq "$seeds"); do
      "$bin" run "$work/s.ini" --set "sim.seed=$s" --io-log "$work/p.csv" > /dev/null 2>&1
      line=$("$bin" compare "$work/p.csv" "$work/m.csv" 2>/dev/null | awk '$1 == "overall"')
      echo "$(basename "$t") $kind $chosen $line" >> "$rows"
    done
  done
done

python3 - "$rows" "$seeds" <<'PY'
import sys, statistics
rows, seeds = sys.argv[1], int(sys.argv[2])
by = {}
for line in open(rows):
    f = line.split()
    # trace kind chosen overall n_sim n_meas mean_sim mean_meas demerit demerit% mean_dist
    # ks mean% p50% p95% p99% MB/s% iops%
    key = (f[0], f[1], f[2])
    by.setdefault(key, []).append([float(x) for x in (f[9], f[11], f[12], f[13], f[15])])
print(f"\n{seeds} seeds per row; figures are means over the seeds (demerit also its range)\n")
print("| trace | asked | fitted kind | demerit % of mean [range] | KS | mean error | p50 error | p99 error |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for (trace, kind, chosen), v in by.items():
    cols = list(zip(*v))
    m = [statistics.mean(c) for c in cols]
    print(f"| {trace} | {kind} | {chosen} | {m[0]:.1f} [{min(cols[0]):.1f}, {max(cols[0]):.1f}] | "
          f"{m[1]:.3f} | {m[2]:+.1f} % | {m[3]:+.1f} % | {m[4]:+.1f} % |")
PY
