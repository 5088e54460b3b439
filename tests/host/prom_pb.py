# SPDX-License-Identifier: GPL-2.0
"""Prometheus's delimited protobuf exposition read without protobuf's library, for the serve
tests: the wire format (varints, fields), the MetricFamily messages by name, a gauge's value."""
import struct


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """A message's (field number, value) pairs: ints, 8-byte and length-delimited bytes."""
    i, out = 0, []
    while i < len(b):
        k, i = varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError(f"wire type {w}")
        out.append((f, v))
    return out


def families(b):
    """name -> its metrics (each a field list), from a scrape of delimited MetricFamily."""
    i, fams = 0, {}
    while i < len(b):
        n, i = varint(b, i)
        fs = fields(b[i:i + n])
        i += n
        fams[[v.decode() for f, v in fs if f == 1][0]] = [fields(v) for f, v in fs if f == 4]
    return fams


def gauge(m):
    """A metric's gauge value (Metric.gauge = 2, Gauge.value = 1, a double)."""
    return struct.unpack("<d", [v for f, v in fields([v for f, v in m if f == 2][0])
                                if f == 1][0])[0]
