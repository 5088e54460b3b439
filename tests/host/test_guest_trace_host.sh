#!/bin/bash
# report --guest-trace, exactly: the bundled guest stamps its TSC (rdtsc in guest code) right
# before and after each of N IO exits, with its vCPUs' TSC offset set to 2^50 ticks (days), and
# writes the stretches of guest time between two exits as a Chrome trace in guest ticks. Placed
# by the recording's TSC offsets and clock pairs, every stretch must lie between the end of the
# exit before it and the start of the exit after it, on both vCPUs, in the JSON and the protobuf
# output alike; without the shift it would land days away. Then the bad inputs: a guest not in
# the recording, a truncated trace, a vCPU without an offset, a trace without --perfetto.
# bed-only: a software KVM (kvm_pvm) traces TSC offsets it does not apply; tests/run-all.sh
# leaves this test to the SVM bed (tests/vm/test_nested_host.sh), where offsets are applied.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
PY=python3
need_cmd $PY python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
N=200
OFF=0x4000000000000
"$OUT/vmexit" record -o "$tmp/r.vmexit" -- "$OUT/vmexit-guest" --name gt --vcpus 2 --io $N \
	--guest-trace-out "$tmp/g.json" --tsc-offset $OFF 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "record failed"; }
# The truth needs a KVM that applies the offset it traces; the guest checked that itself
# against the host's TSC read around its run.
applied=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["tsc_offset_applied"])' "$tmp/g.json")
[ "$applied" = yes ] || skip "this KVM traces TSC offsets it does not apply to the guest" \
	"(tsc_offset_applied: $applied; kvm_pvm lets the guest read the host's TSC): the SVM bed" \
	"runs this test (tests/vm/test_nested_host.sh)"
"$OUT/vmexit" report -i "$tmp/r.vmexit" >"$tmp/report" || fail "report failed"
offs=$(awk '/^Guest TSC offsets/ {on = 1; getline; next} on && NF == 5 {print $2, $3}' "$tmp/report" |
	sort | tr '\n' ' ')
[ "$offs" = "0 0x0004000000000000 1 0x0004000000000000 " ] ||
	fail "the recording's latest offsets are not $OFF on vCPUs 0 and 1: $offs"

for fmt in json pftrace; do
	"$OUT/vmexit" report -i "$tmp/r.vmexit" --perfetto "$tmp/m.$fmt" \
		--guest-trace gt="$tmp/g.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "merge ($fmt) failed"; }
done
# The protobuf as text, for the same check (protoc and the project's schema subset).
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
if command -v protoc >/dev/null; then
	protoc --decode=vmexit.perfetto.Trace -I "$DOCS" "$DOCS/perfetto-subset.proto" \
		<"$tmp/m.pftrace" >"$tmp/m.txt" || fail "protoc cannot decode the merged trace"
else
	fail "protoc not installed (apt-get install protobuf-compiler; tools/install-deps.sh)"
fi
$PY - "$tmp/m.json" "$tmp/m.txt" $N <<'PY' || fail "guest stretches misplaced (above)"
import json, re, sys
from collections import defaultdict
jpath, tpath, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

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
PY

# Bad input: one line each, naming what is wrong, status 1.
bad() {	# bad WHAT GREP ARGS...: report with ARGS fails with one line matching GREP
	local what=$1 re=$2
	shift 2
	"$OUT/vmexit" report -i "$tmp/r.vmexit" --perfetto "$tmp/bad.json" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc = 1 ] && grep -q -- "$re" "$tmp/err" ||
		{ cat "$tmp/err"; fail "$what: status $rc (expected 1) or no '$re' in the message"; }
	echo "ok: $what: $(head -n 1 "$tmp/err")"
}
bad "a guest not in the recording" "no guest named 'nosuch' in $tmp/r.vmexit" \
	--guest-trace nosuch="$tmp/g.json"
head -c 3000 "$tmp/g.json" >"$tmp/cut.json"
bad "a truncated trace" "$tmp/cut.json: offset 3000: the file ends inside the trace" \
	--guest-trace gt="$tmp/cut.json"
awk '!done && sub(/"vcpu":0/, "\"vcpu\":5") {done = 1} 1' "$tmp/g.json" >"$tmp/v5.json"
bad "a vCPU without an offset" "$tmp/v5.json:2: vCPU 5 of guest 'gt' has no TSC offset" \
	--guest-trace gt="$tmp/v5.json"
"$OUT/vmexit" report -i "$tmp/r.vmexit" --guest-trace gt="$tmp/g.json" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q -- "--guest-trace adds tracks to a --perfetto trace" "$tmp/err" ||
	{ cat "$tmp/err"; fail "--guest-trace without --perfetto: status $rc (expected 2)"; }
echo "PASS: test_guest_trace_host"
