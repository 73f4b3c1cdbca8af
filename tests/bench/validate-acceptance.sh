#!/bin/bash
# validate-acceptance.sh — issue 14's acceptance table: `iosim validate` on
# every target this machine offers, for every workload, and whether each
# criterion holds:
#   targets   tmpfs    a loop device on a file in /dev/shm (256 MiB)
#             virtio   a loop device with direct I/O on a file of the root
#                      file system (the VM's virtio disk; 1 GiB, sparse)
#             disk     iosim emulate --model disk-7200-sata (8 GiB)
#             usb      iosim emulate --model usb-stick (1 GiB)
#   workloads seqrand  a sequential 64 KiB reader against a random 4 KiB
#                      reader, O_DIRECT, psync;
#             dump     four readers of interleaved 64 KiB chunks of one
#                      region (dump(8) style: fio rw=read:192k, offset
#                      i*64k), O_DIRECT;
#             nfs      an NFSv3 capture of 500 random 64 KiB READs of two
#                      16 MiB files, 1 ms apart (made by gen-nfs-pcap.py
#                      craft, as README's Validation example), replayed
#                      server-side on ext4 on the target by a pool of 8
#                      threads (iosim validate --target-dir);
#             writer   a buffered sequential 1 MiB writer (fsync at the
#                      end) next to a 64 KiB O_DIRECT reader.
#   criteria  (issue 14) under the trained scheduler (the first), the
#             predicted mean latency within 10 % of the measured mean
#             and the demerit at most 10 % of it; for every other
#             scheduler whose measured change of the mean is significant
#             (Welch 95 %), the predicted change of the same sign and
#             within 25 % of the measured change; every pair of
#             schedulers the measurement tells apart predicted in the
#             same order (validate's ranking_significant).
# Every row is one validate run with --repeat 3; readers run for a fixed
# time (IOSIM_ACCEPT_RUNTIME_S, default 6 s) so that every scheduler's runs
# take alike.  Prints one markdown table and the count of criteria met.
#
# Needs root, losetup, mkfs.ext4, fio and python3 (exits 77 with the reason
# otherwise); the emulated targets also /dev/fuse.  Everything is made in
# temporary directories and removed on every path; validate restores each
# scheduler itself, the emulators detach and unmount at TERM.
#
# Command (from the source tree, after meson compile -C build):
#   sudo IOSIM_BIN=build/cli/iosim tests/bench/validate-acceptance.sh
# IOSIM_ACCEPT_TARGETS / IOSIM_ACCEPT_WORKLOADS: subsets (space-separated);
# IOSIM_ACCEPT_REPEAT (default 3); IOSIM_ACCEPT_KEEP=1 keeps the work
# directory (validate's JSON, text and --work-dir of each row).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
case $bin in /*) ;; *) bin=$PWD/$bin ;; esac
targets=${IOSIM_ACCEPT_TARGETS:-tmpfs virtio disk usb}
workloads=${IOSIM_ACCEPT_WORKLOADS:-seqrand dump nfs writer}
repeat=${IOSIM_ACCEPT_REPEAT:-3}
runtime_s=${IOSIM_ACCEPT_RUNTIME_S:-6}

[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (loop devices, schedulers, tracefs)"; exit 77; }
for tool in losetup mkfs.ext4 fio python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done

work=$(mktemp -d /tmp/iosim-validate-accept.XXXXXX)
chmod 700 "$work"
loop= emu_pid= mnt=
stop_target () {
  if [ -n "$mnt" ]; then umount "$mnt" 2>/dev/null || true; rmdir "$mnt" 2>/dev/null || true; mnt=; fi
  if [ -n "$loop" ]; then losetup -d "$loop" 2>/dev/null || true; loop=; fi
  if [ -n "$emu_pid" ]; then kill -TERM "$emu_pid" 2>/dev/null || true; wait "$emu_pid" 2>/dev/null || true; emu_pid=; fi
  rm -f "$work/backing.img" /var/tmp/iosim-validate-accept.img
}
cleanup () {
  stop_target
  if [ "${IOSIM_ACCEPT_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_target NAME: sets $dev (and $loop or $emu_pid), $size_mib.
start_target () {
  case $1 in
    tmpfs)
      truncate -s 256M "$work/backing.img"
      loop=$(losetup --find --show "$work/backing.img"); dev=$loop; size_mib=256 ;;
    virtio)
      truncate -s 1G /var/tmp/iosim-validate-accept.img
      loop=$(losetup --find --show --direct-io=on /var/tmp/iosim-validate-accept.img)
      dev=$loop; size_mib=1024 ;;
    disk|usb)
      [ -c /dev/fuse ] || { dev=; return; }
      local model=disk-7200-sata size=8GiB
      [ "$1" = usb ] && { model=usb-stick; size=1GiB; }
      : > "$work/dev.txt"
      "$bin" emulate --model "$model" --size "$size" --journal-dir "$work" \
        > "$work/dev.txt" 2> "$work/emulate-$1.err" &
      emu_pid=$!
      for _ in $(seq 300); do [ -s "$work/dev.txt" ] && break; sleep 0.05; done
      dev=$(head -1 "$work/dev.txt")
      size_mib=$([ "$1" = usb ] && echo 1024 || echo 8192) ;;
  esac
}

# The kernel's blk-mq schedulers this device offers, mq-deadline first
# (trained): the others are compared with it.
schedulers () {
  local offered; offered=$(tr -d '[]' < "/sys/block/${1#/dev/}/queue/scheduler")
  local out=""
  for s in mq-deadline bfq kyber none; do
    case " $offered " in *" $s "*) out="$out${out:+,}$s" ;; esac
  done
  echo "$out"
}

# workload_args NAME: the validate arguments after the options.
workload_args () {
  local common="--filename=$dev --ioengine=psync --group_reporting=0 --output=/dev/null"
  local half=$((size_mib / 2))
  case $1 in
    seqrand)
      echo "-- fio $common --direct=1 --runtime=$runtime_s --time_based \
--name=seq --rw=read --bs=64k --offset=0 --size=${half}m \
--name=rand --rw=randread --bs=4k --offset=${half}m --size=${half}m --randseed=1" ;;
    dump)
      echo "-- fio $common --direct=1 --runtime=$runtime_s --time_based --rw=read:192k --bs=64k \
--size=${half}m --name=r0 --offset=0 --name=r1 --offset=64k --name=r2 --offset=128k \
--name=r3 --offset=192k" ;;
    writer)
      local wmib=$((size_mib >= 1024 ? 128 : 64))
      [ "$target" = usb ] && wmib=32
      echo "-- fio $common --name=w --rw=write --bs=1m --direct=0 --offset=0 --size=${wmib}m \
--end_fsync=1 --name=r --rw=read --bs=64k --direct=1 --offset=${half}m --size=${half}m \
--runtime=$runtime_s --time_based" ;;
    nfs)
      echo "--target-dir $mnt $work/reads.pcap" ;;
  esac
}

# The NFS workload's capture: 500 READs of 64 KiB at random offsets of two
# 16 MiB files, 1 ms apart (seeded).
craft_nfs_capture () {
  local reads
  reads=$(python3 -c 'import random; r = random.Random(1); print(" ".join("read:%s:%d:65536" % ("fhb" if i % 2 else "fha", r.randrange(256) * 65536) for i in range(500)))')
  # shellcheck disable=SC2086
  python3 "$here/gen-nfs-pcap.py" craft "$work/reads.pcap" fsinfo:1048576:1048576 \
    lookup:a.dat:fha lookup:b.dat:fhb getattr:fha:16777216 getattr:fhb:16777216 $reads
}

echo "iosim validate acceptance: kernel $(uname -r), $(nproc) CPUs, --repeat $repeat, ${runtime_s} s runs"
results=()
for target in $targets; do
  start_target "$target"
  if [ -z "$dev" ]; then echo "$target: skipped (no /dev/fuse or the emulator did not start)"; stop_target; continue; fi
  scheds=$(schedulers "$dev")
  echo "$target: $dev, schedulers $scheds"
  for w in $workloads; do
    row=$work/$target-$w
    if [ "$w" = nfs ]; then
      [ -f "$work/reads.pcap" ] || craft_nfs_capture
      # Lazy init off, bitmaps not prefetched: else ext4lazyinit's I/O
      # lands in the captures (README, Validation).
      mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$dev"
      mnt=$(mktemp -d "$work/mnt.XXXXXX"); mount -o no_prefetch_block_bitmaps "$dev" "$mnt"
    fi
    # shellcheck disable=SC2046
    if "$bin" validate --target "$dev" --sched "$scheds" --repeat "$repeat" --json "$row.json" \
         --work-dir "$(mkdir -p "$row" && echo "$row")" $(workload_args "$w") \
         > "$row.txt" 2> "$row.err"; then
      results+=("$target" "$w" "$row.json")
      echo "  $w: done"
    else
      echo "  $w: validate failed: $(tail -1 "$row.err")"
    fi
    if [ -n "$mnt" ]; then umount "$mnt"; rmdir "$mnt"; mnt=; fi
  done
  stop_target
done

python3 - "${results[@]}" <<'PY'
import json, sys
args = sys.argv[1:]
rows, met, total = [], 0, 0
def pct(x):
    return "-" if x is None else f"{x:+.1f} %"
def us(x):
    return "-" if x is None else f"{x / 1e3:.1f}"
for i in range(0, len(args), 3):
    target, workload, path = args[i:i + 3]
    r = json.load(open(path))
    for s in r["schedulers"]:
        p, m = s["predicted"], s["measured"]
        err = s.get("error_pct", {}).get("mean_latency_ns")
        ch = s.get("change_from_trained", {}).get("mean_latency_ns", {})
        checks = []
        if s["trained"]:
            checks.append(("mean within 10 %", err is not None and abs(err) <= 10))
            checks.append(("demerit <= 10 %", s.get("demerit_pct") is not None and s["demerit_pct"] <= 10))
            floor = s.get("repeat_demerit_pct")
            if floor is not None:
                checks[-1] = (checks[-1][0] + f" (the repeats' own: {floor:.0f} %)", checks[-1][1])
        elif ch.get("significant"):
            mp, pp = ch.get("measured_pct"), ch.get("predicted_pct")
            ok = (mp is not None and pp is not None and (mp > 0) == (pp > 0)
                  and abs(pp - mp) <= 0.25 * abs(mp))
            checks.append(("change sign and within 25 %", ok))
        for _, ok in checks:
            total += 1; met += ok
        ci = m.get("ci95", {}).get("mean_latency_ns")
        mci = f" [{ci[0] / 1e3:.1f}, {ci[1] / 1e3:.1f}]" if ci else ""
        mci_ch = ch.get("measured_ci95_pct")
        chci = f" [{mci_ch[0]:+.1f}, {mci_ch[1]:+.1f}]" if mci_ch else ""
        verdict = "; ".join(f"{n}: {'yes' if ok else 'NO'}" for n, ok in checks) or "not significant"
        runs = m.get("per_run") or []
        if s["trained"] and runs and p.get("mean_latency_ns") is not None:
            # What the fit saw: the prediction is of this run, the criterion
            # is against the mean of all of them (information, not judged).
            r1 = runs[0]["mean_latency_ns"]
            verdict += (f"; the trained run itself {us(r1)} us, "
                        f"{pct(100.0 * (p['mean_latency_ns'] - r1) / r1)}")
        rows.append(f"| {target} | {workload} | {s['sched']}{' (trained)' if s['trained'] else ''} | "
                    f"{us(p.get('mean_latency_ns'))} | {us(m.get('mean_latency_ns'))}{mci} | {pct(err)} | "
                    f"{'-' if s.get('demerit_pct') is None else format(s['demerit_pct'], '.1f') + ' %'} | "
                    f"{pct(ch.get('predicted_pct')) if not s['trained'] else '-'} | "
                    f"{pct(ch.get('measured_pct')) + chci if not s['trained'] else '-'} | {verdict} |")
    rk = r.get("ranking_significant")
    if rk is not None:
        total += 1; met += rk["agrees"]
        rows.append(f"| {target} | {workload} | ranking | | | | | | | measured apart: "
                    f"{rk['measured_apart']} of {rk['pairs']} ({rk['apart'] or '-'}); "
                    f"predicted in order: {rk['predicted_in_order']}: {'yes' if rk['agrees'] else 'NO'} |")
print()
print("| target | workload | scheduler | predicted mean (us) | measured mean (us) [95 % CI] | error | demerit | predicted change | measured change [95 % CI] | criteria |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
print("\n".join(rows))
print(f"\ncriteria met: {met} of {total}")
PY
