#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The fixed mutant set of a capture (trace.dat, perf.data): the same mutants of the same seed
on every run, so that a crash found once stays found. Kinds: a bit flip in each of the first
HEAD bytes (the fixed header), each event format's print format cut as in issue 27
(`__print_flags(REC->e` followed by \\x01 and seven NULs), truncations, 32-bit 0xffffffff
writes and bit flips anywhere.

Usage: capture_mutants.py SEED OUTDIR COUNT"""
import os
import random
import re
import sys

HEAD = 64


def mutants(d, count, rnd):
    n = 0
    for i in range(min(HEAD, len(d))):
        m = bytearray(d)
        m[i] ^= 1 << (i % 8)
        yield 'head%d' % i, m
        n += 1
    repro = b'(REC->isa == 1) ? __print_flags(REC->e'
    for k in re.finditer(re.escape(repro), d):
        j = k.end()
        yield 'issue27_%d' % k.start(), d[:j] + b'\x01' + b'\0' * 7 + d[j + 8:]
        n += 1
    for k in re.finditer(rb'__print_(flags|symbolic)\(', d):
        if n >= count // 3:
            break
        j = k.end() + 10
        yield 'printfmt%d' % k.start(), d[:j] + b'\x01' + b'\0' * 7 + d[j + 8:]
        n += 1
    for i in range(20):
        at = rnd.randrange(len(d))
        yield 'cut%d_%d' % (at, i), d[:at]
        n += 1
    for i in range(20):
        at = rnd.randrange(len(d) - 4)
        yield 'ones%d_%d' % (at, i), d[:at] + b'\xff' * 4 + d[at + 4:]
        n += 1
    while n < count:
        at = rnd.randrange(len(d))
        m = bytearray(d)
        m[at] ^= 1 << rnd.randrange(8)
        yield 'flip%d_%d' % (at, n), m
        n += 1


def main():
    seed, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    d = open(seed, 'rb').read()
    rnd = random.Random(os.path.basename(seed))
    os.makedirs(out, exist_ok=True)
    for name, m in mutants(d, count, rnd):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(m)


main()
