#!/usr/bin/env python3
"""gen-nfs-pcap.py — make a large NFS capture for decoder benchmarks.

Copies the packets of a small Ethernet/IPv4 pcap (microsecond or
nanosecond, either byte order) over and over until the output reaches the
requested size.  Copy k shifts every timestamp by k times the input's
span and gives the client its own TCP/UDP port (the port that is not
2049 gets + k), so the copies are distinct connections that a decoder
must reassemble one by one, in a capture whose time only moves forward.
Checksums are left as they are (decoders, tshark included, do not check
them by default).

usage: gen-nfs-pcap.py INPUT.pcap OUTPUT.pcap SIZE_MB
"""
import struct
import sys


def read_pcap(path):
    data = open(path, "rb").read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        endian = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        endian = ">"
    else:
        sys.exit(f"{path}: not a pcap file (magic {magic.hex()})")
    nanos = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
    linktype = struct.unpack(endian + "I", data[20:24])[0]
    if linktype != 1:
        sys.exit(f"{path}: link type {linktype}, only Ethernet (1) is supported")
    packets, off = [], 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        body = data[off + 16:off + 16 + incl]
        if len(body) < incl:
            sys.exit(f"{path}: truncated packet at byte {off}")
        packets.append((sec * 10**9 + frac * (1 if nanos else 1000), orig, bytearray(body)))
        off += 16 + incl
    return data[:24], endian, nanos, packets


def shift_port(body, k):
    """Give copy k's client its own port (Ethernet, IPv4, TCP or UDP)."""
    if len(body) < 34 or body[12:14] != b"\x08\x00":
        return body
    ihl = (body[14] & 0x0F) * 4
    proto = body[23]
    l4 = 14 + ihl
    if proto not in (6, 17) or len(body) < l4 + 4:
        return body
    for at in (l4, l4 + 2):
        port = struct.unpack(">H", body[at:at + 2])[0]
        if port != 2049:
            struct.pack_into(">H", body, at, (port + k) % 65536 or 1)
    return body


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    header, endian, nanos, packets = read_pcap(sys.argv[1])
    target = int(sys.argv[3]) * 1000 * 1000
    span = packets[-1][0] - packets[0][0] + 1000
    written, k = len(header), 0
    with open(sys.argv[2], "wb") as out:
        out.write(header)
        while written < target:
            for t, orig, body in packets:
                b = shift_port(bytearray(body), k)
                ts = t + k * span
                frac = ts % 10**9 if nanos else (ts % 10**9) // 1000
                out.write(struct.pack(endian + "IIII", ts // 10**9, frac, len(b), orig))
                out.write(b)
                written += 16 + len(b)
            k += 1
    print(f"{sys.argv[2]}: {written} bytes, {k} copies of {len(packets)} packets")


if __name__ == "__main__":
    main()
