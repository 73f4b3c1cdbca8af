#!/usr/bin/env python3
"""gen-blktrace.py — make a large binary blktrace for reader benchmarks.

Repeats the records of a small blktrace file (version 7, either byte
order, a merged dump or one per-CPU file) until the output reaches the
requested size; copy k shifts every time by k times the input's span, so
the output stays in time order, and keeps sequence numbers increasing.

usage: gen-blktrace.py INPUT OUTPUT SIZE_MB
"""
import struct
import sys

HEADER = 48


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    data = open(sys.argv[1], "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if (magic & 0xFFFFFF00) == 0x65617400 else ">"
    records, off = [], 0
    while off + HEADER <= len(data):
        pdu = struct.unpack(endian + "H", data[off + 46:off + 48])[0]
        records.append(bytearray(data[off:off + HEADER + pdu]))
        off += HEADER + pdu
    times = [struct.unpack(endian + "Q", r[8:16])[0] for r in records]
    span = max(times) - min(times) + 1000
    seq_step = max(struct.unpack(endian + "I", r[4:8])[0] for r in records)
    target, written, k = int(sys.argv[3]) * 1000 * 1000, 0, 0
    with open(sys.argv[2], "wb") as out:
        while written < target:
            for r, t in zip(records, times):
                seq = struct.unpack(endian + "I", r[4:8])[0]
                struct.pack_into(endian + "Q", r, 8, t + k * span)
                if seq:
                    struct.pack_into(endian + "I", r, 4, seq + k * seq_step)
                out.write(r)
                written += len(r)
                struct.pack_into(endian + "I", r, 4, seq)
            k += 1
    print(f"{sys.argv[2]}: {written} bytes, {k} copies of {len(records)} records")


if __name__ == "__main__":
    main()
