#!/bin/bash
# bench-event-queue.sh — what the engine's event queue (sim/sim.c) costs per
# event, for one or more iosim binaries side by side (issue 17), not run in
# CI.  For each workload (host -n 50000, direct-read and trace -n 200000):
#  - events run (from iosim bench --json);
#  - instructions per event: callgrind's Ir inside scenario_run
#    (--toggle-collect) divided by the events, all of it and the part spent
#    in sim.c's code (callgrind's self cost of every line of sim.c, also
#    where a release build's link-time optimisation inlined it into the
#    engine's callers);
#  - the median wall seconds of IOSIM_BENCH_RUNS (default 5) plain runs,
#    which vary 2-5x on a shared machine: Ir is the figure to compare.
# Usage: tests/bench/bench-event-queue.sh BINARY...   (release builds:
# meson setup build-rel --buildtype=release, which links iosim with
# link-time optimisation), e.g. main's and a branch's.
# Exit 77 when a binary or valgrind is missing.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 IOSIM_BINARY..." >&2; exit 2; }
runs=${IOSIM_BENCH_RUNS:-5}
for bin in "$@"; do
  [ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
done
command -v valgrind >/dev/null || { echo "SKIP: no valgrind"; exit 77; }
command -v callgrind_annotate >/dev/null || { echo "SKIP: no callgrind_annotate"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/iosim-evq-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# shellcheck source=tests/bench/bench-lib.sh
. "$(dirname "$0")/bench-lib.sh"

# engine_ir FILE: the self Ir of sim.c's lines, whichever function they
# were compiled into (callgrind_annotate names each entry FILE:FUNCTION by
# the file of the code).
engine_ir () {
  callgrind_annotate --threshold=100 --auto=no "$1" 2>/dev/null \
    | awk '$0 !~ /=>/ && $0 ~ /\/sim\/sim\.c:[^ ]/ { gsub(",", "", $1); sum += $1 } END { print sum + 0 }'
}

printf '%-12s %-11s %9s %10s %9s %11s %9s\n' binary workload requests events Ir/event engine/ev "wall s"
for spec in host:50000 direct-read:200000 trace:200000; do
  w=${spec%%:*} n=${spec##*:}
  i=0
  for bin in "$@"; do
    i=$((i + 1))
    cg=$work/cg.$w.$i
    valgrind --tool=callgrind --toggle-collect=scenario_run --callgrind-out-file="$cg" \
      "$bin" bench --workload "$w" -n "$n" --json "$cg.json" >/dev/null 2>"$cg.err" \
      || { echo "FAILED: callgrind of $bin $w"; cat "$cg.err"; exit 1; }
    events=$(json_field "$cg.json" events)
    walls=()
    for ((r = 0; r < runs; r++)); do
      "$bin" bench --workload "$w" -n "$n" --json "$work/run.json" >/dev/null
      walls+=("$(json_field "$work/run.json" wall_s)")
    done
    wall=$(median "${walls[@]}")
    awk -v b="$i" -v w="$w" -v n="$n" -v e="$events" -v ir="$(callgrind_ir "$cg")" \
        -v eng="$(engine_ir "$cg")" -v wall="$wall" \
      'BEGIN { printf "%-12s %-11s %9d %10d %9.1f %11.1f %9.3f\n", "#" b, w, n, e, ir / e, eng / e, wall }'
  done
done
i=0
for bin in "$@"; do
  i=$((i + 1))
  echo "#$i = $bin"
done
