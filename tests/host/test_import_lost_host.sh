#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report -i of a trace.dat whose ring buffers overflowed: the summary counts the events the
# capture lost and names the fix where the loss happened, trace-cmd's buffer size (record -b),
# not vmexit's --ringbuf-kb, which no setting of vmexit's could have prevented.
#
# The capture overflows by construction: a private tracefs instance of 4 KB per CPU, written
# by the bundled guest's 3000 IO exits (each a kvm_userspace_exit, kvm_pio and kvm_fpu records
# of tens of bytes) and read by nobody until the guest has ended.
#
# Usage: tests/host/test_import_lost_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root or /dev/kvm; the reason is printed).
set -u
OUT=${1:?usage: $0 OUTDIR}
. "$(dirname "$0")/lib.sh"
capture_test_start lost "$OUT"

for try in 1 2 3; do
	rm -f "$TMP/t.dat"
	[ -d "$ITD" ] && rmdir "$ITD"	# a failed extract leaves it
	mkdir "$ITD" || fail "cannot create the tracefs instance $ITD"
	echo 4 >"$ITD/buffer_size_kb"
	echo 1 >"$ITD/options/event-fork"
	sh -c "echo \$\$ >$ITD/set_event_pid; echo 1 >$ITD/events/kvm/enable; exec $GUEST --io 3000" \
		>/dev/null 2>"$TMP/guest.err" || fail "guest: $(cat "$TMP/guest.err")"
	echo 0 >"$ITD/tracing_on"
	trace-cmd extract -B "$INST" -o "$TMP/t.dat" >"$TMP/tc.out" 2>&1
	rc=$?
	[ -d "$ITD" ] && rmdir "$ITD"
	[ $rc = 0 ] && break
	echo "note: trace-cmd extract: $(tr '\n' ' ' <"$TMP/tc.out")"
	[ $try = 3 ] && fail "trace-cmd extract failed $try times (above)"
done
chk "$VMEXIT" report -i "$TMP/t.dat" >"$TMP/summary" 2>/dev/null ||
	fail "report -i t.dat exited $?"
lost=$(grep "^LOST: [0-9]* events the capture lost" "$TMP/summary")
[ -n "$lost" ] || { cat "$TMP/summary"; fail "an overflowed trace.dat: no LOST line for its loss"; }
echo "$lost" | grep -q "trace-cmd record -b" || fail "the LOST line names no trace-cmd fix: $lost"
if grep -q -- "--ringbuf-kb" "$TMP/summary"; then
	fail "the summary of a trace.dat names vmexit's --ringbuf-kb: $(grep -- --ringbuf-kb "$TMP/summary")"
fi
if sanitizer_reports; then
	fail "sanitizer reports (above)"
fi
echo "ok: $lost"
echo "PASS: test_import_lost_host"
