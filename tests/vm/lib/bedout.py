# SPDX-License-Identifier: GPL-2.0
"""The bed's serial output, read once for every tests/vm test.

An in-bed script (tests/vm/lib/inbed.sh) speaks in tagged lines: `T_PHASE NAME` opens a phase,
`send` frames a file as `T_FILE NAME SIZE MD5`, gzip | base64, `T_FILE_END NAME` (or
`T_NOFILE NAME`), `T_ERROR MSG` is a failure in the bed, and each test adds tags of its own.
read() parses the common ones, checks every file against its size and md5 (a serial console can
drop or mangle bytes), and hands every other tag to the test's `tag` callback, so a test keeps
only what is its own. Lines no one claims are printed, indented, for the reader of the log.

    import bedout
    top, phases, order = bedout.read(path, check, save=lambda phase, name: ..., tag=my_tag)

check(cond, msg) is the test's own assertion (returns cond); save(phase, name) returns a path to
keep a copy of each good file under (or None); tag(tag, rest, fields, cur, top) returns True
when it used the line. A phase is a dict: name, files (name -> bytes) and what the tags put in.
"""
import base64
import gzip
import hashlib


def _file(lines, i, fields, cur, check, save):
    """The framed file at lines[i:], into cur["files"]; returns the index after its end line."""
    name, size, md5 = fields[0], int(fields[1]), fields[2]
    chunk = []
    while i < len(lines) and lines[i] != f"T_FILE_END {name}":
        chunk.append(lines[i])
        i += 1
    where = f"phase {cur.get('name', '-')}: file {name}"
    if i >= len(lines):
        check(False, f"{where}: cut short on the serial console (no T_FILE_END)")
        return i
    try:
        data = gzip.decompress(base64.b64decode("".join(chunk), validate=True))
    except Exception as e:  # any damage to the frame is the same finding
        check(False, f"{where}: garbled on the serial console: {e}")
        return i + 1
    got = hashlib.md5(data).hexdigest()
    if check(len(data) == size and got == md5,
             f"{where}: {len(data)} bytes md5 {got} on the host, {size} bytes md5 {md5} in the bed"):
        cur["files"][name] = data
        path = save(cur.get("name", "bed"), name) if save else None
        if path:
            with open(path, "wb") as fh:
                fh.write(data)
    return i + 1


def read(path, check, save=None, tag=None):
    """(top, phases, order): the part before any phase, each phase by name, their order."""
    top = dict(files={})
    phases, order, cur = {}, [], top
    lines = open(path, errors="replace").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        t, _, rest = line.partition(" ")
        f = rest.split()
        if t == "T_FILE" and len(f) == 3:
            i = _file(lines, i, f, cur, check, save)
        elif t == "T_PHASE" and f:
            cur = phases[f[0]] = dict(name=f[0], files={})
            order.append(f[0])
        elif t == "T_NOFILE":
            check(False, f"phase {cur.get('name', '-')}: {rest} was not written in the bed")
        elif t == "T_ERROR":
            check(False, f"in the bed: {rest}")
        elif tag and tag(t, rest, f, cur, top):
            pass
        elif t == "T_RC" and f:
            cur["rc"] = int(f[0])
        elif t == "T_TIME" and len(f) == 2:
            cur["secs"] = float(f[1]) - float(f[0])
        elif t == "T_BUF" and len(f) == 2:
            cur["buf"] = (int(f[0]), int(f[1]))
        elif t == "T_OVERRUN" and f:
            cur["overrun"] = int(f[0])
        elif line.strip():
            print("  | " + line)
    return top, phases, order
