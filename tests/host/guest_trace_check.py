#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The exact guest-trace merge check, of a recording of vmexit-guest --name NAME --vcpus 2 --io N
--guest-trace-out GUEST.json --tsc-offset OFFSET: report gives OFFSET as both vCPUs' latest
TSC offset; report --perfetto --guest-trace NAME=GUEST.json merges it, as JSON and as protobuf
(decoded by protoc with the project's schema subset); in both, every guest stretch k of a vCPU
lies between the end of its exit k and the start of its exit k + 1. Used by
tests/host/test_guest_trace_host.sh and by tests/vm/test_nested_drill.sh on bed recordings.
With FROM (debugfs or trace), the table must say each offset came from there: debugfs for a
guest that was running before record started (no kvm_write_tsc_offset in the recording).

    guest_trace_check.py VMEXIT RECORDING NAME=GUEST.json N OFFSET WORKDIR [FROM] [REPORT-ARG...]

Exit 0 when all holds, 1 (with what does not on stdout) when not.
"""
import json, os, re, subprocess, sys
from collections import defaultdict
vmexit, rec, guest, n, off, work = sys.argv[1:7]
want_from = sys.argv[7] if len(sys.argv) > 7 else None
extra = sys.argv[8:]
n, off = int(n), int(off, 0) & (2**64 - 1)
docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")

def run(*args, stdin=None, out=None, show=False):
    r = subprocess.run(args, stdin=stdin, stdout=out or subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode:
        print(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        sys.exit(1)
    for line in r.stderr.decode(errors="replace").splitlines() if show else ():
        print(f"report said: {line}")
    return r.stdout.decode(errors="replace") if out is None else None

# The recording's latest offsets: the "Guest TSC offsets" table of report (VM, vCPU, OFFSET,
# (signed), WRITES, FROM a row).
rows, on, writes = [], False, []
for line in run(vmexit, "report", "-i", rec).split("\n"):
    w = line.split()
    if line.startswith("Guest TSC offsets"):
        on = True
    elif on and len(w) == 6 and w[0] != "VM":
        rows.append((w[1], w[2]) + ((w[5],) if want_from else ()))
        writes.append(int(w[4]))
want = [(v, f"{off:#018x}") + ((want_from,) if want_from else ()) for v in ("0", "1")]
if sorted(rows) != want:
    print(f"the recording's latest TSC offsets {sorted(rows)}, expected {want}")
    sys.exit(1)
print(f"offsets: {len(rows)} vCPUs at {off:#x}" + (f" from {want_from}" if want_from else "") +
      f", {sum(writes)} kvm_write_tsc_offset in the recording")
jpath, ppath, tpath = (os.path.join(work, f"merged.{x}") for x in ("json", "pftrace", "txt"))
for path in (jpath, ppath):
    run(vmexit, "report", "-i", rec, "--perfetto", path, "--guest-trace", guest, *extra,
        show=path == jpath)
with open(ppath, "rb") as pf, open(tpath, "wb") as tf:
    run("protoc", "--decode=vmexit.perfetto.Trace", "-I", docs,
        os.path.join(docs, "perfetto-subset.proto"), stdin=pf, out=tf)

def check(fmt, exits, spans):
    bad = 0
    for v in (0, 1):
        ex = sorted(exits[v])
        sp = spans[v]
        if len(ex) != n + 1 or len(sp) != n - 1:
            print(f"{fmt}: vCPU {v}: {len(ex)} exits (expected {n + 1}), {len(sp)} guest "
                  f"stretches (expected {n - 1})")
            return False
        for k, (a, b) in sorted(sp.items()):
            lo, hi = ex[k][1], ex[k + 1][0]
            if not (lo <= a <= b <= hi):
                bad += 1
                if bad <= 5:
                    print(f"{fmt}: vCPU {v} stretch {k}: [{a}, {b}] not within the exits' "
                          f"[{lo}, {hi}] (ns)")
    print(f"{fmt}: {2 * (n - 1)} guest stretches, {bad} outside their exits")
    return bad == 0

# JSON: times in us with three decimals, exact as ns.
ns = lambda s: int(round(float(s) * 1000))
ev = json.load(open(jpath))
track_vcpu, exits, spans, open_ = {}, defaultdict(list), defaultdict(dict), {}
for e in ev:
    if e.get("ph") == "M" and e["name"] == "thread_name":
        m = re.fullmatch(r"guest vCPU (\d+)", e["args"]["name"])
        if m:
            track_vcpu[e["tid"]] = int(m.group(1))
for e in ev:
    if e.get("cat") == "kvm_userspace_exit":
        t = ns(e["ts"])
        exits[e["args"]["vcpu"]].append((t, t + ns(e["dur"])))
    elif e.get("cat") == "guest":
        v = track_vcpu[e["tid"]]
        if e["ph"] == "X":
            k = int(e["name"].rsplit(" ", 1)[1])
            spans[v][k] = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
        elif e["ph"] == "B":
            open_[v] = (int(e["name"].rsplit(" ", 1)[1]), ns(e["ts"]))
        elif e["ph"] == "E":
            k, a = open_.pop(v)
            spans[v][k] = (a, ns(e["ts"]))
ok = check("json", exits, spans)

# Protobuf, as protoc prints it: packets with a timestamp and a track_event, descriptors.
txt = open(tpath).read()
names, pexits, pspans, popen = {}, defaultdict(list), defaultdict(dict), {}
for pkt in re.split(r"\npacket \{", txt):
    m = re.search(r"track_descriptor \{\s*uuid: (\d+).*?name: \"([^\"]*)\"", pkt, re.S)
    if m:
        names[int(m.group(1))] = m.group(2)
        continue
    m = re.search(r"timestamp: (\d+)", pkt)
    te = re.search(r"track_event \{(.*)\}", pkt, re.S)
    if not m or not te:
        continue
    ts, body = int(m.group(1)), te.group(1)
    uuid = int(re.search(r"track_uuid: (\d+)", body).group(1))
    kind = re.search(r"type: (\w+)", body).group(1)
    name = names.get(uuid, "")
    gm = re.fullmatch(r"guest vCPU (\d+)", name)
    vm = re.fullmatch(r"vCPU (\d+) \(VMM\)", name)
    if gm:
        v = int(gm.group(1))
        if kind == "TYPE_SLICE_BEGIN":
            k = int(re.search(r"name: \"guest after io exit (\d+)\"", body).group(1))
            popen[v] = (k, ts)
        elif kind == "TYPE_SLICE_END":
            k, a = popen.pop(v)
            pspans[v][k] = (a, ts)
    elif vm:
        v = int(vm.group(1))
        if kind == "TYPE_SLICE_BEGIN":
            pexits[v].append([ts, None])
        elif kind == "TYPE_SLICE_END":
            pexits[v][-1][1] = ts
ok = check("protobuf", {v: [tuple(x) for x in l] for v, l in pexits.items()}, pspans) and ok
sys.exit(0 if ok else 1)
