#!/usr/bin/env python3
"""gen-trace-text.py — make a large text trace of an issue-only or CSV
format for the streaming benchmark (tests/bench/trace-stream-bench.sh).

Formats (shared/reference/trace-formats.md):
  disksim-ascii  "arrival_ms devno sector sectors flags" (flags 1 = read)
  fio-iolog      fio version 3 iolog: "usec file action offset length"
  msr-csv        SNIA MSR Cambridge: "Timestamp,Hostname,DiskNumber,Type,
                 Offset,Size,ResponseTime" in 100 ns ticks

Every row is made from its index alone (no randomness: the same N gives
the same file): 4 devices or files, sizes 4 to 64 KiB, a third reads,
arrivals 10 us apart with a little jitter, MSR responses 50 us to 20 ms.

usage: gen-trace-text.py FORMAT RECORDS OUTPUT
"""
import sys


def rows_disksim(n):
    for i in range(n):
        t_ns = i * 10000 + (i * 7919) % 3000
        yield "%d.%06d %d %d %d %d\n" % (t_ns // 1000000, t_ns % 1000000, i % 4,
                                         (i * 104729) % 400000000, 8 * (1 + i % 16),
                                         1 if i % 3 == 0 else 0)


def rows_iolog(n):
    yield "fio version 3 iolog\n"
    for f in range(4):
        yield "0 /dev/bench%d add\n" % f
        yield "0 /dev/bench%d open\n" % f
    for i in range(n):
        yield "%d /dev/bench%d %s %d %d\n" % (1 + i * 10, i % 4, "read" if i % 3 == 0 else "write",
                                              ((i * 104729) % 400000000) * 512, 4096 * (1 + i % 16))
    for f in range(4):
        yield "%d /dev/bench%d close\n" % (1 + n * 10, f)


def rows_msr(n):
    base = 128166385295514663
    for i in range(n):
        yield "%d,bench,%d,%s,%d,%d,%d\n" % (base + i * 100 + (i * 7919) % 30, i % 4,
                                              "Read" if i % 3 == 0 else "Write",
                                              ((i * 104729) % 400000000) * 512, 4096 * (1 + i % 16),
                                              500 + (i * 15485863) % 200000)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    gen = {"disksim-ascii": rows_disksim, "fio-iolog": rows_iolog, "msr-csv": rows_msr}.get(sys.argv[1])
    if gen is None:
        sys.exit("unknown format %s\n%s" % (sys.argv[1], __doc__))
    with open(sys.argv[3], "w") as out:
        buf = []
        for row in gen(int(sys.argv[2])):
            buf.append(row)
            if len(buf) >= 65536:
                out.write("".join(buf))
                buf.clear()
        out.write("".join(buf))


if __name__ == "__main__":
    main()
