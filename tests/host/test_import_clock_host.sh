#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report -i of a trace.dat or a perf.data names the clock the capture says its times are on,
# wherever vmexit names the events' clock (the default line's header, --counters' messages),
# instead of vmexit's own CLOCK_MONOTONIC:
#  - perf.data: perf_clock unless recorded with -k; `perf record -k mono` is CLOCK_MONOTONIC,
#    and its exits' times then lie between CLOCK_MONOTONIC readings taken around the guest;
#    `-k raw` is CLOCK_MONOTONIC_RAW (some kernels refuse -k boot and -k tai here);
#  - trace.dat: the trace_clock the file records. trace-cmd extract records the top buffer's
#    (whatever an instance's), which is tracefs's trace_clock as the capture is extracted:
#    mono is named CLOCK_MONOTONIC, any other by its setting ("trace_clock=local").
# The --perfetto protobuf of each declares that clock: Perfetto's builtin id of a POSIX clock,
# else a clock of the trace's own (never CLOCK_MONOTONIC for perf_clock or trace_clock=local).
#
# Usage: tests/host/test_import_clock_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root or /dev/kvm; the reason is printed).
set -u
OUT=${1:?usage: $0 OUTDIR}
. "$(dirname "$0")/lib.sh"
capture_test_start clock "$OUT"
need_cmd python3 python3
need_cmd perf linux-perf
need_cmd protoc protobuf-compiler
fails=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mono_ns() { python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
EVENTS=(-e kvm:kvm_userspace_exit -e kvm:kvm_fpu)

ROOT=$(cd "$(dirname "$0")/../.." && pwd)	# the schema (in the nested bed: /docs)
# The clocks FILE's --perfetto protobuf declares: "DEFAULT SNAPSHOT-IDS..." (protoc's text).
proto_clocks() {
	chk "$VMEXIT" report -i "$1" --perfetto "$TMP/clk.pftrace" >/dev/null 2>&1 || { echo "(report failed)"; return; }
	protoc --decode=vmexit.perfetto.Trace -I "$ROOT/docs" "$ROOT/docs/perfetto-subset.proto" \
		<"$TMP/clk.pftrace" 2>/dev/null | python3 -c '
import re, sys
t = sys.stdin.read()
d = re.search(r"trace_packet_defaults \{\s*timestamp_clock_id: (\d+)", t)
s = re.search(r"clock_snapshot \{(.*?)\n  \}", t, re.S)
ids = re.findall(r"clock_id: (\d+)", s.group(1)) if s else []
print(d.group(1) if d else "none", *ids)'
}
# What it must declare for a capture on clock C: Perfetto's builtin id of a POSIX clock, else
# one of the sequence's own (64), either made the time base by a snapshot against boottime (6).
want_proto() {
	case $1 in
	CLOCK_MONOTONIC) echo "3 3 6" ;; CLOCK_MONOTONIC_RAW) echo "5 5 6" ;;
	CLOCK_BOOTTIME) echo "6" ;; *) echo "64 64 6" ;;
	esac
}
check_proto() {	# check_proto FILE CLOCK WHAT
	local got want
	got=$(proto_clocks "$1")
	want=$(want_proto "$2")
	[ "$got" = "$want" ] && pass "$3: protobuf declares clock ids $got ($2)" ||
		fail "$3: protobuf declares clock ids '$got', expected '$want' ($2)"
}

# The clock column of FILE's default-line header.
header_clock() {
	chk "$VMEXIT" report -i "$1" --events >"$TMP/lines" 2>/dev/null || { echo "(report failed)"; return; }
	head -1 "$TMP/lines" | awk '{ print $3 }'
}

# perf.data: the default clock, and two chosen with -k.
for k in "" mono raw; do
	f=$TMP/p${k:+-$k}.data
	before=$(mono_ns)
	perf record -q ${k:+-k $k} "${EVENTS[@]}" -o "$f" -- "$GUEST" --io 5 >/dev/null 2>"$TMP/perf.err" ||
		{ fail "perf record ${k:+-k $k}: $(cat "$TMP/perf.err")"; continue; }
	after=$(mono_ns)
	case $k in
	"") want=perf_clock ;; mono) want=CLOCK_MONOTONIC ;; raw) want=CLOCK_MONOTONIC_RAW ;;
	esac
	got=$(header_clock "$f")
	[ "$got" = "$want(s)" ] && pass "perf record ${k:+-k $k}: header says $got" ||
		fail "perf record ${k:+-k $k}: header says $got, expected $want(s)"
	check_proto "$f" "$want" "perf record ${k:+-k $k}"
	[ "$k" = mono ] || continue
	# Said CLOCK_MONOTONIC: the 6 exits' times are that clock's, within the guest's run.
	chk "$VMEXIT" report -i "$f" --events --json >"$TMP/mono.json" 2>/dev/null
	if python3 - "$TMP/mono.json" "$before" "$after" <<'EOF'; then
import json, sys
ts = [json.loads(l)['ts_ns'] for l in open(sys.argv[1])]
lo, hi = int(sys.argv[2]), int(sys.argv[3])
out = [t for t in ts if not lo <= t <= hi]
print(f'{len(ts)} exits, {len(out)} outside [{lo}, {hi}]')
sys.exit(1 if len(ts) != 6 or out else 0)
EOF
		pass "perf record -k mono: the exits' times lie in the guest's CLOCK_MONOTONIC span"
	else
		fail "perf record -k mono: exits not on CLOCK_MONOTONIC (above)"
	fi
done

# --counters without a start: its message names the events' clock too.
printf '     0.100000000,1,,context-switches,100000000,100.00,,\n' >"$TMP/ps.csv"
chk "$VMEXIT" report -i "$TMP/p.data" --perfetto "$TMP/c.json" --counters "$TMP/ps.csv" \
	2>"$TMP/c.err" >/dev/null
grep -q "start=S (perf_clock seconds" "$TMP/c.err" && pass "--counters: start=S on perf_clock" ||
	fail "--counters message: $(cat "$TMP/c.err")"

# trace.dat: the guest's exits in a private instance, extracted; the file records the top
# buffer's clock at that moment (read before and after: a change in between is a retry).
top_clock() { sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/tracing/trace_clock; }
for try in 1 2 3; do
	rm -f "$TMP/t.dat"
	[ -d "$ITD" ] && rmdir "$ITD"	# a failed extract leaves it
	mkdir "$ITD" || { fail "cannot create the tracefs instance $ITD"; break; }
	echo 1 >"$ITD/options/event-fork"
	sh -c "echo \$\$ >$ITD/set_event_pid; echo 1 >$ITD/events/kvm/enable; exec $GUEST --io 5" \
		>/dev/null 2>"$TMP/guest.err" || fail "guest: $(cat "$TMP/guest.err")"
	echo 0 >"$ITD/tracing_on"
	clock=$(top_clock)
	trace-cmd extract -B "$INST" -o "$TMP/t.dat" >"$TMP/tc.out" 2>&1
	rc=$?
	[ "$(top_clock)" = "$clock" ] || rc=1
	[ -d "$ITD" ] && rmdir "$ITD"
	[ $rc = 0 ] && break
	echo "note: trace-cmd extract: $(tr '\n' ' ' <"$TMP/tc.out")"
done
case $clock in
mono) want=CLOCK_MONOTONIC ;; mono_raw) want=CLOCK_MONOTONIC_RAW ;;
boot) want=CLOCK_BOOTTIME ;; tai) want=CLOCK_TAI ;; *) want=trace_clock=$clock ;;
esac
got=$(header_clock "$TMP/t.dat")
[ "$got" = "$want(s)" ] && pass "trace.dat (trace_clock $clock): header says $got" ||
	fail "trace.dat (trace_clock $clock): header says $got, expected $want(s)"
check_proto "$TMP/t.dat" "$want" "trace.dat (trace_clock $clock)"
# vmexit's own recording: CLOCK_MONOTONIC.
chk "$VMEXIT" record -o "$TMP/r.vmexit" -- "$GUEST" --io 5 >/dev/null 2>&1
check_proto "$TMP/r.vmexit" CLOCK_MONOTONIC "vmexit record"

if sanitizer_reports; then
	fail "sanitizer reports (above)"
fi
[ $fails = 0 ] || { echo "FAIL: test_import_clock_host: $fails check(s) failed"; exit 1; }
echo "PASS: test_import_clock_host"
