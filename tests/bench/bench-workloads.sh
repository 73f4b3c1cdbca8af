#!/bin/bash
# bench-workloads.sh — simulator speed per `iosim bench` workload (issue
# 17), not run in CI.  For each workload (direct-read, buffered-write,
# host, trace):
#  - instructions per simulated request: callgrind's Ir inside
#    scenario_run (--toggle-collect, so building the scenario and writing
#    or parsing the trace are left out) divided by the requests; the same
#    on every run, unlike wall time, which varies 2-5x on a shared machine;
#  - wall seconds and requests/s, the median of IOSIM_BENCH_RUNS runs;
#  - requests/s relative to direct-read's (the issue's target: >= 0.5).
# Then the issue-15 figure: instructions per event of
# models/scenarios/host-lock-scaling.ini (whole program, as measured there).
# Usage: tests/bench/bench-workloads.sh [IOSIM_BINARY]   (a release build:
# meson setup build-rel --buildtype=release, whose iosim is linked with
# link-time optimisation).  IOSIM_BENCH_REQUESTS
# (default 200000) and IOSIM_BENCH_RUNS (default 3).  Exit 77 when the
# binary or valgrind is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build-rel/cli/iosim}
requests=${IOSIM_BENCH_REQUESTS:-200000}
runs=${IOSIM_BENCH_RUNS:-3}
[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/iosim-workload-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=tests/bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

printf '%-15s %9s %11s %9s %12s %9s\n' workload requests Ir/request "wall s" requests/s "vs direct"
direct_rate=
for w in direct-read buffered-write host trace; do
  valgrind --tool=callgrind --toggle-collect=scenario_run --callgrind-out-file="$work/cg.$w" \
    "$bin" bench --workload "$w" -n "$requests" --json "$work/cg.$w.json" >/dev/null 2>"$work/cg.$w.err" \
    || { echo "FAILED: callgrind of $w"; cat "$work/cg.$w.err"; exit 1; }
  ir=$(callgrind_ir "$work/cg.$w")
  done_requests=$(json_field "$work/cg.$w.json" requests)
  walls=() rates=()
  for ((i = 0; i < runs; i++)); do
    "$bin" bench --workload "$w" -n "$requests" --json "$work/run.json" >/dev/null
    walls+=("$(json_field "$work/run.json" wall_s)")
    rates+=("$(json_field "$work/run.json" requests_per_s)")
  done
  wall=$(median "${walls[@]}")
  rate=$(median "${rates[@]}")
  [ -n "$direct_rate" ] || direct_rate=$rate
  awk -v w="$w" -v n="$done_requests" -v ir="$ir" -v wall="$wall" -v rate="$rate" -v d="$direct_rate" \
    'BEGIN { printf "%-15s %9d %11.0f %9.3f %12.0f %8.2fx\n", w, n, ir / n, wall, rate, rate / d }'
done

scenario=$here/../../models/scenarios/host-lock-scaling.ini
valgrind --tool=callgrind --callgrind-out-file="$work/cg.lock" \
  "$bin" run "$scenario" --json "$work/lock.json" >/dev/null 2>"$work/cg.lock.err" \
  || { echo "FAILED: callgrind of $scenario"; cat "$work/cg.lock.err"; exit 1; }
events=$(python3 -c 'import json, sys; print(sum(r["events"] for r in json.load(open(sys.argv[1]))["runs"]))' \
  "$work/lock.json")
awk -v ir="$(callgrind_ir "$work/cg.lock")" -v e="$events" \
  'BEGIN { printf "host-lock-scaling.ini: %d events, %.1f instructions per event\n", e, ir / e }'
