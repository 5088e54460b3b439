#!/bin/bash
# report --guest-trace, exactly, and never silently wrong. The bundled guest stamps its TSC
# (rdtsc in guest code) right before and after each of N IO exits, with its vCPUs' TSC offset
# set to 2^50 ticks (days), and writes the stretches of guest time between two exits as a
# Chrome trace in guest ticks. Placed by the recording's offsets and clock pairs, every stretch
# must lie between the end of the exit before it and the start of the exit after it, on both
# vCPUs, in the JSON and the protobuf output alike (guest_trace_check.py).
#
# The truth is what the guest itself saw (its metadata.tsc_offset_applied, against the host's
# TSC read around its run): "yes" where KVM applies the offset it traces (hardware KVM, the
# beds: tests/vm/test_nested_host.sh runs this test), "no" where it traces one it does not
# apply (the software backend kvm_pvm: the guest reads the host's TSC, debugfs says 0). So
# the offset the guest ran with, WANT, is 2^50 or 0, and each case expects accordingly:
#   1. running: the guest is created (offsets written) before `record -g` starts, as a
#      production guest is: the offsets come from debugfs only; exact.
#   2. created while recording, lingering so that record reads debugfs after the traced write:
#      exact; where the trace and debugfs disagree (kvm_pvm) report says so.
#   3. silent before: no debugfs (VMEXIT_KVM_DEBUGFS at a missing directory): record says
#      how to mount it; with the traced offset alone a KVM that does not apply it put every
#      guest event past the recording's end with exit 0. Now: exact where applied, else
#      "all ... fall outside" and exit 1, and --keep-outside writes it with a note.
#   4. a KVM whose debugfs says 0 (emulated: VMEXIT_KVM_DEBUGFS at a tree the test writes):
#      report notes the disagreement and believes 0: exact where the guest ran with 0, else
#      every event outside and exit 1. Cases 3 and 4 thus check both outcomes on any KVM.
#   5. running, no debugfs: no offset at all: the one-line refusal.
# Then the bad inputs: a guest not in the recording, a truncated trace, a vCPU without an
# offset, a trace without --perfetto.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
PY=python3
need_cmd $PY python3
need_cmd protoc protobuf-compiler
[ -d /sys/kernel/debug/kvm ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -d /sys/kernel/debug/kvm ] || skip "no KVM debugfs (/sys/kernel/debug/kvm) even after mounting debugfs"
tmp=$(mktemp -d)
RPID=
trap '[ -n "$RPID" ] && kill -INT $RPID 2>/dev/null; rm -rf "$tmp"' EXIT
N=200
OFF=0x4000000000000
CHECK=$(dirname "$0")/guest_trace_check.py
GARGS=(--name gt --vcpus 2 --io $N --tsc-offset $OFF)

applied_of() {	# applied_of G.json: what the guest saw
	$PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["tsc_offset_applied"])' "$1"
}

# running OUT.vmexit G.json [ENV...]: the guest created and held, then record -g gt, then the
# guest runs; record is stopped at its end.
running() {
	local rec=$1 g=$2 gp
	shift 2
	rm -f "$tmp/go"
	"$OUT/vmexit-guest" "${GARGS[@]}" --guest-trace-out "$g" --hold-until "$tmp/go" \
		>/dev/null 2>"$tmp/guest.err" &
	gp=$!
	wait_line "$tmp/guest.err" "held until" $gp || { cat "$tmp/guest.err"; fail "the guest was never held"; }
	env "$@" "$OUT/vmexit" record -g gt -o "$rec" 2>"$tmp/rec.err" &
	RPID=$!
	wait_tracing $RPID
	touch "$tmp/go"
	wait $gp || { cat "$tmp/guest.err"; fail "the guest failed"; }
	kill -INT $RPID
	wait $RPID || { cat "$tmp/rec.err"; fail "record -g gt failed"; }
	RPID=
}

# 1. Running before record.
running "$tmp/r1.vmexit" "$tmp/g1.json"
applied=$(applied_of "$tmp/g1.json")
case $applied in
yes) WANT=$OFF ;;
no) WANT=0 ;;
*) fail "the guest cannot tell whether its offset was applied ($applied)" ;;
esac
echo "the guest ran with offset $WANT (tsc_offset_applied: $applied)"
$PY "$CHECK" "$OUT/vmexit" "$tmp/r1.vmexit" gt="$tmp/g1.json" $N $WANT "$tmp" debugfs >"$tmp/check" ||
	{ cat "$tmp/check"; fail "1. a guest running before record: the merge is not exact (above)"; }
sed 's/^/1. running before record: /' "$tmp/check"

# 2. Created while recording; its vCPUs stay for record's read after each traced write.
"$OUT/vmexit" record -o "$tmp/r2.vmexit" -- "$OUT/vmexit-guest" "${GARGS[@]}" \
	--guest-trace-out "$tmp/g2.json" --linger 1 2>"$tmp/err" || { cat "$tmp/err"; fail "record failed"; }
$PY "$CHECK" "$OUT/vmexit" "$tmp/r2.vmexit" gt="$tmp/g2.json" $N $WANT "$tmp" debugfs >"$tmp/check" ||
	{ cat "$tmp/check"; fail "2. a guest created while recording: the merge is not exact (above)"; }
sed 's/^/2. created while recording: /' "$tmp/check"
if [ $WANT = 0 ]; then
	grep -q "KVM traced the TSC offset $((OFF)) for vCPU [01] of guest 'gt' but applies 0" "$tmp/check" ||
		fail "2. KVM traced $OFF and applied 0, and report did not say so"
else
	! grep -q "KVM traced the TSC offset" "$tmp/check" || fail "2. a disagreement where there is none"
fi

# outside REC G.json WHAT: every guest event outside the recording: exit 1 with the counts, and
# --keep-outside writes it with a note. An offset KVM traced and did not apply (2^50 ticks) puts
# the events before the recording's start on a host whose TSC is past it (up for days), before
# the host clock's 0 on one up for less (kvm_pvm: vCPU 1's; vCPU 0's land after the end, by a
# first traced offset of minus the host's TSC): those cannot be placed at all, kept or not, and
# --keep-outside says the same line and exit 1.
outside() {
	"$OUT/vmexit" report -i "$1" --perfetto "$tmp/o.json" --guest-trace gt="$2" >/dev/null 2>"$tmp/err"
	local rc=$? all="all [0-9]* of its [0-9]* events fall outside the recording of guest 'gt'"
	[ $rc = 1 ] && [ "$(grep -c "$all" "$tmp/err")" = 1 ] ||
		{ cat "$tmp/err"; fail "$3: status $rc (expected 1) or not one 'all ... fall outside' line"; }
	echo "$3: $(grep "fall outside" "$tmp/err")"
	if grep -q "$all (.*): [0-9]* before the host clock's 0" "$tmp/err"; then
		"$OUT/vmexit" report -i "$1" --perfetto "$tmp/o.json" --guest-trace gt="$2" \
			--keep-outside >/dev/null 2>"$tmp/err2"
		rc=$?
		[ $rc = 1 ] && cmp -s "$tmp/err" "$tmp/err2" ||
			{ cat "$tmp/err2"; fail "$3: --keep-outside: status $rc, or not the same line"; }
		return
	fi
	"$OUT/vmexit" report -i "$1" --perfetto "$tmp/o.json" --guest-trace gt="$2" --keep-outside \
		>/dev/null 2>"$tmp/err" && grep -q "note: --guest-trace .* fall outside" "$tmp/err" &&
		grep -q '"cat":"guest"' "$tmp/o.json" ||
		{ cat "$tmp/err"; fail "$3: --keep-outside did not write the trace with a note"; }
}

# 3. No debugfs: the traced offsets only.
VMEXIT_KVM_DEBUGFS=$tmp/nodebugfs "$OUT/vmexit" record -o "$tmp/r3.vmexit" -- "$OUT/vmexit-guest" \
	"${GARGS[@]}" --guest-trace-out "$tmp/g3.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "record failed"; }
grep -q "debugfs not mounted: mount -t debugfs none /sys/kernel/debug" "$tmp/err" ||
	{ cat "$tmp/err"; fail "3. record did not say that debugfs is missing and how to mount it"; }
if [ $WANT = 0 ]; then
	outside "$tmp/r3.vmexit" "$tmp/g3.json" "3. traced offset not applied, no debugfs"
else
	$PY "$CHECK" "$OUT/vmexit" "$tmp/r3.vmexit" gt="$tmp/g3.json" $N $OFF "$tmp" trace >"$tmp/check" ||
		{ cat "$tmp/check"; fail "3. traced offsets only: the merge is not exact (above)"; }
	sed 's/^/3. no debugfs, traced offsets: /' "$tmp/check"
fi

# 4. A debugfs that says 0 for the guest's vCPUs (the VMM's pid is the shell's: exec).
mkdir -p "$tmp/fake"
VMEXIT_KVM_DEBUGFS=$tmp/fake "$OUT/vmexit" record -o "$tmp/r4.vmexit" -- sh -c '
	for v in 0 1; do mkdir -p "$1/$$-9/vcpu$v" && echo 0 >"$1/$$-9/vcpu$v/tsc-offset"; done
	shift; exec "$@"' sh "$tmp/fake" "$OUT/vmexit-guest" "${GARGS[@]}" \
	--guest-trace-out "$tmp/g4.json" 2>"$tmp/err" || { cat "$tmp/err"; fail "record failed"; }
"$OUT/vmexit" report -i "$tmp/r4.vmexit" --perfetto "$tmp/o.json" --guest-trace gt="$tmp/g4.json" \
	--keep-outside >/dev/null 2>"$tmp/err"
grep -q "KVM traced the TSC offset $((OFF)) for vCPU [01] of guest 'gt' but applies 0 (its debugfs tsc-offset; [0-9]* writes\{0,1\} so): placed by the applied one" "$tmp/err" ||
	{ cat "$tmp/err"; fail "4. debugfs 0 against the traced $OFF: no word of the disagreement"; }
echo "4. $(grep "KVM traced" "$tmp/err")"
if [ $WANT = 0 ]; then
	$PY "$CHECK" "$OUT/vmexit" "$tmp/r4.vmexit" gt="$tmp/g4.json" $N 0 "$tmp" debugfs >"$tmp/check" ||
		{ cat "$tmp/check"; fail "4. placed by debugfs' 0: the merge is not exact (above)"; }
	sed 's/^/4. debugfs 0, the truth: /' "$tmp/check"
else
	outside "$tmp/r4.vmexit" "$tmp/g4.json" "4. debugfs 0, not the truth"
fi

# 5. Running before record, no debugfs: no offset at all.
running "$tmp/r5.vmexit" "$tmp/g5.json" VMEXIT_KVM_DEBUGFS="$tmp/nodebugfs"

# Bad input: one line each, naming what is wrong, status 1.
bad() {	# bad WHAT GREP REC ARGS...: report of REC with ARGS fails with one line matching GREP
	local what=$1 re=$2 rec=$3
	shift 3
	"$OUT/vmexit" report -i "$rec" --perfetto "$tmp/bad.json" "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ $rc = 1 ] && grep -q -- "$re" "$tmp/err" ||
		{ cat "$tmp/err"; fail "$what: status $rc (expected 1) or no '$re' in the message"; }
	echo "ok: $what: $(head -n 1 "$tmp/err")"
}
bad "5. a running guest recorded without debugfs" \
	"guest 'gt' has no TSC offset in $tmp/r5.vmexit (record reads a running guest's from debugfs: mount -t debugfs none /sys/kernel/debug" \
	"$tmp/r5.vmexit" --guest-trace gt="$tmp/g5.json"
[ "$(wc -l <"$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "5. the refusal is not one line"; }
bad "a guest not in the recording" "no guest named 'nosuch' in $tmp/r1.vmexit" "$tmp/r1.vmexit" \
	--guest-trace nosuch="$tmp/g1.json"
head -c 3000 "$tmp/g1.json" >"$tmp/cut.json"
bad "a truncated trace" "$tmp/cut.json: offset 3000: the file ends inside the trace" "$tmp/r1.vmexit" \
	--guest-trace gt="$tmp/cut.json"
awk '!done && sub(/"vcpu":0/, "\"vcpu\":5") {done = 1} 1' "$tmp/g1.json" >"$tmp/v5.json"
bad "a vCPU without an offset" "$tmp/v5.json:2: vCPU 5 of guest 'gt' has no TSC offset" "$tmp/r1.vmexit" \
	--guest-trace gt="$tmp/v5.json"
"$OUT/vmexit" report -i "$tmp/r1.vmexit" --guest-trace gt="$tmp/g1.json" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && grep -q -- "--guest-trace adds tracks to a --perfetto trace" "$tmp/err" ||
	{ cat "$tmp/err"; fail "--guest-trace without --perfetto: status $rc (expected 2)"; }
echo "PASS: test_guest_trace_host"
