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

With "craft", writes a small NFSv3-over-UDP capture from a list of
operations instead, for tests of what a replay does with hostile sizes:

usage: gen-nfs-pcap.py craft OUTPUT.pcap OP...
  fsinfo:RTMAX:WTMAX            FSINFO of the root, the server's limits
  lookup:NAME:FH                LOOKUP of NAME in the root, found as FH
  getattr:FH:SIZE               GETATTR of FH, the reply's size
  read:FH:OFFSET:COUNT[:REPLY]  READ (the reply returns REPLY bytes, default COUNT)
  write:FH:OFFSET:COUNT         WRITE of COUNT bytes (data not captured,
                                as under a small snaplen)
FH is a label (its bytes are the handle; "root" is the exported
directory), NAME is percent-encoded (a%2Cb: "a,b"), numbers take 0x.
Each call is 1 ms after the previous one and answered 100 us later (status
OK), client 10.0.0.1:800, server 10.0.0.2:2049, nanosecond pcap.
"""
import struct
import sys
import urllib.parse


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


# ---- craft ------------------------------------------------------------------

def xdr_u32(v):
    return struct.pack(">I", v)


def xdr_u64(v):
    return struct.pack(">Q", v)


def xdr_opaque(b):
    return xdr_u32(len(b)) + b + b"\0" * (-len(b) % 4)


def rpc_call(xid, proc):
    # AUTH_SYS: stamp, machine "nfs", uid 0, gid 0, one gid; AUTH_NULL verifier
    cred = xdr_u32(7) + xdr_opaque(b"nfs") + xdr_u32(0) + xdr_u32(0) + xdr_u32(1) + xdr_u32(0)
    return (xdr_u32(xid) + xdr_u32(0) + xdr_u32(2) + xdr_u32(100003) + xdr_u32(3)
            + xdr_u32(proc) + xdr_u32(1) + xdr_opaque(cred) + xdr_u32(0) + xdr_u32(0))


def rpc_reply(xid):
    return xdr_u32(xid) + xdr_u32(1) + xdr_u32(0) + xdr_u32(0) + xdr_u32(0) + xdr_u32(0)


def fattr3(size):
    return (xdr_u32(1) + xdr_u32(0o644) + xdr_u32(1) + xdr_u32(0) + xdr_u32(0) + xdr_u64(size)
            + xdr_u64(size) + xdr_u64(0) + xdr_u64(1) + xdr_u64(2) + b"\0" * 24)


def number(text):
    return int(text, 0)


def craft_op(xid, spec):
    """(call, reply) bodies of one NFSv3 operation."""
    f = spec.split(":")
    kind, call, reply = f[0], None, rpc_reply(xid) + xdr_u32(0)
    fh = lambda label: xdr_opaque(label.encode())
    if kind == "fsinfo" and len(f) == 3:
        call = rpc_call(xid, 19) + fh("root")
        reply += (xdr_u32(0) + xdr_u32(number(f[1])) + xdr_u32(number(f[1])) + xdr_u32(4096)
                  + xdr_u32(number(f[2])) + xdr_u32(number(f[2])) + xdr_u32(4096) + xdr_u32(4096)
                  + xdr_u64(2**63 - 1) + xdr_u32(0) + xdr_u32(1) + xdr_u32(0x1b))
    elif kind == "lookup" and len(f) == 3:
        call = rpc_call(xid, 3) + fh("root") + xdr_opaque(urllib.parse.unquote_to_bytes(f[1]))
        reply += fh(f[2]) + xdr_u32(0) + xdr_u32(0)
    elif kind == "getattr" and len(f) == 3:
        call = rpc_call(xid, 1) + fh(f[1])
        reply += fattr3(number(f[2]))
    elif kind == "read" and len(f) in (4, 5):
        count = number(f[3])
        got = number(f[4]) if len(f) == 5 else count
        call = rpc_call(xid, 6) + fh(f[1]) + xdr_u64(number(f[2])) + xdr_u32(count)
        # the data only when small: a reply's count is what a decoder reads
        reply += xdr_u32(0) + xdr_u32(got) + xdr_u32(0) + xdr_u32(got)
        reply += b"\0" * (got + (-got % 4)) if got <= 8192 else b""
    elif kind == "write" and len(f) == 4:
        count = number(f[3])
        call = (rpc_call(xid, 7) + fh(f[1]) + xdr_u64(number(f[2])) + xdr_u32(count) + xdr_u32(2)
                + xdr_u32(count))
        reply += xdr_u32(0) + xdr_u32(0) + xdr_u32(count) + xdr_u32(2) + xdr_u64(0x1234)
    else:
        sys.exit(f"craft: cannot read operation {spec!r} (see --help)")
    return call, reply


def udp_frame(src, dst, sport, dport, payload, ident):
    udp = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ident & 0xFFFF, 0, 64, 17, 0,
                     bytes(src), bytes(dst)) + udp
    return bytes([0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 6]) + b"\x08\x00" + ip


def craft(path, specs):
    cli, srv = (10, 0, 0, 1), (10, 0, 0, 2)
    out = [struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 262144, 1)]
    t = 1_000_000_000
    for i, spec in enumerate(specs):
        call, reply = craft_op(0x1000 + i, spec)
        for ts, frame in ((t, udp_frame(cli, srv, 800, 2049, call, 2 * i)),
                          (t + 100_000, udp_frame(srv, cli, 2049, 800, reply, 2 * i + 1))):
            out.append(struct.pack("<IIII", ts // 10**9, ts % 10**9, len(frame), len(frame)) + frame)
        t += 1_000_000
    with open(path, "wb") as f:
        f.write(b"".join(out))
    print(f"{path}: {len(specs)} operations")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "craft":
        craft(sys.argv[2], sys.argv[3:])
        return
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
