#!/bin/bash
# validate-bench.sh — `iosim validate` on a loop device over a tmpfs file
# (issue 14, "Acceptance"), one run per workload, and one markdown table of
# what it found: per workload and scheduler, predicted and measured mean
# response time, the error of the prediction, the demerit, the predicted
# and measured change from the trained scheduler with the measured 95 %
# interval, and the rankings by mean latency.
#   seq-vs-rand:  fio, a sequential 128 KiB reader next to a random 4 KiB
#                 reader in the other half of the device (O_DIRECT, psync);
#   4-readers:    fio, four sequential 128 KiB O_DIRECT readers of their
#                 own quarter;
#   writer-reader: fio, a buffered 1 MiB writer of the first half (fsync
#                 at the end) next to a 128 KiB O_DIRECT reader of the
#                 second: the target's data is overwritten (it is ours).
# The loop device is attached with losetup --find --show and detached on
# exit; validate sets and restores each scheduler itself.
#
# Needs root, losetup, a tmpfs /dev/shm, fio and jq; exits 77 (skip) with
# the reason otherwise.
#
# Command (from the source tree, after meson compile -C build):
#   sudo IOSIM_BIN=build/cli/iosim tests/bench/validate-bench.sh
# IOSIM_VALIDATE_SCHEDS (default: mq-deadline,bfq,none as far as the loop
# device's /sys/block/*/queue/scheduler offers them: a kernel without bfq
# compares mq-deadline and none; the first is trained; a list asking for a
# scheduler the kernel lacks is a skip), IOSIM_VALIDATE_REPEAT (default 3),
# IOSIM_VALIDATE_KEEP=1 keeps the work directories.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
wanted=${IOSIM_VALIDATE_SCHEDS:-mq-deadline,bfq,none}
repeat=${IOSIM_VALIDATE_REPEAT:-3}

[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, schedulers, tracefs)"; exit 77; }
command -v losetup >/dev/null || { echo "SKIP: no losetup"; exit 77; }
command -v fio >/dev/null || { echo "SKIP: fio not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq not installed"; exit 77; }
[ "$(stat -f -c %T /dev/shm)" = tmpfs ] || { echo "SKIP: /dev/shm is not a tmpfs"; exit 77; }

work=$(mktemp -d /dev/shm/iosim-validate-bench.XXXXXX)
loop=
cleanup () {
  [ -n "$loop" ] && losetup -d "$loop"
  if [ "${IOSIM_VALIDATE_KEEP:-0}" = 1 ]; then
    rm -f "$work/backing.img"
    echo "kept $work"
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT
truncate -s 256M "$work/backing.img"
loop=$(losetup --find --show "$work/backing.img")
# The schedulers this kernel offers for the device ("none [mq-deadline] kyber").
offered=$(tr -d '[]' < "/sys/block/$(basename "$loop")/queue/scheduler")
scheds=
for s in ${wanted//,/ }; do
  if [[ " $offered " == *" $s "* ]]; then
    scheds=${scheds:+$scheds,}$s
  elif [ -n "${IOSIM_VALIDATE_SCHEDS:-}" ]; then
    echo "SKIP: IOSIM_VALIDATE_SCHEDS asks for $s; this kernel offers: $offered"; exit 77
  else
    echo "note: $s is not offered by this kernel ($offered): left out"
  fi
done
[ -n "$scheds" ] || { echo "SKIP: none of $wanted is offered ($offered)"; exit 77; }
echo "target $loop (256 MiB tmpfs file), schedulers $scheds, --repeat $repeat, kernel $(uname -r)"

common="--filename=$loop --ioengine=psync --group_reporting=0 --output=/dev/null"
declare -A workloads=(
  [seq-vs-rand]="fio $common --direct=1 --name=seq --rw=read --bs=128k --offset=0 --size=128m \
--name=rand --rw=randread --bs=4k --offset=128m --size=128m --io_size=16m --randseed=1"
  [4-readers]="fio $common --direct=1 --rw=read --bs=128k --size=32m --numjobs=4 \
--offset_increment=64m --name=r"
  [writer-reader]="fio $common --name=w --rw=write --bs=1m --direct=0 --offset=0 --size=64m \
--end_fsync=1 --name=r --rw=read --bs=128k --direct=1 --offset=128m --size=64m"
)

echo
echo "| workload | sched | trained | mean pred (us) | mean meas (us) [95% CI] | error | demerit (% of mean) | change pred | change meas [95% CI] | inside | ranking pred / meas (best first, = tie) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for name in seq-vs-rand 4-readers writer-reader; do
  json=$work/$name.json
  # shellcheck disable=SC2086
  if ! "$bin" validate --target "$loop" --sched "$scheds" --repeat "$repeat" --json "$json" \
        --work-dir "$work/$name" -- ${workloads[$name]} >"$work/$name.txt" 2>"$work/$name.err"; then
    echo "| $name | validate failed: $(tail -1 "$work/$name.err") |"
    continue
  fi
  jq -r --arg w "$name" '
    def us: if . == null then "-" else (. / 1000 | . * 10 | round / 10 | tostring) end;
    def pct: if . == null then "-" else ((. * 10 | round / 10) | tostring) + "%" end;
    def ci(f): if . == null then "" else " [" + (.[0] | f) + ", " + (.[1] | f) + "]" end;
    .ranking_predicted_text as $rp | .ranking_measured_text as $rm |
    .schedulers[] |
    "| \($w) | \(.sched) | \(if .trained then "yes" else "" end) | \(.predicted.mean_latency_ns | us) | " +
    "\(.measured.mean_latency_ns | us)\(.measured.ci95.mean_latency_ns | ci(us)) | " +
    "\(.error_pct.mean_latency_ns | pct) | \(.demerit_pct | pct) | " +
    "\(.change_from_trained.mean_latency_ns.predicted_pct | pct) | " +
    "\(.change_from_trained.mean_latency_ns.measured_pct | pct)\(.change_from_trained.mean_latency_ns.measured_ci95_pct | ci(pct)) | " +
    "\(.change_from_trained.mean_latency_ns.inside | if . == null then "-" else tostring end) | \($rp) / \($rm) |"' "$json"
done
