#!/bin/bash
# Real kernel, this host: VMs that come and go. Many more VM lifetimes than statistics cells
# (--max-cells 32): the cells of exited vCPU threads are recycled and nothing is lost or
# counted twice. Two vmexit instances at once count the same exits, each on its own. A VMM
# killed with SIGKILL while its vCPUs run: stat -p ends with its summary. A pid reused by a new
# VMM: stat, record + report and stream each keep the two apart. A thread id reused by another
# VMM's vCPU: each gives it its own thread's vCPU. Every wait for vmexit
# or the VMM is on an event (lib.sh wait_tracing, stopped_guest) with a generous bound: the
# nested bed (TCG) is slow.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"
G=$OUT/vmexit-guest

# 1. 24 VMs of 2 vCPUs one after the other, each making 21 IO exits per vCPU (20 + the done
# port): each VM needs at least 4 cells (a user IO and a kernel IO one per
# vCPU where kvm_exit fires), 24 VMs at least 48, more than the 32 there are.
VMS=24 IO=20
# Sampled every 0.1 s, and without an interval (one sample, at the end): cells are handed back
# between samples too.
for iv in 0.1 none; do
"$OUT/vmexit" stat --json --max-cells 32 $([ $iv = none ] || echo $iv) -- sh -c \
	"for i in \$(seq $VMS); do $G --io $IO --vcpus 2 --name life\$i || exit 1; sleep 0.3; done" \
	>"$TMP/life.json" 2>"$TMP/life.err" || { cat "$TMP/life.err"; fail "stat over $VMS VMs"; }
python3 - "$TMP/life.json" $VMS $IO $iv <<'PY' || fail "VM lifetimes, interval $iv (see above)"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
vms, io, iv = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
fin = objs[-1]
assert fin["final"]
io_rows = [r for r in fin["rows"] if r["kind"] == "user" and r["reason_name"] == "IO"]
got = {r["guest"]: (r["count"], r["completed"]) for r in io_rows}
want = {f"life{i}": (2 * (io + 1), 2 * io) for i in range(1, vms + 1)}
print(f"interval {iv}: {len(got)} VMs in the summary; lost {fin['lost']}")
bad = [g for g in want if got.get(g) != want[g]] + [g for g in got if g not in want]
for g in bad[:5]:
    print(f"  {g}: got {got.get(g)}, expected {want.get(g)}")
assert not bad, "per-VM counts"
assert fin["lost"]["cells_full"] == 0 and fin["lost"]["threads_full"] == 0, fin["lost"]
if iv == "none":
    assert len(objs) == 1, "one summary"
else:
    ivs = sum(r["count"] for o in objs[:-1] for r in o["rows"]
              if r["kind"] == "user" and r["reason_name"] == "IO")
    assert ivs == vms * 2 * (io + 1), f"intervals add up to {ivs}"
PY
done
echo "ok: $VMS VM lifetimes through 32 cells, every exit counted once"

# 2. Two instances at once, on the same VM, both attached before its first exit (it starts
# stopped): each counts every exit, 2 x (2000 + 1) IO exits to the VMM.
stopped_guest --io 2000 --vcpus 2 --name twice
"$OUT/vmexit" stat --json -p $gpid 30 >"$TMP/a.json" 2>/dev/null &
a=$!
"$OUT/vmexit" stat --json -p $gpid 30 >"$TMP/b.json" 2>/dev/null &
b=$!
wait_tracing $a $b
kill -CONT $gpid
wait $gpid || fail "vmexit-guest twice failed"
wait $a || fail "first instance failed"
wait $b || fail "second instance failed"
python3 - "$TMP/a.json" "$TMP/b.json" <<'PY' || fail "two instances"
import json, sys
def io(p):
    r = [r for r in json.loads(open(p).readlines()[-1])["rows"]
         if r["kind"] == "user" and r["reason_name"] == "IO"]
    return sum(x["count"] for x in r), sum(x["completed"] for x in r)
a, b = io(sys.argv[1]), io(sys.argv[2])
print(f"instance 1: {a}, instance 2: {b}")
# Every IO exit seen; the done exit of each vCPU never completes (the VMM quits in it).
assert a == b == (2 * 2001, 2 * 2000), "each instance counts every exit"
PY
echo "ok: two instances at once"

# 3. SIGKILL while the vCPUs run: the summary comes, nothing is lost to full cells.
stopped_guest --io 100 --vcpus 2 --name killed --seconds 60
"$OUT/vmexit" stat --json -p $gpid 0.2 >"$TMP/k.json" 2>"$TMP/k.err" &
s=$!
wait_tracing $s
kill -CONT $gpid
for _ in $(seq 1200); do
	grep -q '"reason_name":"IO"' "$TMP/k.json" && break
	sleep 0.1
done
kill -KILL $gpid
wait $s
rc=$?
wait $gpid 2>/dev/null
[ $rc = 0 ] && grep -q "every traced process has exited" "$TMP/k.err" &&
	tail -1 "$TMP/k.json" | grep -q '"final":true' ||
	{ cat "$TMP/k.err"; fail "stat -p after SIGKILL: exit $rc"; }
echo "ok: VMM killed with SIGKILL: summary, exit 0"
# 4. Stuck exits: a VMM stopped (SIGSTOP) for 1.5 s holds each vCPU thread inside an exit to
# the VMM (the one it was handling, or the KVM_RUN the signal interrupted): with --stuck 1s the
# intervals while it is stopped list one user exit per vCPU (and, where kvm_exit fires, the guest
# exit that led to it, which ends at the next entry), in flight for >= 1 s and, at most,
# for as long as it has been stopped until the last sample (CLOCK_MONOTONIC in the test, an
# independent clock, plus 0.5 s for the exit's start before the stop). The same in CSV
# (In_Flight rows), and in top --once (a '!' row and the Stuck line), whose one screen comes
# when SIGINT cuts its interval short.
stopped_guest --io 100 --vcpus 2 --name stopped --seconds 60
"$OUT/vmexit" stat --json --stuck 1s -p $gpid 0.2 >"$TMP/s.json" 2>"$TMP/s.err" &
s=$!
"$OUT/vmexit" stat --csv --stuck 1s -p $gpid 0.2 >"$TMP/s.csv" 2>"$TMP/c.err" &
c=$!
"$OUT/vmexit" top --once --stuck 1s -d 600 --width 200 -p $gpid >"$TMP/top" 2>"$TMP/t.err" &
t=$!
wait_tracing $s $c $t
kill -CONT $gpid
# Running: some exits seen first (an interval with an IO row).
for _ in $(seq 1200); do
	grep -q '"reason_name":"IO"' "$TMP/s.json" && break
	sleep 0.1
done
t0=$(date +%s%N)
kill -STOP $gpid
sleep 1.5
kill -INT $t
wait $t || { cat "$TMP/t.err"; fail "top --once --stuck"; }
t1=$(date +%s%N)
kill -KILL $gpid
kill -CONT $gpid 2>/dev/null
wait $gpid 2>/dev/null
wait $s || { cat "$TMP/s.err"; fail "stat --stuck"; }
wait $c || { cat "$TMP/c.err"; fail "stat --stuck --csv"; }
python3 - "$TMP" $gpid $(( (t1 - t0) )) $kfires <<'PY' || fail "stuck exits (see above)"
import csv, json, sys
d, pid, stopped, kfires = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per_vcpu = 2 if kfires else 1
want = {(v, k) for v in (0, 1) for k in ("user", "kernel")[:per_vcpu]}
objs = [json.loads(l) for l in open(f"{d}/s.json") if l.strip()]
stuck = [o["in_flight"] for o in objs if not o["final"] and o["in_flight"]]
live = [s for s in stuck if not any(e["ended"] for e in s)]
print(f"{len(stuck)} intervals list stuck exits; stopped until the last sample: "
      f"{stopped / 1e9:.2f} s")
assert live, "no interval listed a stuck exit"
for s in live:
    # The threads stop one after the other (far apart under TCG): at the first samples past
    # 1 s some may not be listed yet; none twice, and a later interval lists them all.
    kinds = sorted((e["vcpu"], e["kind"]) for e in s)
    assert len(set(kinds)) == len(kinds) and set(kinds) <= want, s
    for e in s:
        assert e["pid"] == pid and e["guest"] == "stopped", e
        assert 1e9 <= e["age_ns"] <= stopped + 0.5e9, e
assert any({(e["vcpu"], e["kind"]) for e in s} == want for s in live), "not every vCPU listed"
print("ages:", [[e["age_ns"] for e in s] for s in live])
rows = list(csv.DictReader(open(f"{d}/s.csv")))
fl = [r for r in rows if r["In_Flight"] == "1" and r["Final"] == "0"]
assert fl, "no In_Flight=1 CSV row"
for r in fl:
    assert r["VM"] == "stopped" and int(r["PID"]) == pid and r["vCPU"] in ("0", "1"), r
    assert (r["ISA"] == "user" or kfires) and r["NR_Exit"] == "0", r
    assert 1e9 <= int(r["Total_ns"]) <= stopped + 0.5e9, r
assert all(r["In_Flight"] == "0" for r in rows if r not in fl and r["In_Flight"] != "2"), \
    "ordinary rows are In_Flight=0"
print(f"CSV: {len(fl)} In_Flight=1 rows, Total_ns {sorted(int(r['Total_ns']) for r in fl)}")
top = open(f"{d}/top").read().splitlines()
print("\n".join(top))
assert any(l.startswith(f"Stuck (in flight >= 1.00s, rows !): {2 * per_vcpu};")
           for l in top), "Stuck line"
assert any(l.startswith("!stopped ") for l in top), "the stopped VM's row is marked"
PY
echo "ok: a stopped VMM's vCPUs are listed as stuck, with their age (JSON, CSV, top)"
# 5. A pid reused by a new VMM: guest reuseA (1 vCPU, 10 + 1 IO exits) exits, and guest reuseB
# (20 + 1) is started on the same pid (ns_last_pid set to the pid before it; another process may
# take the pid first: then retry). Every interval names each one's exits by its own name, and
# the summary keeps them apart: two guests on one pid, each with its own exits and name. Two
# samples after reuseA's end come first, so that no interval holds exits of both.
# reuse.sh G OUT [nowait]: the pid goes to OUT.pid; without nowait it waits for the two samples
# in OUT (stat's output).
cat >"$TMP/reuse.sh" <<'SH'
G=$1 out=$2 mode=${3:-}
"$G" --io 10 --name reuseA >/dev/null &
p=$!
wait $p || exit 1
if [ "$mode" != nowait ]; then
	n=$(wc -l <"$out")
	for _ in $(seq 1200); do
		[ $(wc -l <"$out") -ge $((n + 2)) ] && break
		sleep 0.1
	done
fi
for _ in $(seq 100); do
	echo $((p - 1)) >/proc/sys/kernel/ns_last_pid || exit 5
	sh -c '[ $$ = '$p' ] || exit 3; exec "$0" --io 20 --name reuseB' "$G" >/dev/null &
	q=$!
	wait $q
	rc=$?
	[ $q = $p ] && { echo $p >"$out.pid"; exit $rc; }
done
exit 4
SH
"$OUT/vmexit" stat --json 0.2 -- bash "$TMP/reuse.sh" "$G" "$TMP/reuse.json" >"$TMP/reuse.json" \
	2>"$TMP/reuse.err" || { cat "$TMP/reuse.err"; fail "stat over a reused pid"; }
[ -s "$TMP/reuse.json.pid" ] || fail "could not start a VMM on the same pid (100 tries)"
python3 - "$TMP/reuse.json" $(cat "$TMP/reuse.json.pid") <<'PY' || fail "reused pid (see above)"
import json, sys
pid = int(sys.argv[2])
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
io = {}
for o in objs[:-1]:
    for r in o["rows"]:
        if r["pid"] == pid and r["kind"] == "user" and r["reason_name"] == "IO":
            io[r["guest"]] = io.get(r["guest"], 0) + r["count"]
print(f"pid {pid}: IO exits per name over the intervals: {io}")
assert io == {"reuseA": 11, "reuseB": 21}, "each VMM's exits under its own name"
summ = {}
for r in objs[-1]["rows"]:
    if r["pid"] == pid and r["kind"] == "user" and r["reason_name"] == "IO":
        summ[r["guest"]] = summ.get(r["guest"], 0) + r["count"]
print(f"summary: pid {pid}: IO exits per name {summ}")
assert summ == {"reuseA": 11, "reuseB": 21}, "the summary keeps the two VMMs of the pid apart"
PY
echo "ok: a pid reused by a new VMM gets the new VMM's name"

# 6. The same over record + report and over stream, with no pause between the two VMMs: each
# event belongs to the pid's VMM that had started by its time (the recording keeps each guest's
# start time), so report's summary keeps the two apart as stat's does, and every event, in
# report --events and in stream, is named by its own VMM (reuseA's last exit, in flight when it
# quit and emitted at its thread's end, too).
count_io() {	# count_io FILE PID WHAT: IO exits to the VMM per name in JSON events or a summary
	python3 - "$@" <<'PY'
import json, sys
path, pid, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
objs = [json.loads(l) for l in open(path) if l.strip()]
io = {}
if what == "summary":
    assert len(objs) == 1 and objs[0]["final"], "one summary"
    for r in objs[0]["rows"]:
        if r["pid"] == pid and r["kind"] == "user" and r["reason_name"] == "IO":
            io[r["guest"]] = io.get(r["guest"], 0) + r["count"]
else:
    for e in objs:
        if e.get("pid") == pid and e.get("type") == "user_exit" and e["reason_name"] == "IO":
            io[e["guest"]] = io.get(e["guest"], 0) + 1
print(f"{what}: pid {pid}: IO exits per name {io}")
assert io == {"reuseA": 11, "reuseB": 21}, f"{what}: each VMM's exits under its own name"
PY
}
rm -f "$TMP/rec.pid"
"$OUT/vmexit" record -o "$TMP/reuse.vmexit" -- bash "$TMP/reuse.sh" "$G" "$TMP/rec" nowait \
	2>"$TMP/rec.err" || { cat "$TMP/rec.err"; fail "record over a reused pid"; }
[ -s "$TMP/rec.pid" ] || fail "record: could not start a VMM on the same pid (100 tries)"
"$OUT/vmexit" report -i "$TMP/reuse.vmexit" --json >"$TMP/rep.json" || fail "report --json"
count_io "$TMP/rep.json" $(cat "$TMP/rec.pid") summary || fail "report: reused pid (see above)"
"$OUT/vmexit" report -i "$TMP/reuse.vmexit" --events --json >"$TMP/repev.json" ||
	fail "report --events --json"
count_io "$TMP/repev.json" $(cat "$TMP/rec.pid") "report events" ||
	fail "report --events: reused pid (see above)"
rm -f "$TMP/str.pid"
"$OUT/vmexit" stream --json -- bash "$TMP/reuse.sh" "$G" "$TMP/str" nowait >"$TMP/str.json" \
	2>"$TMP/str.err" || { cat "$TMP/str.err"; fail "stream over a reused pid"; }
[ -s "$TMP/str.pid" ] || fail "stream: could not start a VMM on the same pid (100 tries)"
count_io "$TMP/str.json" $(cat "$TMP/str.pid") stream || fail "stream: reused pid (see above)"
echo "ok: record + report and stream keep a reused pid's two VMMs apart, each named as itself"

# 7. A thread id reused by another VMM's vCPU: guest tidA (2 vCPUs) exits, and guest tidB (1
# vCPU) is started so that its vCPU 0 gets the tid of tidA's vCPU 1, through ns_last_pid: set to
# d + 1 below it, where d is how many tasks a VMM makes before its vCPU 0 (itself, and on
# hardware KVM the VM's kvm-nx-lpage-recovery thread; measured again on each try's VMM, and
# one less while a live task holds the pid it names); another process may take a pid first:
# then retry. stream, record + report --by vcpu and stat
# --by vcpu give tidB's exits vCPU 0, its thread's own, never the vCPU tidA's thread had.
# tidreuse.sh G OUT: the reused tid goes to OUT.tid.
cat >"$TMP/tidreuse.sh" <<'SH'
G=$1 out=$2
"$G" --io 10 --vcpus 2 --name tidA --json >"$out.a" || exit 1
vtid() {	# vtid FILE VCPU: the tid of that vCPU in the guest's --json line, minus ITS pid if -d
	python3 -c 'import json, sys
g = json.load(open(sys.argv[1]))
t = [v["tid"] for v in g["vcpus"] if v["vcpu"] == int(sys.argv[2])][0]
print(t - g["pid"] if len(sys.argv) > 3 else t)' "$@"
}
t=$(vtid "$out.a" 1) && d=$(vtid "$out.a" 0 -d) || exit 1
for _ in $(seq 100); do
	echo $((t - d - 1)) >/proc/sys/kernel/ns_last_pid || exit 5
	sh -c '[ $$ = '$((t - d))' ] || exit 3; exec "$0" --io 20 --name tidB --json' "$G" \
		>"$out.b" &
	wait $!
	rc=$?
	if [ $rc = 3 ]; then
		# A task that lives on holds pid t - d: a task made during tidA's start (a thread
		# of vmexit's, a daemon's) widened the gap measured, and no try can get that pid.
		[ -e /proc/$((t - d)) ] && [ $d -gt 1 ] && d=$((d - 1))
		continue
	fi
	[ $rc = 0 ] || exit $rc
	[ "$(vtid "$out.b" 0)" = "$t" ] && { echo "$t" >"$out.tid"; exit 0; }
	# This try's own gap: the next try uses it (a fork elsewhere may have widened it; then
	# the try after measures again).
	d=$(vtid "$out.b" 0 -d) || exit 1
done
exit 4
SH
# tid_vcpus FILE TID WHAT: the vCPUs of tidA's and of tidB's exits, in JSON events or the last
# JSON object's rows (summary); tidB's are all 0, tidA's thread of the reused tid was 1.
tid_vcpus() {
	python3 - "$@" <<'PY'
import json, sys
path, tid, what = sys.argv[1], int(sys.argv[2]), sys.argv[3]
objs = [json.loads(l) for l in open(path) if l.startswith("{")]
seen = {"tidA": set(), "tidB": set()}
if what == "events":
    for e in objs:
        if e.get("type") == "user_exit" and e.get("guest") in seen:
            seen[e["guest"]].add(e["vcpu"])
            if e["tid"] == tid and e["guest"] == "tidA":
                assert e["vcpu"] == 1, f"tidA's thread {tid} is vCPU 1: {e}"
    assert any(e.get("tid") == tid and e.get("guest") == "tidB" for e in objs), \
        f"no exit of tidB's thread {tid}"
else:
    assert objs[-1]["final"], "no summary"
    for r in objs[-1]["rows"]:
        if r["kind"] == "user" and r["guest"] in seen:
            seen[r["guest"]].add(r["vcpu"])
print(f"{what}: tid {tid}: vCPUs of tidA {sorted(seen['tidA'])}, of tidB {sorted(seen['tidB'])}")
assert seen == {"tidA": {0, 1}, "tidB": {0}}, "tidB's exits on vCPU 0 only"
PY
}
for how in stream record stat; do
	rm -f "$TMP/tid-$how.tid"
	case $how in
	stream) args=(stream --json) ;;
	record) args=(record -o "$TMP/tid.vmexit") ;;
	stat) args=(stat --json --by vcpu) ;;
	esac
	"$OUT/vmexit" "${args[@]}" -- bash "$TMP/tidreuse.sh" "$G" "$TMP/tid-$how" \
		>"$TMP/tid-$how.json" 2>"$TMP/tid-$how.err" ||
		{ cat "$TMP/tid-$how.err"; fail "$how over a reused thread id"; }
	[ -s "$TMP/tid-$how.tid" ] || fail "$how: could not start a vCPU on the same tid (100 tries)"
	t=$(cat "$TMP/tid-$how.tid")
	case $how in
	stream) tid_vcpus "$TMP/tid-$how.json" $t events ;;
	record)
		"$OUT/vmexit" report -i "$TMP/tid.vmexit" --by vcpu --json >"$TMP/tid-rep.json" ||
			fail "report --by vcpu --json"
		tid_vcpus "$TMP/tid-rep.json" $t summary ;;
	stat) tid_vcpus "$TMP/tid-$how.json" $t summary ;;
	esac || fail "$how: a reused thread id (see above)"
done
echo "ok: stream, record + report and stat give a reused thread id its own thread's vCPU"
echo "PASS: test_lifetimes_host"
