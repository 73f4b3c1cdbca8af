#!/bin/bash
# capture-partition-sample.sh — how tests/data/valid-blk-loop-partition-6.18.ftrace
# was made (run as root, under the real-device lock):
#   flock /tmp/iosim-realdev.lock tests/traces/capture-partition-sample.sh build/cli/iosim OUT
# A 64 MiB file with an MBR partition at sector 4096 on a loop device; dd goes
# through the partition, so every I/O has a remap (A) record on the loop
# device.  blktrace itself cannot open debugfs's trace files on the capture
# machine's kernel, hence iosim capture (tracefs blk tracer).  The comment
# lines at the top of the committed sample were added by hand.
set -u
IOSIM=${1:?usage: $0 IOSIM_BINARY OUTPUT}
OUT=${2:?usage: $0 IOSIM_BINARY OUTPUT}
W=$(mktemp -d /tmp/iosim-partition-XXXXXX) || exit 1
LOOP=""
cleanup() {
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf "$W"
}
trap cleanup EXIT
truncate -s 64M "$W/img"
# MBR: one Linux partition (type 0x83) from sector 4096, 65536 sectors
python3 -c "import struct,sys; f=open(sys.argv[1],'r+b'); f.seek(446); f.write(struct.pack('<B3sB3sII',0,b'\0\0\0',0x83,b'\0\0\0',4096,65536)); f.seek(510); f.write(b'\x55\xaa')" "$W/img" || exit 1
LOOP=$(losetup -f -P --show "$W/img") || exit 1
partx -a "$LOOP" 2>/dev/null
sleep 0.5
B=$(basename "$LOOP")
PART=${LOOP}p1
if [ ! -b "$PART" ]; then
  # no udev: make the node from sysfs
  D=$(cat "/sys/block/$B/${B}p1/dev") || exit 1
  PART=$W/part
  mknod "$PART" b "${D%:*}" "${D#*:}" || exit 1
fi
cat > "$W/work.sh" <<EOW
taskset -c 1 dd if=/dev/zero of=$PART bs=4k count=110 oflag=direct status=none
taskset -c 0 dd if=$PART of=/dev/null bs=8k count=30 iflag=direct status=none skip=100
sleep 0.3
taskset -c 1 dd if=/dev/zero of=$PART bs=64k count=6 seek=50 oflag=direct status=none
EOW
"$IOSIM" capture -d "$LOOP" -o "$OUT" -- sh "$W/work.sh"
