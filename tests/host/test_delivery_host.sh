#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stream delivers while it runs, not only at its end: the kernel wakes the reader only once a
# batch of records is pending, so at a low rate each event must still reach stdout (a pipe)
# within a bounded delay, and a --stuck line soon after the exit has been in flight that long.
# The bound is generous (DELAY_MAX_MS, against a design of about 20 ms) so that a loaded host
# or the nested bed does not fail it; it is not a benchmark.
#
# Usage: tests/host/test_delivery_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# Expected numbers come from the workload: `vmexit-guest --io N --io-sleep-us US` makes N+1
# KVM_EXIT_IO per vCPU and its VMM sleeps US before the KVM_RUN after each of the first N: N
# user exits complete, US apart, and each is in flight for US (where kvm_exit fires, so is the
# kernel IO exit around it). Every time compared is CLOCK_MONOTONIC, the events' clock.
set -u
OUT=${1:?usage: $0 OUTDIR}
OUT=$(cd "$OUT" && pwd)
DELAY_MAX_MS=1000
. "$(dirname "$0")/lib.sh"
stream_test_start delivery

# timed_stream NAME ARGS...: runs `vmexit ARGS` with stdout on a pipe; each line it writes,
# prefixed with the CLOCK_MONOTONIC and CLOCK_REALTIME ns when it came out of the pipe (JSON
# times are monotonic, the text lines' wall clock), into $TMP/NAME.
timed_stream() {
	local name=$1; shift
	local rc
	timeout 120 python3 - "$TMP/$name" "$@" 2>"$TMP/$name.err" <<'EOF'
import subprocess, sys, time
with open(sys.argv[1], "w") as out:
    p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE)
    for line in p.stdout:
        out.write(f"{time.monotonic_ns()} {time.time_ns()} {line.decode()}")
    sys.exit(p.wait())
EOF
	rc=$?
	cat "$TMP/$name.err" >>"$TMP/all-stderr"
	return $rc
}

# 1. At 5 events a second (a VMM that takes 200 ms per exit), each exit's line comes out
# within DELAY_MAX_MS of its end: the reader reads on its own clock.
N=8
SLEEP_US=200000
if timed_stream low "$VMEXIT" stream --json -- "$GUEST" --io $N --io-sleep-us $SLEEP_US; then
	if got=$(python3 - "$TMP/low" $N $DELAY_MAX_MS 2>&1 <<'EOF'
import json, sys
n, max_ms = int(sys.argv[2]), int(sys.argv[3])
ev = []
for l in open(sys.argv[1]):
    t, _, js = l.split(" ", 2)
    o = json.loads(js)
    assert "lost" not in o, f"records lost: {o}"
    if o.get("type") == "user_exit" and o["reason_name"] == "IO" and not o.get("in_flight"):
        ev.append((int(t) - (o["ts_ns"] + o["latency_ns"])) / 1e6)
assert len(ev) == n, f"{len(ev)} completed IO exits, the guest made {n}"
late = [d for d in ev if d > max_ms]
assert not late, f"lines later than {max_ms} ms after their exit: {late}"
assert all(d >= 0 for d in ev), f"a line out before its exit ended: {ev}"
print(f"{len(ev)} exits, latest line {max(ev):.1f} ms after its exit")
EOF
	); then
		pass "stream --json: $got"
	else
		fail "stream --json at a low rate: $got"
	fi
else
	fail "stream --json -- guest: exit $?: $(cat "$TMP/low.err")"
fi

# 2. --stuck: each exit in flight for SLEEP2_US reported within DELAY_MAX_MS of reaching the
# threshold, while it still is, in text and JSON.
N2=2
SLEEP2_US=1500000
STUCK_MS=300
for mode in json text; do
	flag=--json
	[ $mode = text ] && flag=
	if ! timed_stream stuck-$mode "$VMEXIT" stream $flag --stuck ${STUCK_MS}ms -- \
	     "$GUEST" --io $N2 --io-sleep-us $SLEEP2_US; then
		fail "stream $flag --stuck: exit $?: $(cat "$TMP/stuck-$mode.err")"
		continue
	fi
	if got=$(python3 - "$TMP/stuck-$mode" $mode $N2 $STUCK_MS $SLEEP2_US $DELAY_MAX_MS 2>&1 <<'EOF'
import json, re, sys
mode, n, stuck_ms, sleep_us, max_ms = sys.argv[2], *map(int, sys.argv[3:])
stuck = []	# (kind, start ns, age ns, arrival ns)
ended = {}	# JSON: start ns -> latency ns of each exit
for l in open(sys.argv[1]):
    t, real, line = l.split(" ", 2)
    if mode == "json":
        o = json.loads(line)
        if o.get("stuck"):
            stuck.append((o["kind"], o["ts_ns"], o["age_ns"], int(t)))
        elif "latency_ns" in o:
            ended.setdefault(o["ts_ns"], []).append(o["latency_ns"])
        continue
    # "# STUCK guest pid P tid T vcpu V REASON in flight for A s since S" (S: wall clock)
    m = re.match(r"# STUCK .* (\S+) in flight for ([0-9.]+) s since ([0-9.]+)$", line)
    if m:
        kind = "user" if m.group(1).startswith("KVM_EXIT_") else "kernel"
        stuck.append((kind, int(float(m.group(3)) * 1e9), int(float(m.group(2)) * 1e9),
                      int(real)))
user = [s for s in stuck if s[0] == "user"]
assert len(user) == n, f"{len(user)} user exits reported stuck, the VMM sat in {n}: {stuck}"
delays = []
for kind, start, age, t in stuck:
    assert age >= stuck_ms * 1e6, f"reported at {age / 1e6:.1f} ms, before {stuck_ms} ms"
    delays.append((t - start) / 1e6 - stuck_ms)
# Reported while in flight: no older than the exit was when it ended.
for kind, start, age, t in stuck if mode == "json" else []:
    lat = ended.get(start, [])
    assert len(lat) == 1 and lat[0] >= age, f"stuck at {start} (age {age}): ended {lat}"
assert max(delays) <= max_ms, f"stuck lines {delays} ms after the threshold, over {max_ms}"
print(f"{len(stuck)} stuck lines, latest {max(delays):.1f} ms after its exit reached {stuck_ms} ms")
EOF
	); then
		pass "stream $flag --stuck: $got"
	else
		fail "stream $flag --stuck: $got"
	fi
done

# 3. `stream --json | head -1` at 10 exits a second: head has an event, and vmexit is gone (its
# next write fails), within DELAY_MAX_MS plus a start-up, long before the guest's 60 s are up.
"$GUEST" --io 100 --io-sleep-us 100000 --seconds 60 >/dev/null 2>&1 &
gpid=$!
t0=$(date +%s%N)
line=$( (chk "$VMEXIT" stream --json -p $gpid 2>"$TMP/head.err"; echo "exit $?" >"$TMP/head.rc") |
	head -1)
# The subshell has ended once head's pipe closed and vmexit exited: the rc file says when.
for _ in $(seq 600); do [ -s "$TMP/head.rc" ] && break; sleep 0.1; done
ms=$((($(date +%s%N) - t0) / 1000000))
kill $gpid 2>/dev/null
wait $gpid 2>/dev/null
if [[ $line == *'"type":"'* ]] && [ -s "$TMP/head.rc" ] &&
   [ $ms -le $((DELAY_MAX_MS + 20000)) ]; then
	pass "stream | head -1: an event, and vmexit gone after $ms ms ($(cat "$TMP/head.rc"))"
else
	fail "stream | head -1: line '$line', vmexit: $(cat "$TMP/head.rc" 2>/dev/null) after $ms ms"
fi

if sanitizer_reports; then
	fail "sanitizer reports (above)"
fi
[ $fails -eq 0 ] && echo "PASS: events and stuck lines delivered while stream runs" && exit 0
echo "FAIL: $fails check(s) failed"
exit 1
