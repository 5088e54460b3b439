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
need_cmd protoc protobuf-compiler
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
# The recording's offsets, both merges (JSON, protobuf decoded by protoc) and every stretch.
$PY "$(dirname "$0")/guest_trace_check.py" "$OUT/vmexit" "$tmp/r.vmexit" gt="$tmp/g.json" $N $OFF \
	"$tmp" || fail "the merge is not exact (above)"

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
