#!/bin/bash
# parallel-sweep.sh — the GNU parallel recipe of README "Sweeps on a
# cluster" and `iosim sweep --help`, run as written: the shards of a sweep
# of tests/sweep/tiny.ini run by GNU parallel, merged, and compared byte for
# byte with a local run of the same sweep.  Skips (77) without parallel.
set -euo pipefail

IOSIM=${IOSIM_BIN:?IOSIM_BIN is not set (run through meson test)}
SRC=$(cd "$(dirname "$0")/.." && pwd)
SCENARIO=$SRC/sweep/tiny.ini
# shellcheck source=tests/slurm/sweep-compare.sh
. "$SRC/slurm/sweep-compare.sh"

skip () { echo "SKIP: $*"; exit 77; }
command -v parallel >/dev/null || skip "GNU parallel not installed (Debian: apt-get install parallel)"
parallel --version 2>/dev/null | grep -q "GNU parallel" || skip "'parallel' on PATH is not GNU parallel (moreutils' has other options)"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM
cd "$WORK"

# Values with blanks, so the recipe's -q (quote the command for the shell
# parallel starts) is needed and tested.
VARY_A='sched deadline.fifo_batch=1,4,16'
VARY_B='process reader.bs=4KiB,16KiB'

echo "== local run"
"$IOSIM" sweep "$SCENARIO" --vary "$VARY_A" --vary "$VARY_B" --seeds 2 -o local --no-plots -j 2

echo "== 4 shards through GNU parallel, then merge"
parallel --will-cite -j 2 -q "$IOSIM" sweep "$SCENARIO" --vary "$VARY_A" --vary "$VARY_B" --seeds 2 \
  --shard {}/4 -o parts ::: $(seq 4) \
  && "$IOSIM" sweep merge parts -o final --no-plots

for i in 1 2 3 4; do
  [ -f "parts/results-shard-$i-of-4.csv" ] || { echo "FAIL: shard $i wrote nothing"; exit 1; }
done
sweep_files_compare local final "the merged shards"
