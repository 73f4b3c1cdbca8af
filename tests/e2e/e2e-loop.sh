#!/bin/bash
# e2e-loop.sh — the whole loop on a real block device (a loop device over a
# file): drive a small workload with iosim replay while iosim capture records
# the block events through tracefs, read the capture, fit a model to it,
# simulate the fitted scenario, replay the capture, and compare simulated
# with measured latencies.  Exits 77 (skip) where the machine cannot do it.
set -euo pipefail

IOSIM=${IOSIM_BIN:?IOSIM_BIN is not set (run through meson test)}
SRC=$(cd "$(dirname "$0")" && pwd)

skip () { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root (loop devices, tracefs)"
[ -e /dev/loop-control ] || skip "no /dev/loop-control"
command -v losetup >/dev/null || skip "no losetup"
TRACEFS=/sys/kernel/tracing
# A tracefs this script mounts is unmounted again on exit, as the machine
# had none there.
MOUNTED_TRACEFS=
unmount_tracefs () {
  [ -n "$MOUNTED_TRACEFS" ] && umount "$MOUNTED_TRACEFS" 2>/dev/null || true
}
trap unmount_tracefs EXIT
if [ ! -e $TRACEFS/trace ] && mount -t tracefs nodev $TRACEFS 2>/dev/null; then
  MOUNTED_TRACEFS=$TRACEFS
fi
[ -e $TRACEFS/available_tracers ] || skip "no tracefs"
grep -qw blk $TRACEFS/available_tracers || skip "kernel has no blk tracer"

WORK=$(mktemp -d)
LOOP=
cleanup () {
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
  unmount_tracefs
}
trap cleanup EXIT
truncate -s 128M "$WORK/backing.img"
LOOP=$(losetup -f --show "$WORK/backing.img") || skip "losetup failed"
echo "loop device: $LOOP"

cd "$WORK"
echo "== simulate the workload and write it as a trace"
"$IOSIM" run "$SRC/workload.ini" --trace-out workload.blkparse -q
echo "== capture while replaying the workload on $LOOP"
"$IOSIM" capture --device "$LOOP" -o capture.txt -- \
  "$IOSIM" replay workload.blkparse --target "$LOOP" --csv first-replay.csv
echo "== trace info"
"$IOSIM" trace info capture.txt
echo "== fit"
"$IOSIM" fit capture.txt -o fitted.ini
cat fitted.ini
echo "== simulate the fitted scenario"
"$IOSIM" run fitted.ini --io-log simulated.csv
echo "== replay the capture"
"$IOSIM" replay capture.txt --target "$LOOP" --csv measured.csv --json measured.json
echo "== compare simulated with measured"
PLOT=()
command -v gnuplot >/dev/null && PLOT=(--plot compare.png)
"$IOSIM" compare simulated.csv measured.csv --cdf cdf.csv "${PLOT[@]}" | tee compare.txt
grep -qi demerit compare.txt
grep -q '^process,side,latency_ns,cum_fraction$' cdf.csv
if [ ${#PLOT[@]} -gt 0 ]; then
  [ -s compare.png ] && echo "CDF plot: $(wc -c < compare.png) bytes"
fi
# Both result files must hold every I/O of the workload.
sim_rows=$(($(wc -l < simulated.csv) - 1))
meas_rows=$(($(wc -l < measured.csv) - 1))
echo "simulated I/Os: $sim_rows, measured I/Os: $meas_rows"
[ "$sim_rows" -gt 0 ] && [ "$sim_rows" -eq "$meas_rows" ]
