#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report --guest-trace GUEST=FILE with FILE a trace-cmd trace.dat on trace_clock x86-tsc, told
# by its content: each record an instant on the guest's vCPU track, placed by the recording's
# TSC offset and clock pairs.
#
# The "guest trace" is taken on the host, so its TSC values are known: the bundled guest runs
# with its vCPU's TSC offset set to 0 (guest TSC = host TSC), pinned to CPU 0 (the records'
# CPU is then vCPU 0's), while a private tracefs instance on x86-tsc records its
# kvm_userspace_exit events and `vmexit record` the same exits on CLOCK_MONOTONIC. Placed,
# the i-th instant must sit on the i-th exit to the VMM of the recording: within 250 us, a
# quarter of the 1 ms between two exits (two clocks read at one tracepoint hit, and the
# TSC-to-ns conversion by the recording's pairs and the kernel's TSC kHz; tens of us here).
# Unshifted, or with the ticks read as ns, they would land hours to days away. The vCPU's first
# exit is left out: vmexit's own record of it starts before its kvm_userspace_exit hit (45 us
# on the kvm_pvm host, 1.4 ms in the TCG bed, the others within 11 us in both), which is the
# recording's matter, not the trace.dat's placement.
# trace-cmd extract records the top buffer's trace_clock, so it is the capture's while it
# extracts and restored right after. Then a trace.dat on another clock is refused, naming the fix.
#
# Usage: tests/host/test_guest_tracedat_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
set -u
OUT=${1:?usage: $0 OUTDIR}
. "$(dirname "$0")/lib.sh"
stream_test_start guesttdat
need_cmd trace-cmd trace-cmd
need_cmd taskset util-linux
N=20
INST=vmexit-gtdat-$$
ITD=/sys/kernel/tracing/instances/$INST
TOPCLK=/sys/kernel/tracing/trace_clock
grep -q x86-tsc "$TOPCLK" || skip "no x86-tsc trace clock (not an x86 host)"
top_clock=$(sed 's/.*\[\(.*\)\].*/\1/' "$TOPCLK")
trap '[ "$(sed "s/.*\[\(.*\)\].*/\1/" $TOPCLK)" = "$top_clock" ] || echo "$top_clock" >$TOPCLK;
	[ -d "$ITD" ] && rmdir "$ITD"; rm -rf "$TMP"' EXIT

# capture CLOCK FILE CMD...: CMD's kvm_userspace_exit events (the events of the process whose
# pid it writes to $ITD/set_event_pid, and its threads) in a private instance on CLOCK, into the
# trace.dat FILE. extract removes the instance; it fails when /proc/kallsyms changes while it
# copies it (BPF programs loading): then the capture is made again, up to 4 times.
capture() {
	local clock=$1 file=$2 try rc
	shift 2
	for try in 1 2 3 4; do
		[ -d "$ITD" ] && rmdir "$ITD"
		mkdir "$ITD" || { fail "cannot create the tracefs instance $ITD"; return 1; }
		echo "$clock" >"$ITD/trace_clock"
		echo 1 >"$ITD/options/event-fork"
		"$@" >/dev/null 2>"$TMP/cmd.err" || { fail "$*: $(cat "$TMP/cmd.err")"; return 1; }
		echo 0 >"$ITD/tracing_on"
		echo "$clock" >"$TOPCLK"
		trace-cmd extract -B "$INST" -o "$file" >"$TMP/tc.out" 2>&1
		rc=$?
		echo "$top_clock" >"$TOPCLK"
		[ $rc = 0 ] && return 0
		echo "note: trace-cmd extract: $(tr '\n' ' ' <"$TMP/tc.out")"
	done
	fail "trace-cmd extract failed $try times (above)"
	return 1
}
FOLLOW="echo \$\$ >$ITD/set_event_pid; echo 1 >$ITD/events/kvm/kvm_userspace_exit/enable"
capture x86-tsc "$TMP/g.dat" chk "$VMEXIT" record --force -o "$TMP/r.vmexit" -- taskset -c 0 \
	sh -c "$FOLLOW; exec $GUEST --name gtdat --io $N --io-sleep-us 1000 --tsc-offset 0"

chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/m.json" --guest-trace gtdat="$TMP/g.dat" \
	2>"$TMP/m.err" || fail "report --guest-trace gtdat=g.dat: $(cat "$TMP/m.err")"
if python3 - "$TMP/m.json" $N <<'EOF'; then
import json, sys
t = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
pid = next(e['pid'] for e in t if e.get('name') == 'process_name' and e['args']['name'] == 'gtdat')
tracks = {e['tid']: e['args']['name'] for e in t if e.get('name') == 'thread_name' and e['pid'] == pid}
exits = sorted(e['ts'] for e in t if e['pid'] == pid and e.get('cat') == 'kvm_userspace_exit')
marks = [e for e in t if e['pid'] == pid and e.get('cat') == 'guest']
bad = [e for e in marks if e['ph'] != 'i' or e['name'] != 'kvm:kvm_userspace_exit' or
       tracks[e['tid']] != 'guest vCPU 0']
ts = sorted(e['ts'] for e in marks)
print(f'{len(exits)} exits to the VMM, {len(ts)} guest-trace instants')
# the guest's --io N: N + 1 IO exits, and as many on both sides
if len(exits) != n + 1 or len(ts) != len(exits) or bad:
    print('unexpected instants or counts:', bad[:3])
    sys.exit(1)
d = [float(a - b) for a, b in zip(ts, exits)]
print('instant - exit (us):', ' '.join('%.1f' % x for x in d))
# the first exit aside (see the top of this file)
sys.exit(1 if max(abs(x) for x in d[1:]) > 250 else 0)
EOF
	pass "trace.dat on x86-tsc: every record placed on its exit"
else
	fail "trace.dat on x86-tsc: placement (above)"
fi

# The same trace on a clock that is no TSC (the top buffer's own): refused, with the option to
# record it with.
capture "$top_clock" "$TMP/l.dat" sh -c "$FOLLOW; exec $GUEST --io 1"
chk "$VMEXIT" report -i "$TMP/r.vmexit" --perfetto "$TMP/l.json" --guest-trace gtdat="$TMP/l.dat" \
	2>"$TMP/l.err" && fail "a trace.dat on trace_clock $top_clock was placed as TSC ticks"
grep -q "record it in the guest with trace-cmd record -C x86-tsc" "$TMP/l.err" &&
	[ "$(grep -c '^vmexit:' "$TMP/l.err")" = 1 ] && pass "trace.dat on $top_clock: $(cat "$TMP/l.err")" ||
	fail "trace.dat on $top_clock: $(cat "$TMP/l.err")"

if sanitizer_reports; then
	fail "sanitizer reports (above)"
fi
[ $fails = 0 ] || { echo "FAIL: test_guest_tracedat_host: $fails check(s) failed"; exit 1; }
echo "PASS: test_guest_tracedat_host"
