#!/bin/bash
# A real uftrace trace as a guest trace: Debian's uftrace records a small -pg program and
# writes it with `uftrace dump --chrome` (ts in us of its CLOCK_MONOTONIC: clock=ns); report
# --guest-trace loads it into a recording of the bundled guest: every B/E event of the file is
# on the guest's track in the JSON and in the protobuf output, with its function's name and in
# the file's order. (Where it lands depends on the guest's clock, which here is the host's: no
# placement is checked; test_guest_trace_host checks placement.)
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd uftrace uftrace
need_cmd python3 python3
TINY=$OUT/tests/uftrace_tiny
[ -x "$TINY" ] || TINY=$OUT/san/tests/uftrace_tiny
TINY=$(cd "$(dirname "$TINY")" && pwd)/uftrace_tiny
[ -x "$TINY" ] || fail "uftrace_tiny not built in $OUT/tests or $OUT/san/tests (make tests)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$OUT/vmexit" record -o "$tmp/r.vmexit" -- "$OUT/vmexit-guest" --name ut --io 10 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "record failed"; }
# Bounded: uftrace 0.13 spins forever when its tracee cannot load libmcount.
(cd "$tmp" && timeout 120 uftrace record -d "$tmp/ud" "$TINY") >"$tmp/err" 2>&1 ||
	{ cat "$tmp/err"; fail "uftrace record failed"; }
uftrace dump -d "$tmp/ud" --chrome >"$tmp/u.json" 2>"$tmp/err" ||
	{ cat "$tmp/err"; fail "uftrace dump --chrome failed"; }
for fmt in json pftrace; do
	"$OUT/vmexit" report -i "$tmp/r.vmexit" --perfetto "$tmp/m.$fmt" \
		--guest-trace ut="$tmp/u.json",clock=ns --keep-outside 2>"$tmp/err" ||
		{ cat "$tmp/err"; fail "report --guest-trace of uftrace's trace ($fmt) failed"; }
	grep -q "warning: --guest-trace $tmp/u.json: clock=ns places guest 'ut' only as well as its clock matches its TSC" "$tmp/err" ||
		{ cat "$tmp/err"; fail "no warning that clock=ns is coarser than the guest's exits"; }
done
echo "clock=ns: $(grep -o "warning: .*clock=ns places.*exits (about [0-9]* ns)" "$tmp/err")"
# Without clock=ns uftrace's ns would be taken for TSC ticks: said.
"$OUT/vmexit" report -i "$tmp/r.vmexit" --perfetto "$tmp/t.json" --guest-trace ut="$tmp/u.json" \
	--keep-outside >/dev/null 2>"$tmp/err"
grep -q "warning: --guest-trace $tmp/u.json: a uftrace trace read as guest TSC ticks" "$tmp/err" ||
	{ cat "$tmp/err"; fail "a uftrace trace without clock=ns merged without a word"; }
echo "no clock=ns: $(grep -o "warning: .*read as guest TSC ticks" "$tmp/err")"
DOCS=$(cd "$(dirname "$0")/../../docs" && pwd)
need_cmd protoc protobuf-compiler
protoc --decode=vmexit.perfetto.Trace -I "$DOCS" "$DOCS/perfetto-subset.proto" \
	<"$tmp/m.pftrace" >"$tmp/m.txt" || fail "protoc cannot decode the merged trace"
python3 - "$tmp/u.json" "$tmp/m.json" "$tmp/m.txt" <<'PY' || fail "uftrace's events not all in the merged trace"
import json, re, sys
u = json.load(open(sys.argv[1]))["traceEvents"]
want = [(e["ph"], e["name"]) for e in u if e["ph"] in "BE"]
names = [n for _, n in want]
# The program's own calls: main, middle, leaf x 4 (uftrace_tiny.c), each a B and an E.
assert names.count("main") == 2 and names.count("middle") == 2 and names.count("leaf") == 8, names
m = json.load(open(sys.argv[2]))
got = [(e["ph"], e["name"]) for e in m if e.get("cat") == "guest"]
tracks = {e["args"]["name"] for e in m if e.get("ph") == "M" and e["name"] == "thread_name"}
print(f"uftrace: {len(want)} B/E events; JSON: {len(got)} guest events; tracks {sorted(tracks)}")
# E events keep their names in JSON (uftrace gives them one).
assert got == want, (got[:6], want[:6])
txt = open(sys.argv[3]).read()
begins = re.findall(r"type: TYPE_SLICE_BEGIN\s+track_uuid: (\d+)\s+name: \"([^\"]*)\"", txt)
ends = len([u for u in re.findall(r"type: TYPE_SLICE_END\s+track_uuid: (\d+)", txt)
            if int(u) >= 5 << 56])
pb = [n for u, n in begins if int(u) >= 5 << 56]
print(f"protobuf: {len(pb)} guest slice begins, {ends} ends")
assert pb == [n for ph, n in want if ph == "B"], pb[:6]
# One end per E of the file: uftrace's dump may hold an E whose B it did not record (seen in
# the TCG bed: 17 events, 9 of them E), and vmexit writes the file as it is.
assert ends == sum(ph == "E" for ph, _ in want), ends
PY
echo "PASS: test_guest_trace_uftrace_host"
