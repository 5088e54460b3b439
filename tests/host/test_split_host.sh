#!/bin/bash
# Real kernel, this host: --split on a VMM whose exit handler is known to sleep, spin, or
# compete for its CPU with a busy loop (vmexit-guest --io-sleep-us / --io-spin-us; only
# userspace exits exist here, so the VMM's handling is what gets split). On CPU, blocked and
# runq add up to each row's total exactly, in every interval, in JSON and CSV alike; exits in
# flight (--stuck) report their split so far.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"
need_cmd taskset util-linux
hog=
trap '[ -n "$hog" ] && kill $hog 2>/dev/null; rm -rf "$TMP"' EXIT
N=100		# --io exits; each one handled for US microseconds
US=2000

run() {	# run NAME VMEXIT-ARGS... -- GUEST-ARGS...: output in $TMP/NAME
	local name=$1; shift
	chk "$VMEXIT" stat "$@" >"$TMP/$name" ||
		fail "vmexit stat $* exited with $? (see above)"
}
run sleep --split --json 0.2 -- "$OUT/vmexit-guest" --io $N --io-sleep-us $US
run spin --split --json 0.2 -- "$OUT/vmexit-guest" --io $N --io-spin-us $US
run csv --split --csv 0.2 -- "$OUT/vmexit-guest" --io $N --io-spin-us 500
run plain --json -- "$OUT/vmexit-guest" --io 10
# Exits in flight report their split so far: a VMM asleep 1.5 s in each of 2 IO exits is stuck
# (--stuck 300ms) and blocked, more so at each sample.
run stuck --split --json --stuck 300ms 0.2 -- "$OUT/vmexit-guest" --io 2 --io-sleep-us 1500000
chk "$VMEXIT" stat --split --stuck 300ms 0.5 -- "$OUT/vmexit-guest" --io 1 \
	--io-sleep-us 1500000 >"$TMP/stuck_table" || fail "vmexit stat --split --stuck exited with $?"
# The vCPU and a busy loop on one CPU: the vCPU waits for its CPU about half the time (a floor
# is checked: on a busy host it waits longer, and it may wait without the loop too).
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')
taskset -c "$cpu" sh -c 'while :; do :; done' &
hog=$!
run runq --split --json -- taskset -c "$cpu" "$OUT/vmexit-guest" --io $N --io-spin-us $US
kill $hog
hog=
# Per exit: stream's JSON, a rules file, and a recording read back by report.
chk "$VMEXIT" stream --split --json -- "$OUT/vmexit-guest" --io 30 --io-sleep-us 500 \
	>"$TMP/stream" || fail "vmexit stream --split exited with $?"
printf 'default %%(latency_ns)d=%%(oncpu_ns)d+%%(blocked_ns)d+%%(runq_ns)d\n' >"$TMP/rules"
chk "$VMEXIT" stream --split --format "$TMP/rules" -- "$OUT/vmexit-guest" --io 30 \
	>"$TMP/lines" || fail "vmexit stream --split --format exited with $?"
chk "$VMEXIT" record --split -o "$TMP/rec" -- "$OUT/vmexit-guest" --io $N --io-sleep-us $US \
	>/dev/null || fail "vmexit record --split exited with $?"
chk "$VMEXIT" report -i "$TMP/rec" --json >"$TMP/report" || fail "vmexit report exited with $?"

# serve: the same split as a counter per state, summing to the duration histogram's _sum.
# A bare machine (the nested bed's initramfs) may have its loopback down: bring it up.
if [ $(( $(cat /sys/class/net/lo/flags 2>/dev/null || echo 1) & 1 )) = 0 ]; then
	ip link set lo up || fail "the loopback interface is down and cannot be brought up"
fi
"$VMEXIT" serve --split --listen 127.0.0.1:0 2>"$TMP/serve.err" &
spid=$!
for _ in $(seq 100); do
	grep -q "listening on" "$TMP/serve.err" && break
	sleep 0.1
done
url=$(grep -o 'http://[^ ]*/metrics' "$TMP/serve.err") ||
	{ kill $spid; fail "vmexit serve --split did not start: $(cat "$TMP/serve.err")"; }
"$OUT/vmexit-guest" --io $N --io-sleep-us $US --name "splitserve-$$" >/dev/null 2>&1
# A scrape with bash alone: no HTTP client needed (the nested bed has none).
port=${url#http://*:}
port=${port%%/*}
{ exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 &&
	cat <&3 >"$TMP/metrics"; } && grep -q '^vmexit_' "$TMP/metrics" ||
	{ kill $spid; fail "cannot scrape $url: $(head -c 300 "$TMP/metrics" 2>&1)"; }
exec 3<&-
kill $spid
wait $spid
cat "$TMP/serve.err" >>"$TMP/all-stderr"

python3 - "$TMP" $N $US $$ <<'PY' || exit 1
import csv, json, sys
d, n, us, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
bad = []
def check(what, ok, detail=""):
    print(f"{what}: {'ok' if ok else 'FAILED'} {detail}")
    if not ok:
        bad.append(what)
def lines(name):
    return [json.loads(l) for l in open(f"{d}/{name}") if l.strip().startswith("{")]
def io_row(name):
    rows = [r for r in lines(name)[-1]["rows"] if r["reason_name"] == "IO"]
    assert len(rows) == 1, rows
    return rows[0]

# Exact sums, every row of every interval and of the summary.
for name in ("sleep", "spin", "runq"):
    objs = lines(name)
    rows = [r for o in objs for r in o["rows"]]
    check(f"{name}: {len(objs)} JSON lines, oncpu + blocked + runq == total_ns in all "
          f"{len(rows)} rows",
          rows and all(r["oncpu_ns"] + r["blocked_ns"] + r["runq_ns"] == r["total_ns"]
                       for r in rows))
    # The N handled exits complete; the last (the done port) is still in flight at the end.
    r = io_row(name)
    check(f"{name}: IO exits completed", r["completed"] == n, f"({r['completed']}, want {n})")

ms = lambda ns: f"{ns / 1e6:.1f} ms"
want = n * us * 1000
r = io_row("sleep")
# nanosleep sleeps at least US: the thread is off CPU, asleep, for nearly all of it.
check("sleep: blocked >= 95 % of N x US", r["blocked_ns"] >= 0.95 * want,
      f"(blocked {ms(r['blocked_ns'])}, N x US {ms(want)})")
# On CPU the VMM only makes its syscalls around each sleep: a few us on hardware, a quarter of
# a millisecond each in the TCG bed (26.7 ms for 100 exits), and more when the host running
# TCG is busy (55.7 ms once, host load 3-4: the guest's clock runs on while QEMU waits for a
# host CPU, and that time is on CPU to the guest). The bug this is for, a sleep counted on CPU,
# puts at least N x US there, as the spin's is: half of it bounds the syscalls at any load and
# still tells the two apart.
check("sleep: on CPU < 50 % of N x US", r["oncpu_ns"] < 0.5 * want,
      f"(on CPU {ms(r['oncpu_ns'])}, N x US {ms(want)}, runq {ms(r['runq_ns'])})")
r = io_row("spin")
# The spin runs until the thread used US of CPU: on CPU at least that, never asleep long.
check("spin: on CPU >= N x US", r["oncpu_ns"] >= want,
      f"(on CPU {ms(r['oncpu_ns'])}, N x US {ms(want)}, runq {ms(r['runq_ns'])})")
check("spin: blocked < 10 % of on CPU", r["blocked_ns"] < 0.1 * r["oncpu_ns"],
      f"(blocked {ms(r['blocked_ns'])})")
r = io_row("runq")
check("runq: on CPU >= N x US", r["oncpu_ns"] >= want, f"(on CPU {ms(r['oncpu_ns'])})")
check("runq: waiting for the CPU >= 25 % of the total next to a busy loop",
      r["runq_ns"] >= 0.25 * r["total_ns"],
      f"(runq {ms(r['runq_ns'])} of {ms(r['total_ns'])}, blocked {ms(r['blocked_ns'])})")

# In_Flight rows carry an exit's age so far in Total_ns, not a sum of completed exits.
rows = [r for r in csv.DictReader(open(f"{d}/csv")) if r.get("In_Flight", "0") == "0"]
check("CSV: split columns",
      rows and all(k in rows[0] for k in ("Oncpu_ns", "Blocked_ns", "Runq_ns")))
check(f"CSV: Oncpu_ns + Blocked_ns + Runq_ns == Total_ns in all {len(rows)} rows",
      rows and all(int(r["Oncpu_ns"]) + int(r["Blocked_ns"]) + int(r["Runq_ns"]) ==
                   int(r["Total_ns"]) for r in rows))
ev = [e for e in lines("stream") if e["type"] == "user_exit"]
# 30 IO exits and the done port's, which is in flight when its thread exits: split too.
check(f"stream: all {len(ev)} exits to the VMM split exactly", len(ev) == 31 and all(
      e["oncpu_ns"] + e["blocked_ns"] + e["runq_ns"] == e["latency_ns"] for e in ev))
check("stream: the last in flight", [e.get("in_flight", False) for e in ev] == [False] * 30 + [True])
ev = ev[:30]
# Each exit lasts the VMM's sleep at least: 500 us. Its blocked part starts at the switch out,
# some way into nanosleep, and there is none when the timer expires before the VMM gets to
# switch out (seen in the TCG bed: a slow syscall path can use up 500 us): so no bound per exit;
# all of them are blocked for 90 % of 30 x 500 us at least.
check("stream: the sleeping exits last >= 500 us each and are blocked >= 90 % of 30 x 500 us in all",
      all(e["latency_ns"] >= 500000 for e in ev) and
      sum(e["blocked_ns"] for e in ev) >= 0.9 * 30 * 500000,
      f"(shortest {min(e['latency_ns'] for e in ev) / 1e3:.0f} us, least blocked "
      f"{min(e['blocked_ns'] for e in ev) / 1e3:.0f} us, sum {sum(e['blocked_ns'] for e in ev) / 1e6:.2f} ms)")
ln = [l.split("=") for l in open(f"{d}/lines") if "=" in l]
check(f"rules file: all {len(ln)} lines latency = oncpu + blocked + runq",
      len(ln) >= 30 and all(int(a) == sum(map(int, b.split("+"))) for a, b in ln))
r = io_row("report")
check("report of a --split recording: split exact, blocked >= 95 % of N x US",
      r["oncpu_ns"] + r["blocked_ns"] + r["runq_ns"] == r["total_ns"] and
      r["blocked_ns"] >= 0.95 * want, f"(blocked {ms(r['blocked_ns'])})")
state, dsum = {}, None
for l in open(f"{d}/metrics"):
    if f'guest="splitserve-{pid}"' not in l or 'reason="IO"' not in l:
        continue
    name, val = l.rsplit(" ", 1)
    if name.startswith("vmexit_exit_state_seconds_total"):
        state[name.split('state="')[1].split('"')[0]] = round(float(val) * 1e9)
    elif name.startswith("vmexit_exit_duration_seconds_sum"):
        dsum = round(float(val) * 1e9)
check("serve: oncpu + blocked + runq == the duration _sum, exactly",
      sorted(state) == ["blocked", "oncpu", "runq"] and sum(state.values()) == dsum,
      f"({state}, _sum {dsum})")
check("serve: the sleeping VMM's exits are blocked >= 95 % of N x US",
      state.get("blocked", 0) >= 0.95 * want)
stuck = [(o["elapsed_s"], e) for o in lines("stuck") if not o["final"]
         for e in o["in_flight"] if not e["ended"]]
check(f"stuck: {len(stuck)} exits listed in flight, their split so far adds up to their age",
      len(stuck) >= 2 and all(e["oncpu_ns"] + e["blocked_ns"] + e["runq_ns"] == e["age_ns"]
                              for _, e in stuck))
# Asleep from just after the exit began (the VMM's handling before nanosleep takes microseconds;
# 0.1 of the age leaves room for a slow host).
check("stuck: a sleeping VMM's exits in flight are blocked >= 90 % of their age",
      all(e["blocked_ns"] >= 0.9 * e["age_ns"] for _, e in stuck),
      f"({[(e['kind'], e['age_ns'], e['blocked_ns']) for _, e in stuck][:4]})")
# The same exit (thread, kind, reason) at consecutive samples; where kvm_exit fires a sample
# lists a kernel and a user exit per thread, so neighbours in the list are not the pairs.
by_exit = {}
for t, e in stuck:
    by_exit.setdefault((e["tid"], e["kind"], e["reason"]), []).append((t, e))
# Both samples within the VMM's 1.5 s sleep: once it wakes, the VMM may wait for its CPU (runq)
# before it ends the exit, and on a loaded host a sample falls there (CI failed it once; three
# busy loops beside the test: samples at ages 1.484 and 1.504 s, blocked 16.2 of the 19.8 ms).
SLEEP_NS = 1500000 * 1000
grew = [(a, b) for seq in by_exit.values() for (ta, a), (tb, b) in zip(seq, seq[1:])
        if tb > ta and b["age_ns"] > a["age_ns"] and b["age_ns"] < SLEEP_NS]
slow = [(a["age_ns"], b["age_ns"], a["blocked_ns"], b["blocked_ns"], b["runq_ns"])
        for a, b in grew
        if b["blocked_ns"] - a["blocked_ns"] < 0.9 * (b["age_ns"] - a["age_ns"])]
check("stuck: the same exit at later samples within its sleep: blocked grew with its age",
      grew and not slow, f"({len(grew)} pairs; (age, age, blocked, blocked, runq) short: {slow})")
plain = lines("plain")[-1]["rows"]
check("without --split: no split fields", plain and not any("oncpu_ns" in r for r in plain))
sys.exit(1 if bad else 0)
PY
# The table: the columns and the per-VM summary line.
chk "$VMEXIT" stat --split -- "$OUT/vmexit-guest" --io 20 --io-sleep-us 1000 >"$TMP/table" ||
	fail "vmexit stat --split (table) exited with $?"
# The STUCK section has the split too.
grep -q "^GUEST .*FOR  *ONCPU  *BLOCKED  *RUNQ" "$TMP/stuck_table" ||
	{ cat "$TMP/stuck_table"; fail "the STUCK section has no split columns"; }
grep -q "ONCPU%.*BLOCKED.*RUNQ" "$TMP/table" &&
	grep -q "^demo .*exits to the VMM .*blocked" "$TMP/table" ||
	{ cat "$TMP/table"; fail "the table has no split columns or no per-VM summary"; }
if sanitizer_reports; then
	fail "sanitizer reports (above)"
fi
echo "PASS: test_split_host"
