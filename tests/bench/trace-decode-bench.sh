#!/bin/bash
# trace-decode-bench.sh — how fast iosim decodes traces, next to the
# reference tools on the same files in the same run (issue 6):
#  - NFS: a capture of IOSIM_BENCH_NFS_MB (default 500) MB made from the
#    stored NFSv3 sample (tests/bench/gen-nfs-pcap.py), through
#    `iosim trace cat --csv` and through tshark printing the RPC/NFS fields
#    of every call and reply (target: iosim at least 10x tshark's speed);
#  - blktrace: a binary trace of IOSIM_BENCH_BLK_MB (default 200) MB made
#    from the stored sample (tests/bench/gen-blktrace.py), through
#    `iosim trace cat` (blkparse text) and through blkparse (target: faster
#    than blkparse).
# Prints seconds, MB/s and records/s for each and the ratios; the targets
# are reported, not enforced.  Skips a tool that is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${IOSIM_BIN:-$here/../../build/cli/iosim}
data=${IOSIM_SHARED_TESTDATA:-$here/../../../shared/testdata}
nfs_mb=${IOSIM_BENCH_NFS_MB:-500}
blk_mb=${IOSIM_BENCH_BLK_MB:-200}
[ -x "$bin" ] || { echo "SKIP: no iosim binary at $bin"; exit 77; }
[ -d "$data" ] || { echo "SKIP: no shared test data at $data"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/var/tmp}/iosim-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

now () { date +%s.%N; }
secs () { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
rate () { awk -v n="$1" -v s="$2" -v d="$3" 'BEGIN { printf "%.1f", n / s / d }'; }

echo "== NFS capture"
python3 "$here/gen-nfs-pcap.py" "$data/generated-nfs-loopback/nfsv3-tcp-libnfs-ganesha.pcap" \
  "$work/big.pcap" "$nfs_mb"
bytes=$(stat -c %s "$work/big.pcap")
t0=$(now); records=$("$bin" trace cat --csv "$work/big.pcap" | tail -n +2 | wc -l); t1=$(now)
ours=$(secs "$t0" "$t1")
echo "iosim:  $ours s, $(rate "$bytes" "$ours" 1e6) MB/s, $(rate "$records" "$ours" 1) records/s ($records operations)"
if command -v tshark >/dev/null; then
  t0=$(now)
  tshark -r "$work/big.pcap" -n -Y rpc -T fields -e frame.number -e rpc.xid -e rpc.msgtyp \
    -e nfs.procedure_v3 -e nfs.offset3 -e nfs.count3 -e nfs.status -e rpc.time >/dev/null 2>&1
  t1=$(now)
  theirs=$(secs "$t0" "$t1")
  echo "tshark: $theirs s, $(rate "$bytes" "$theirs" 1e6) MB/s"
  echo "nfs_speedup_vs_tshark: $(awk -v a="$theirs" -v b="$ours" 'BEGIN { printf "%.1f", a / b }') (target >= 10)"
else
  echo "tshark: not installed"
fi

echo "== blktrace"
python3 "$here/gen-blktrace.py" "$data/blktrace-takeoverjp-sample/sample.blktrace.0" \
  "$work/big.blktrace" "$blk_mb"
bytes=$(stat -c %s "$work/big.blktrace")
t0=$(now); records=$("$bin" trace cat "$work/big.blktrace" | wc -l); t1=$(now)
ours=$(secs "$t0" "$t1")
echo "iosim:    $ours s, $(rate "$bytes" "$ours" 1e6) MB/s, $(rate "$records" "$ours" 1) records/s ($records records)"
if command -v blkparse >/dev/null; then
  t0=$(now); blkparse -q -i - -o /dev/null < "$work/big.blktrace" >/dev/null 2>&1 || true; t1=$(now)
  theirs=$(secs "$t0" "$t1")
  echo "blkparse: $theirs s, $(rate "$bytes" "$theirs" 1e6) MB/s"
  echo "blktrace_speedup_vs_blkparse: $(awk -v a="$theirs" -v b="$ours" 'BEGIN { printf "%.1f", a / b }') (target > 1)"
else
  echo "blkparse: not installed"
fi
