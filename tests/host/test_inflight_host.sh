#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Every exit accounted: stat, stream and record + report count the same N exits of a guest that
# made exactly N, the exits still in flight included (flagged in_flight); a VMM stopped
# mid-exit shows up in stream --stuck while the session runs and, once, at the session's end;
# started on a busy guest, stat and serve never complete more exits than they counted.
#
# Usage: tests/host/test_inflight_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# Expected numbers come from the workload: vmexit-guest --json tallies, per vCPU, the KVM_RUN
# results it got (exits.IO) and the `out` instructions its guest executed (tally.out); each
# `out` is one kernel IO exit where kvm_exit fires (this host: never; the SVM bed: always).
set -u
OUT=${1:?usage: $0 OUTDIR}
OUT=$(cd "$OUT" && pwd)
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
N=7
V=2

[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || { echo "FAIL: $VMEXIT or $GUEST missing"; exit 1; }
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
fails=0
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed to check JSON"; exit 1; }

TMP=$(mktemp -d /tmp/vmexit-test-inflight.XXXXXX)
gpid=
cleanup() {
	[ -n "$gpid" ] && { kill -CONT "$gpid"; kill "$gpid"; } 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
chmod 755 "$TMP"

need_stream
"$GUEST" --io 1 >/dev/null 2>&1 || { echo "FAIL: $GUEST --io 1 failed although /dev/kvm opens"; exit 1; }
kfires=0
kvm_exit_fires "$GUEST" && kfires=1

# The guest as the traced command, its tally in $TMP/NAME.tally (exec: the same pid).
run_guest() {	# run_guest NAME VMEXIT-ARGS...
	local name=$1; shift
	chk "$VMEXIT" "$@" -- sh -c "exec '$GUEST' --io $N --vcpus $V --json >'$TMP/$name.tally'" \
		2>"$TMP/$name.err"
}

# Per kind, what the guest did: "USER_IO KERNEL_IO" (kernel IO only where kvm_exit fires).
tally() {
	python3 - "$1" "$kfires" <<'EOF'
import json, sys
vm = json.loads(open(sys.argv[1]).read())
io = sum(v["exits"]["IO"] for v in vm["vcpus"])
out = sum(v["tally"]["out"] for v in vm["vcpus"])
print(io, out * int(sys.argv[2]))
EOF
}

# 1. N of N. stat: rows' count; stream: events; record + report: rows' count, and the exits
# that never completed (one user IO exit per vCPU, and the kernel exit that led to it) are
# counted but have no latency.
run_guest stat stat --json >"$TMP/stat.json" || fail "stat: $(cat "$TMP/stat.err")"
run_guest stream stream --json >"$TMP/stream.json" || fail "stream: $(cat "$TMP/stream.err")"
run_guest record record -o "$TMP/rec.vmexit" >/dev/null || fail "record: $(cat "$TMP/record.err")"
chk "$VMEXIT" report -i "$TMP/rec.vmexit" --json >"$TMP/report.json" 2>"$TMP/report.err" ||
	fail "report: $(cat "$TMP/report.err")"
for name in stat stream record; do
	read -r uio kio < <(tally "$TMP/$name.tally") || fail "$name: no tally from the guest"
	[ "$uio" -gt "$((V * N))" ] || fail "$name: the guest made $uio IO exits, expected > V*N"
	eval "${name}_want='$uio $kio'"
done
# Rows of the final object: "USER_IO_COUNT USER_IO_COMPLETED KERNEL_IO_COUNT KERNEL_IO_COMPLETED".
rows='import json, os, sys
exec(os.environ["PY_KERNEL_REASONS"])
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
u = [r for r in o["rows"] if r["kind"] == "user" and r["reason_name"] == "IO"]
k = [r for r in o["rows"] if (r["isa"], r["reason"]) in KIO]
print(sum(r["count"] for r in u), sum(r["completed"] for r in u),
      sum(r["count"] for r in k), sum(r["completed"] for r in k))'
read -r uc ud kc kd < <(python3 -c "$rows" "$TMP/stat.json")
read -r uio kio <<<"$stat_want"
[ "$uc $kc" = "$uio $kio" ] && pass "stat: $uc IO exits to the VMM, $kc kernel IO exits" ||
	fail "stat: $uc IO exits to the VMM, $kc kernel IO exits; the guest made $uio and $kio"
[ "$ud" = $((uio - V)) ] && pass "stat: $ud completed, one per vCPU still in flight" ||
	fail "stat: $ud IO exits completed, expected $((uio - V))"
read -r uc ud kc kd < <(python3 -c "$rows" "$TMP/report.json")
read -r uio kio <<<"$record_want"
[ "$uc $kc" = "$uio $kio" ] && pass "record + report: $uc IO exits to the VMM, $kc kernel IO exits" ||
	fail "record + report: $uc IO exits to the VMM, $kc kernel IO; the guest made $uio and $kio"
[ "$ud $kd" = "$((uio - V)) $((kio - kfires * V))" ] &&
	pass "record + report: $ud and $kd completed, the others in flight" ||
	fail "record + report: $ud and $kd completed, expected $((uio - V)) $((kio - kfires * V))"
# stream: every exit once; the in-flight ones are each vCPU's last (its thread ended first).
read -r uio kio <<<"$stream_want"
if got=$(python3 - "$TMP/stream.json" <<'EOF'
import json, os, sys
exec(os.environ["PY_KERNEL_REASONS"])
ev = [json.loads(l) for l in open(sys.argv[1])]
assert not [e for e in ev if "lost" in e], "records lost"
u = [e for e in ev if e.get("type") == "user_exit" and e["reason_name"] == "IO"]
k = [e for e in ev if e.get("type") == "exit" and (e["isa"], e["reason"]) in KIO]
for tid in {e["tid"] for e in u}:
    mine = sorted((e["ts_ns"], e.get("in_flight", False)) for e in u if e["tid"] == tid)
    assert [f for _, f in mine] == [False] * (len(mine) - 1) + [True], f"tid {tid}: {mine}"
print(len(u), len(k), sum(e.get("in_flight", False) for e in u + k))
EOF
); then
	read -r gu gk gf <<<"$got"
	[ "$gu $gk" = "$uio $kio" ] && pass "stream: $gu IO exits to the VMM, $gk kernel IO exits" ||
		fail "stream: $gu IO exits to the VMM, $gk kernel IO exits; the guest made $uio, $kio"
	[ "$gf" = $((V + kfires * V)) ] && pass "stream: $gf in flight, each vCPU's last" ||
		fail "stream: $gf exits in flight, expected $((V + kfires * V))"
else
	fail "stream --json output: $got"
fi

# 2. A VMM stopped mid-exit. Its vCPUs spend their time in the VMM (--io-sleep-us), so SIGSTOP
# stops each in a user exit: stream --stuck reports each once while it runs, then the session
# ends and each is emitted once, in flight, as old as it was then. record, attached at the same
# time (two vmexit sessions at once), keeps them too.
"$GUEST" --io 3 --vcpus $V --seconds 600 --io-sleep-us 20000 >/dev/null 2>&1 &
gpid=$!
STUCK_MS=400
"$VMEXIT" stream --json --stuck ${STUCK_MS}ms -p $gpid >"$TMP/stop.json" 2>"$TMP/stop.err" &
spid=$!
"$VMEXIT" record -o "$TMP/stop.vmexit" -p $gpid >/dev/null 2>"$TMP/stoprec.err" &
rpid=$!
# Both attached once each has seen an exit of every vCPU (the VMM completes one each 20 ms).
seen() { grep -c "\"type\":\"user_exit\"" "$TMP/stop.json" 2>/dev/null; }
# record's file has data once it flushed (once a second) an event. Generous for a TCG bed.
for _ in $(seq 3000); do
	[ "$(seen)" -ge $((4 * V)) ] && [ -s "$TMP/stop.vmexit" ] && break
	sleep 0.1
done
kill -STOP $gpid
stopped=$(date +%s%N)
# Event-driven: wait for every vCPU's stuck line (generous for a slow TCG bed).
for _ in $(seq 1200); do
	[ "$(grep -c '"stuck":true' "$TMP/stop.json")" -ge $V ] && break
	sleep 0.1
done
sleep 0.5
ended=$(date +%s%N)	# the session ends after this: the exits stopped are at least this old
kill -INT $spid $rpid
wait $spid
src=$?
wait $rpid
rrc=$?
kill -CONT $gpid
kill $gpid
wait $gpid 2>/dev/null
gpid=
[ $src = 0 ] && [ $rrc = 0 ] || fail "stream/record after SIGINT: exit $src/$rrc: $(cat "$TMP/stop.err" "$TMP/stoprec.err")"
if python3 - "$TMP/stop.json" $V $kfires $STUCK_MS $(((ended - stopped) / 1000000)) <<'EOF'
import json, os, sys
exec(os.environ["PY_KERNEL_REASONS"])
lines = [json.loads(l) for l in open(sys.argv[1])]
v, kfires, stuck_ms, stopped_ms = (int(a) for a in sys.argv[2:6])
stuck = [o for o in lines if o.get("stuck")]
ev = [o for o in lines if "type" in o]
left = [e for e in ev if e.get("in_flight")]
uleft = [e for e in left if e["type"] == "user_exit"]
# Each exit reported stuck once, past the threshold, and emitted once at its end with its full
# latency (a busy host can make a 20 ms handler that slow before the stop: those completed).
ustuck = [s for s in stuck if s["kind"] == "user"]
assert len({(s["tid"], s["ts_ns"]) for s in stuck}) == len(stuck), "an exit reported stuck twice"
assert all(s["age_ns"] >= stuck_ms * 1e6 for s in stuck), "stuck before the threshold"
for s in stuck:
    same = [e for e in ev if e["tid"] == s["tid"] and e["ts_ns"] == s["ts_ns"]]
    assert len(same) == 1 and same[0]["latency_ns"] >= s["age_ns"], f"stuck {s}: emitted as {same}"
# Exactly one user exit per vCPU left in flight at the end, reported stuck before, as old as
# the stop (at least the time from the stop to SIGINT, minus a 20 ms handler).
assert len(uleft) == v == len({e["tid"] for e in uleft}), f"user exits in flight: {uleft}"
for e in uleft:
    assert [s for s in ustuck if (s["tid"], s["ts_ns"]) == (e["tid"], e["ts_ns"])], \
        f"in flight at the end, never reported stuck: {e}"
    assert e["latency_ns"] >= (stopped_ms - 20) * 1e6 > 0, f"age {e}"
# Where kvm_exit fires, the kernel exit that led to each user exit is in flight too.
kleft = [e for e in left if e["type"] == "exit"]
assert len(kleft) == kfires * v, f"kernel exits in flight: {kleft}"
assert len({e["tid"] for e in left}) == v
print(f"{len(stuck)} stuck lines, {len(left)} exits in flight at the end, "
      f"{min(e['latency_ns'] for e in uleft) / 1e6:.0f} ms old or more")
EOF
then pass "stream --stuck and the end of a session with a stopped VMM"
else fail "stream with a stopped VMM: $(head -c 2000 "$TMP/stop.json")"; fi
chk "$VMEXIT" report -i "$TMP/stop.vmexit" --events --json >"$TMP/stoprep.json" ||
	fail "report of the stopped VMM's recording"
got=$(python3 -c 'import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if "\"type\"" in l]
print(sum(1 for e in ev if e.get("in_flight") and e["type"] == "user_exit"))' "$TMP/stoprep.json")
[ "$got" = $V ] && pass "record: $got user exits in flight at the end, flag kept in the file" ||
	fail "record: $got user exits in flight at the end, expected $V"

# TIME% counts the part of each exit inside its interval: a vCPU is in one exit of a kind at a
# time, so its rows of that kind never add up to more than 100 % of an interval, even when its
# VMM sleeps 0.5 s in exits that span 0.3 s intervals (their whole latency used to be booked
# where they completed: 166 %). Some interval is mostly spent in them.
chk "$VMEXIT" stat --json --by vcpu 0.3 -- "$GUEST" --vcpus $V --io 3 --io-sleep-us 500000 \
	>"$TMP/pct.json" || fail "stat of a VMM that sleeps in its exits"
if python3 - "$TMP/pct.json" <<'EOF'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
top, most = 0, 0
for o in objs[:-1]:
    per = {}
    for r in o["rows"]:
        per[(r["vcpu"], r["kind"])] = per.get((r["vcpu"], r["kind"]), 0) + r["time_pct"]
    top = max([top] + list(per.values()))
    most = max([most] + [r["time_pct"] for r in o["rows"] if r["kind"] == "user"])
print(f"{len(objs) - 1} intervals: at most {top:.2f} % of one vCPU's interval in its exits "
      f"of one kind; an exit to the VMM row at {most:.2f} %")
assert objs[-1]["final"] and top <= 100.5 and most >= 50, (top, most)
EOF
then pass "TIME% per vCPU at most 100 % of each interval"
else fail "TIME% of a VMM that sleeps in its exits: $(head -c 2000 "$TMP/pct.json")"; fi
# In the table, a row none of whose exits completed in the interval (each vCPU's first 0.5 s exit,
# begun in the 0.3 s interval) has no latency: `-`, never 0ns.
chk "$VMEXIT" stat --by vcpu 0.3 -- "$GUEST" --vcpus $V --io 3 --io-sleep-us 500000 \
	>"$TMP/pct.txt" || fail "stat (table) of a VMM that sleeps in its exits"
nolat=$(grep -cE ' KVM_EXIT_IO +1 +[0-9.]+ +[0-9.]+% +- +- +- +- +-$' "$TMP/pct.txt")
[ "$nolat" -ge 1 ] && ! grep -qE ' 0ns$' "$TMP/pct.txt" &&
	pass "rows with no completed exit show - for their latency ($nolat)" ||
	fail "rows with no completed exit: $(cat "$TMP/pct.txt")"

# STUCK lists only exits in flight for --stuck or more. (1) make demo's run: every vCPU thread
# ends in its last exit (the done port's, microseconds): no STUCK section, no JSON in_flight
# entry, at any sample; the summary counts them ("ended with their thread"), one per vCPU
# thread at least (two where kvm_exit fires: the guest exit too).
chk "$VMEXIT" stat 0.2 -- "$GUEST" --vms 2 --vcpus 2 --io 200 --mmio 50 >"$TMP/demo.txt" ||
	fail "stat 0.2 -- $GUEST --vms 2 --vcpus 2"
chk "$VMEXIT" stat --json 0.2 -- "$GUEST" --vms 2 --vcpus 2 --io 200 --mmio 50 \
	>"$TMP/demo.json" || fail "stat --json 0.2 -- $GUEST --vms 2 --vcpus 2"
ended=$(sed -n 's/^note: [0-9]* exit(s) counted with no latency: \([0-9]*\) ended with their thread.*/\1/p' \
	"$TMP/demo.txt")
if ! grep -q STUCK "$TMP/demo.txt" && [ "${ended:-0}" -ge 4 ] &&
	python3 -c 'import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
sys.exit(0 if objs and objs[-1]["final"] and not any(o["in_flight"] for o in objs) else 1)' \
	"$TMP/demo.json"
then pass "a thread's last exit is not stuck: no STUCK, in_flight empty; $ended counted as ended"
else fail "make demo's run lists exits that are not stuck: $(grep -A8 -E 'STUCK|^note' "$TMP/demo.txt"; grep -o '"in_flight":\[[^]]' "$TMP/demo.json" | head -3)"
fi
# (2) A VMM asleep 1.5 s in an IO exit, stat without an interval (one sample, at the end, when
# the exit is over): the summary's STUCK lists it, completed, >= 1.5 s; and nothing shorter
# than --stuck (the done port's exit, ended with its thread). The same in JSON.
chk "$VMEXIT" stat --stuck 500ms -- "$GUEST" --io 1 --io-sleep-us 1500000 >"$TMP/slept.txt" ||
	fail "stat --stuck 500ms -- $GUEST --io-sleep-us 1500000"
chk "$VMEXIT" stat --json --stuck 500ms -- "$GUEST" --io 1 --io-sleep-us 1500000 \
	>"$TMP/slept.json" || fail "stat --json --stuck 500ms -- $GUEST --io-sleep-us 1500000"
if grep -qE '^demo +0 +[0-9]+ KVM_EXIT_IO +1\.5[0-9]s  \(completed\)$' "$TMP/slept.txt" &&
	! grep -q "ended with its thread)" "$TMP/slept.txt" &&
	python3 -c 'import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
f = o["in_flight"]
print(f)
sys.exit(0 if o["final"] and all(e["age_ns"] >= 5e8 and not e["ended"] for e in f) and
         any(e["kind"] == "user" and e["reason_name"] == "IO" and e["completed"] and
             e["age_ns"] >= 1.5e9 for e in f) else 1)' "$TMP/slept.json"
then pass "the summary's STUCK lists the 1.5 s exit that completed before the only sample"
else fail "stat --stuck 500ms of a 1.5 s exit: $(cat "$TMP/slept.txt")"
fi

# 3. vmexit started on a running guest: an exit begun before counting started never completes
# into the counts, so no row ever has more exits completed than counted (a sample taken at the
# start and forgotten let the exit in flight then complete: completed = count + 1 in 2 runs of
# 10, the table's note said 18446744073709551615 exits in flight, serve's _count passed
# exits_total). The VMM spins 20 us in each IO exit: a vCPU is mostly in one when vmexit starts
# (and, where kvm_exit fires, in the kernel IO exit around it).
"$GUEST" --io 1000 --vcpus $V --seconds 3600 --io-spin-us 20 >/dev/null 2>&1 &
gpid=$!
RUNS=20
over=0 runs=0
for _ in $(seq $RUNS); do
	"$VMEXIT" stat 0.2 1 --json --by vcpu -p $gpid >"$TMP/busy.json" 2>>"$TMP/busy.err" ||
		{ fail "stat on a busy guest: $(tail -n 3 "$TMP/busy.err")"; break; }
	python3 - "$TMP/busy.json" <<'EOF' >>"$TMP/busy.out" || over=$((over + 1))
import json, sys
o = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]
assert o["final"] and sum(r["count"] for r in o["rows"] if r["kind"] == "user") > 0, "no exits"
bad = [(r["vcpu"], r["reason_name"], r["count"], r["completed"]) for r in o["rows"]
       if r["completed"] > r["count"]]
print("completed > count:", bad) if bad else None
sys.exit(1 if bad else 0)
EOF
	runs=$((runs + 1))
done
[ $runs = $RUNS ] && [ $over = 0 ] &&
	pass "stat started $RUNS times on a busy guest: completed <= count in every row" ||
	fail "stat started $runs times on a busy guest: completed > count in $over: $(cat "$TMP/busy.out")"
# The table's note: at most one exit with no latency per vCPU and kind, never a wrapped difference.
# Fewer runs from here on: each start of vmexit takes seconds in the nested bed.
over=0
for _ in $(seq 3); do
	"$VMEXIT" stat 0.2 1 -p $gpid >"$TMP/busy.txt" 2>>"$TMP/busy.err" || break
	n=$(sed -n 's/^note: \([0-9]*\) exit(s) counted with no latency.*/\1/p' "$TMP/busy.txt")
	[ "${n:-0}" -le $((2 * V)) ] || { over=$((over + 1)); cat "$TMP/busy.txt"; }
done
[ $over = 0 ] && pass "stat's table: at most $((2 * V)) exits counted with no latency at the end" ||
	fail "stat's table noted more exits in flight than vCPUs can have, $over times (above)"
# serve: each series' histogram _count (completed) never above its exits_total.
over=0
for _ in $(seq 2); do
	"$VMEXIT" serve --listen 127.0.0.1:0 -p $gpid 2>"$TMP/busy-serve.err" &
	spid=$!
	wait_line "$TMP/busy-serve.err" "listening on" $spid
	url=$(grep -o 'http://[^ ]*/metrics' "$TMP/busy-serve.err")
	python3 - "$url" <<'EOF' || over=$((over + 1))
import re, sys, urllib.request
body = urllib.request.urlopen(sys.argv[1], timeout=60).read().decode()
tot, cnt = {}, {}
for m in re.finditer(r"^vmexit_(exits_total|exit_duration_seconds_count)(\{.*\}) (\d+)$", body,
                     re.M):
    (tot if m[1] == "exits_total" else cnt)[m[2]] = int(m[3])
assert tot and set(cnt) <= set(tot), (tot, cnt)
bad = {k: (tot[k], v) for k, v in cnt.items() if v > tot[k]}
assert not bad, f"_count above exits_total: {bad}"
EOF
	kill -INT $spid
	wait $spid || over=$((over + 1))
	cat "$TMP/busy-serve.err" >>"$TMP/all-stderr"
done
[ $over = 0 ] && pass "serve started twice on a busy guest: _count <= exits_total" ||
	fail "serve on a busy guest: $over of 2 scrapes with _count > exits_total or a failure"
kill $gpid
wait $gpid 2>/dev/null
gpid=
cat "$TMP/busy.err" >>"$TMP/all-stderr"

cat "$TMP/stop.err" "$TMP/stoprec.err" >>"$TMP/all-stderr"
sanitizer_reports && fail "sanitizer reports (above)"
echo
if [ $fails -ne 0 ]; then
	echo "FAIL: $fails check(s) failed"
	exit 1
fi
echo "PASS: every exit accounted (stat, stream, record + report), in flight and stuck"
exit 0
