#!/bin/bash
# nfs-loopback-capture.sh OUTDIR — the recipe of shared/testdata PROVENANCE.md
# ("How the generated NFS captures were made"), scripted: inside a private
# network and mount namespace (loopback only, a private /run), start rpcbind
# and nfs-ganesha (FSAL VFS exporting OUTDIR/export), capture loopback with
# tcpdump, and with libnfs's nfs-cp/nfs-cat write and read back random
# payloads over NFSv3 and NFSv4.0.  Leaves in OUTDIR: v3.pcap, v4.pcap and
# sizes.txt ("version write|read name bytes", one line per transfer).
# Needs root, unshare, rpcbind, ganesha.nfsd (+ VFS FSAL), nfs-cp, nfs-cat,
# tcpdump.  Called by test-trace-nfs-loopback; every process it starts is
# ended by its own pid before it returns.
set -euo pipefail
out=$(realpath "$1")
if [ "${NFS_LOOPBACK_INNER:-}" != 1 ]; then
  NFS_LOOPBACK_INNER=1 exec unshare --net --mount --propagation private "$0" "$out"
fi

mount -t tmpfs tmpfs /run
mkdir -p /run/ganesha /run/rpcbind "$out/export" "$out/client"
chmod 1777 "$out/export"
ip link set lo up
ip link set lo mtu 1500
ip link set dev lo gso_max_size 1500 2>/dev/null || true

cat > "$out/ganesha.conf" <<CONF
NFS_CORE_PARAM { Protocols = 3, 4; Enable_NLM = false; Enable_RQUOTA = false; Mount_Path_Pseudo = true; }
NFSV4 { Graceless = true; }
EXPORT_DEFAULTS { Access_Type = RW; Squash = No_Root_Squash; SecType = sys; }
EXPORT {
  Export_Id = 1; Path = "$out/export"; Pseudo = /export;
  Protocols = 3, 4; Transports = TCP; FSAL { Name = VFS; }
}
LOG { Default_Log_Level = WARN; }
CONF

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

rpcbind -f -w & pids+=($!)
sleep 0.5
ganesha.nfsd -F -f "$out/ganesha.conf" -L "$out/ganesha.log" -p /run/ganesha/ganesha.pid & pids+=($!)
for _ in $(seq 100); do
  rpcinfo -p 127.0.0.1 2>/dev/null | grep -q nfs && break
  sleep 0.2
done

: > "$out/sizes.txt"
# put SIZE NAME VERS: write a random file and read it back
put() {
  head -c "$1" /dev/urandom > "$out/client/$2"
  nfs-cp "$out/client/$2" "nfs://127.0.0.1/export/$2?version=$3$4" >/dev/null
  echo "$3 write $2 $1" >> "$out/sizes.txt"
  get "$2" "$3" "$4"
}
get() {
  nfs-cat "nfs://127.0.0.1/export/$1?version=$2$3" > "$out/client/$1.back"
  cmp "$out/client/$1" "$out/client/$1.back"
  echo "$2 read $1 $(stat -c %s "$out/client/$1.back")" >> "$out/sizes.txt"
}
capture() {
  tcpdump -i lo -s 0 -B 131072 -U -w "$out/v$1.pcap" 2>"$out/tcpdump-v$1.log" & tp=$!
  pids+=($tp)
  sleep 1
}
stop_capture() {
  # let tcpdump drain the kernel buffer: SIGTERM drops what it has not read
  sleep 2
  kill -INT "$tp"
  wait "$tp" 2>/dev/null || true
}

capture 3
put 300000 f300000 3 ""
put 3000 f3000 3 ""
put 1048577 f1048577 3 ""
stop_capture
# libnfs 4.0 writes small files only over NFSv4 (PROVENANCE.md); read the big ones
v4="&uid=65534&gid=65534"
capture 4
put 3000 g3000 4 "$v4"
get f300000 4 "&uid=0&gid=0"
get f1048577 4 "&uid=0&gid=0"
stop_capture
