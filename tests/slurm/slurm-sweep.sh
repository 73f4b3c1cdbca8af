#!/bin/bash
# slurm-sweep.sh — a sweep of tests/sweep/tiny.ini through a real Slurm:
# iosim sweep --emit-slurm (with its probe) writes the job array, a
# single-node Slurm 22.05 with munge started here in a temporary folder
# (slurm-cluster.sh) runs it with sbatch --wait, merge.sh merges the
# shards, and results.csv, summary.csv and their JSON are compared byte for
# byte with a local run of the same sweep.  Then two shards are deleted as
# if their tasks had failed: merge must name them, and sbatch --array=2,4
# of the same script must bring them back.  Skips (77) with the reason when
# not root, when slurm-wlm or munge is not installed, or when the daemons
# do not come up; the daemons are stopped and the folder removed on every
# exit, Ctrl-C and meson's timeout included.
set -uo pipefail

IOSIM=${IOSIM_BIN:?IOSIM_BIN is not set (run through meson test)}
HERE=$(cd "$(dirname "$0")" && pwd)
SCENARIO=$(cd "$HERE/.." && pwd)/sweep/tiny.ini
. "$HERE/slurm-cluster.sh"
# shellcheck source=tests/slurm/sweep-compare.sh
. "$HERE/sweep-compare.sh"

WORK=$(mktemp -d)
SBATCH_PID=
cleanup () {
  # sbatch --wait polls the controller: it goes first, or it outlives us.
  [ -n "$SBATCH_PID" ] && kill "$SBATCH_PID" 2>/dev/null && wait "$SBATCH_PID" 2>/dev/null
  slurm_cluster_stop
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

slurm_cluster_start "$WORK/cluster" || exit $?
echo "== Slurm up: $(sinfo -h -N -o '%N %c CPUs %m MB %t')"

fail () { echo "FAIL: $*"; [ -d "$WORK/job/logs" ] && tail -n 20 "$WORK"/job/logs/* 2>/dev/null; slurm_cluster_logs; exit 1; }

VARY_A='sched deadline.fifo_batch=1,4,16'
VARY_B='process reader.bs=4KiB,16KiB'
cd "$WORK"

echo "== iosim sweep --emit-slurm"
"$IOSIM" sweep "$SCENARIO" --vary "$VARY_A" --vary "$VARY_B" --seeds 2 -o cluster \
  --emit-slurm job --shards 4 --throttle 2 || fail "--emit-slurm"
grep -q '^#SBATCH --array=1-4%2$' job/sweep.sbatch || fail "no '--array=1-4%2' line in job/sweep.sbatch"

echo "== sbatch --wait"
# In the background and waited for, so that a TERM from meson runs the trap
# at once instead of after sbatch returns.
sbatch --wait job/sweep.sbatch &
SBATCH_PID=$!
wait $SBATCH_PID || fail "sbatch --wait: the array job failed"
SBATCH_PID=
logs=$(ls job/logs | wc -l)
[ "$logs" -eq 4 ] || fail "$logs task logs in job/logs, expected 4"
cat job/logs/*

echo "== merge.sh"
bash job/merge.sh || fail "job/merge.sh"

echo "== tasks 2 and 4 lost: merge names them, sbatch --array=2,4 runs them again"
rm cluster/shards/*-shard-[24]-of-4.*
if bash job/merge.sh > merge.err 2>&1; then
  fail "merge.sh succeeded with shards 2 and 4 missing"
fi
cat merge.err
grep -q "shards 2, 4 of 4 missing" merge.err || fail "merge.sh's error does not name shards 2 and 4"
sbatch --wait --array=2,4 job/sweep.sbatch &
SBATCH_PID=$!
wait $SBATCH_PID || fail "sbatch --wait --array=2,4: the array job failed"
SBATCH_PID=
bash job/merge.sh || fail "job/merge.sh after the second submission"

echo "== local run"
"$IOSIM" sweep "$SCENARIO" --vary "$VARY_A" --vary "$VARY_B" --seeds 2 -o local --no-plots -j 2 \
  || fail "local sweep"
sweep_files_compare local cluster "the Slurm job"
