#!/bin/bash
# Real kernel, this host: CSV (parsed back by python's csv module), --by vcpu/reason, --hist,
# and the kernel-side filters (-r reasons, -c vCPU) on exact workloads.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"
G=("$OUT/vmexit-guest" --vms 1 --vcpus 3 --io 400 --mmio 300 --hlt 200)

run() {	# run NAME ARGS...: vmexit stat ARGS -- guest, output in $TMP/NAME
	local name=$1; shift
	"$OUT/vmexit" stat "$@" -- "${G[@]}" >"$TMP/$name" 2>"$TMP/$name.err" ||
		{ cat "$TMP/$name.err"; fail "vmexit stat $* exited with $?"; }
}
run csv --csv --tsc-mhz 2000 --by vcpu
run hist --json --hist --by vcpu
run reason --json --by reason
run filt_r --json -r MMIO,user:HLT
run filt_c --json -c 1 --by vcpu

python3 - "$TMP" $kfires <<'PY'
import csv, json, os, sys
d, kfires = sys.argv[1], int(sys.argv[2])
exec(os.environ["PY_KERNEL_REASONS"])
vcpus, io, mmio, hlt = 3, 400, 300, 200
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
def final(name):
    return [json.loads(l) for l in open(f"{d}/{name}") if l.strip()][-1]

rows = list(csv.DictReader(open(f"{d}/csv")))
fin = [r for r in rows if r["Final"] == "1" and r["In_Flight"] == "0"]
# Each vCPU's done exit never completes (the VMM quits in it), after microseconds: not stuck,
# so no In_Flight row (an alert on them would be a false positive); the summary counts them.
check("CSV: no In_Flight row for exits that were never stuck",
      [(r["vCPU"], r["Exit_Reason"], r["In_Flight"]) for r in rows if r["In_Flight"] != "0"], [])
check("CSV has the ACRN columns", all(k in rows[0] for k in
      ("Exit_Reason", "NR_Exit", "NR_Exit/Sec", "Time Consumed(cycles)", "Time Percentage")), True)
check("CSV vCPUs", sorted({int(r["vCPU"]) for r in fin}), list(range(vcpus)))
io_rows = [r for r in fin if r["Exit_Reason"] == "KVM_EXIT_IO"]
check("CSV per-vCPU IO counts", sorted(int(r["NR_Exit"]) for r in io_rows), [io + 1] * vcpus)
for r in fin:
    cyc, tot = float(r["Time Consumed(cycles)"]), int(r["Total_ns"])
    check(f"CSV cycles = ns x 2 GHz ({r['vCPU']} {r['Exit_Reason']})", abs(cyc - tot * 2.0) <= 1, True)

h = final("hist")
for r in h["rows"]:
    check(f"hist buckets sum to hist_total (vcpu {r['vcpu']} {r['reason_name']})",
          sum(b[2] for b in r["hist"]), r["hist_total"])
    check(f"hist buckets ordered and within [min, max] (vcpu {r['vcpu']} {r['reason_name']})",
          all(b[0] < b[1] for b in r["hist"][:-1]) and r["hist"][0][0] <= r["min_ns"]
          and (r["hist"][-1][1] == 0 or r["max_ns"] < r["hist"][-1][1]), True)

user = lambda o: [r for r in o["rows"] if r["kind"] == "user"]
kern = lambda o, codes: [r["count"] for r in o["rows"] if (r["isa"], r["reason"]) in codes]
rr = final("reason")
check("--by reason: one user row per reason", sorted(r["reason_name"] for r in user(rr)),
      ["HLT", "IO", "MMIO"])
check("--by reason: pid -1", {r["pid"] for r in rr["rows"]}, {-1})
check("--by reason: MMIO count", [r["count"] for r in user(rr) if r["reason_name"] == "MMIO"],
      [vcpus * mmio])
# Where kvm_exit fires, every `out` and `hlt` is a kernel exit too: one row each over all vCPUs.
check("--by reason: kernel IO", kern(rr, KIO), [vcpus * (io + 1)] if kfires else [])
check("--by reason: kernel HLT", kern(rr, KHLT), [vcpus * hlt] if kfires else [])

# user:HLT is the VMM's only; MMIO names no kernel reason on x86.
fr = final("filt_r")
check("-r MMIO,user:HLT: reasons", sorted((r["kind"], r["reason_name"]) for r in fr["rows"]),
      [("user", "HLT"), ("user", "MMIO")])
check("-r: MMIO count", sum(r["count"] for r in fr["rows"] if r["reason_name"] == "MMIO"), vcpus * mmio)
check("-r: HLT count", sum(r["count"] for r in fr["rows"] if r["reason_name"] == "HLT"), vcpus * hlt)

fc = final("filt_c")
check("-c 1: only vCPU 1", {r["vcpu"] for r in fc["rows"]}, {1})
check("-c 1: IO count", sum(r["count"] for r in user(fc) if r["reason_name"] == "IO"), io + 1)
check("-c 1: kernel IO count", sum(kern(fc, KIO)), io + 1 if kfires else 0)
if bad:
    print("FAILED:", ", ".join(bad)); sys.exit(1)
PY
[ $? -eq 0 ] || fail "see the mismatches above"

# Intervals: the kernel never resets; each interval is a snapshot difference. Summed per reason
# they must equal what the guest's VMM counted itself (its --json tally, an independent source),
# as must the final summary.
"$OUT/vmexit" stat --json 0.2 -- "$OUT/vmexit-guest" --json --vcpus 2 --io 100 --mmio 20 \
	--seconds 1.5 >"$TMP/iv" 2>/dev/null || fail "vmexit stat with intervals failed"
python3 - "$TMP/iv" <<'PY' || fail "intervals do not add up to the guest's own counts"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
guest = [o for o in objs if "mix" in o]
ours = [o for o in objs if "rows" in o]
final, ivs = ours[-1], ours[:-1]
assert len(guest) == 1 and final["final"] and len(ivs) >= 5, (len(guest), len(ivs))
want = {}
for v in guest[0]["vcpus"]:
    for name, n in v["exits"].items():
        if n:
            want[name] = want.get(name, 0) + n
got = {}
for o in ivs:
    assert not o["final"]
    for r in o["rows"]:
        if r["kind"] == "user":
            got[r["reason_name"]] = got.get(r["reason_name"], 0) + r["count"]
fin = {r["reason_name"]: r["count"] for r in final["rows"] if r["kind"] == "user"}
print(f"{len(ivs)} intervals: {got}; summary {fin}; the VMM counted {want}")
assert got == want and fin == want
PY

# `stat I N`: ending because N intervals are done, the summary is their sum, from the same sample
# (same elapsed time), for every row: no stretch after the last interval that only it has.
# Twice: a guest still making exits when the count is reached (a later sample would find more),
# and one that runs wholly inside the intervals (then the rows equal its own tally). No filter:
# every row, other VMs' too, must add up.
ivsum_check() {	# ivsum_check FILE N [GUEST_TALLY]
	python3 - "$@" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
n = int(sys.argv[2])
ivs, final = objs[:-1], objs[-1]
assert final["final"] and len(ivs) == n and not any(o["final"] for o in ivs), (len(ivs), n)
key = lambda r: (r["pid"], r["guest"], r["vcpu"], r["kind"], r["isa"], r["reason"])
got, fin = {}, {key(r): r["count"] for r in final["rows"]}
for o in ivs:
    for r in o["rows"]:
        got[key(r)] = got.get(key(r), 0) + r["count"]
got = {k: c for k, c in got.items() if c}
print(f"{n} intervals, summed: {sum(got.values())} exits in {len(got)} rows; "
      f"summary: {sum(fin.values())} in {len(fin)}; elapsed {ivs[-1]['elapsed_s']} / "
      f"{final['elapsed_s']} s")
assert got == fin, sorted((k, got.get(k), fin.get(k)) for k in got.keys() | fin.keys()
                          if got.get(k) != fin.get(k))
assert final["elapsed_s"] == ivs[-1]["elapsed_s"] == final["interval_s"], \
    (final["elapsed_s"], ivs[-1]["elapsed_s"], final["interval_s"])
if len(sys.argv) > 3:
    tally = [json.loads(l) for l in open(sys.argv[3]) if l.strip()][0]
    want = {}
    for v in tally["vcpus"]:
        for name, c in v["exits"].items():
            if c:
                want[name] = want.get(name, 0) + c
    mine = {}
    for k, c in fin.items():
        if k[0] == tally["pid"] and k[3] == "user":
            name = [r["reason_name"] for r in final["rows"] if key(r) == k][0]
            mine[name] = mine.get(name, 0) + c
    print(f"the guest's exits to the VMM: {mine}; it counted {want}")
    assert mine == want, (mine, want)
PY
}
"$OUT/vmexit" stat --json 0.5 2 -- "$OUT/vmexit-guest" --io 1000 --seconds 3 >"$TMP/ivsum" \
	2>"$TMP/ivsum.err" || { cat "$TMP/ivsum.err"; fail "vmexit stat 0.5 2 -- guest failed"; }
ivsum_check "$TMP/ivsum" 2 || fail "stat 0.5 2: the summary is not the sum of its intervals"
timeout 300 "$OUT/vmexit" stat --json 1 6 >"$TMP/ivsum2" 2>"$TMP/ivsum2.err" &
spid=$!
# The guest starts once the first interval is out: the counting has started for sure (exits
# made between the programs' attach and the start of counting are forgotten, see sampler_start).
wait_tracing $spid
for i in $(seq 600); do
	[ -s "$TMP/ivsum2" ] && break
	sleep 0.05
done
[ -s "$TMP/ivsum2" ] || fail "stat 1 6 printed no interval in 30 s"
"$OUT/vmexit-guest" --json --vcpus 2 --io 300 --mmio 50 --seconds 1 --name ivsum01 \
	>"$TMP/ivsum2.guest" 2>/dev/null || fail "vmexit-guest failed"
kill -0 $spid 2>/dev/null || fail "the guest ran longer than stat 1 6 (6 s): no check possible"
wait $spid || { cat "$TMP/ivsum2.err"; fail "vmexit stat 1 6 failed"; }
ivsum_check "$TMP/ivsum2" 6 "$TMP/ivsum2.guest" ||
	fail "stat 1 6: the summary is not the sum of its intervals, or not the guest's tally"
echo "stat I N: the summary is the sum of the N intervals: ok"

# -p PID: like perf stat -p, tracing ends (with the summary) once the process is gone.
# The guest waits, stopped, until stat is tracing: start-up takes seconds in a slow nested bed.
stopped_guest --io 50 --seconds 1 --name alive01
timeout 300 "$OUT/vmexit" stat --json -p $gpid 30 >"$TMP/alive" 2>"$TMP/alive.err" &
spid=$!
wait_tracing $spid
kill -CONT $gpid
wait $spid
rc=$?
wait $gpid
grep -q "every traced process has exited" "$TMP/alive.err" && [ $rc -eq 0 ] &&
	tail -1 "$TMP/alive" | grep -q '"final":true' ||
	fail "stat -p did not end with a summary when its process exited (rc $rc)"
echo "stat -p ends when the traced process exits: ok"
# A failed write is one line on stderr and status 1, in every format; a reader that goes away
# (SIGPIPE) ends the run quietly.
for fmt in --json --csv ""; do
	"$OUT/vmexit" stat $fmt 0.2 1 >/dev/full 2>"$TMP/full.err"
	rc=$?
	[ $rc = 1 ] && [ "$(grep -c "^vmexit:" "$TMP/full.err")" = 1 ] &&
		grep -q "^vmexit: cannot write the statistics: No space left on device$" "$TMP/full.err" ||
		fail "stat ${fmt:-(table)} >/dev/full: exit $rc, stderr: $(cat "$TMP/full.err")"
done
"$OUT/vmexit" top --log -n 1 -d 0.2 >/dev/full 2>"$TMP/full.err"
rc=$?
[ $rc = 1 ] && grep -q "^vmexit: cannot write the log: No space left" "$TMP/full.err" ||
	fail "top --log >/dev/full: exit $rc, stderr: $(cat "$TMP/full.err")"
"$OUT/vmexit" stat --json 0.2 | head -c 1 >/dev/null
rc=${PIPESTATUS[0]}
[ $rc = 141 ] || [ $rc = 0 ] || fail "stat into a closed pipe: exit $rc (want SIGPIPE, quiet)"
echo "failed writes: status 1 with one line; closed pipe: quiet (exit $rc): ok"
echo "PASS: test_stat_formats_host"
