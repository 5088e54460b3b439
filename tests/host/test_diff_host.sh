#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# vmexit diff on runs of the bundled guest whose difference is known (tools/vmexit-guest.md).
# Each run is one pass of a fixed mix, so its exit counts are exact, and diff compares them
# --per-run: under an emulator (the SVM bed, QEMU TCG) two identical runs' spans differ up to
# threefold and their latencies by 10-48 %, so what is checked is what the workload fixes:
#  - 3 pairs of identical runs (--io 200 --mmio 300): each workload row (IO, MMIO, and where
#    kvm_exit fires the kernel's IO exit and the NPF / EPT exits of the MMIO stores) has the
#    same count before and after (exact for IO and MMIO) and no significant count change.
#    Their latencies and the rows the workload does not fix (interrupts, whose number grows
#    with the run's length) are not judged: the emulator moves them;
#  - a pair whose second run makes 20 % more MMIO exits (--mmio 1000 -> 1200): MMIO (and its
#    kernel exit) significantly up by 15-25 %, IO's 101 exits unchanged and not significant,
#    exit status 1; the recording, the perf.data import and the stat --json --hist --by vcpu of
#    the same runs call the same workload rows changed;
#  - a pair whose VMM sleeps 20 ms in each of 50 IO exits (--io-sleep-us 20000): 1 s more of IO
#    exit time, which no emulator noise on 51 exits approaches: IO (or the kernel IO exit)
#    ranked first, its latency significantly up, its p50 by at least 15 ms, its count not
#    significant; --folded gives difffolded lines, the after run's blocked time in nanosleep at
#    least 0.5 s and the before run's none.
# Each side's runs are one recording (guests named for their pair, matched by name by one diff
# of the two), captured at once: a vmexit start costs seconds under TCG.
# The false-positive rate over 20 pairs is checked on simulated recordings
# (tests/unit/test_run_diff.c). Usage errors and unreadable files: status 2.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd python3 python3
need_cmd taskset util-linux
need_cmd perf linux-perf
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
cpu=$(taskset -pc $$ | sed 's/.*: *//; s/[,-].*//')

# side NAME MMIO SLEEP: one recording (--split --keys --stacks) of every guest of a side, one
# after another on CPU $cpu, each named for its pair (diff matches guests by name): three
# identical ones, the MMIO one (also captured by perf and by stat --json around it alone), and
# the IO one. One vmexit start per capture: under TCG each costs seconds.
side() {
	local n=$1 mmio=$2 sleep=$3
	chk "$VMEXIT" record --force --split --keys --stacks -o "$TMP/all-$n.vmexit" -- sh -c '
		g="taskset -c $1 $2"
		for i in 1 2 3; do $g --name same$i --io 200 --mmio 300 >/dev/null || exit 1; done
		perf record -q -e "kvm:*" -o "$4/mmio-$3.data" -- "$5" stat --json --hist \
			--by vcpu -- $g --name mmio --io 100 --mmio $6 >"$4/mmio-$3.json" || exit 1
		$g --name slow --io 50 $7 >/dev/null' sh "$cpu" "$GUEST" "$n" "$TMP" "$VMEXIT" \
		"$mmio" "$sleep" >/dev/null 2>"$TMP/$n.err"
}
side b 1000 "" & b=$!
side a 1200 "--io-sleep-us 20000" & a=$!
wait $b || fail "capture of the before runs failed: $(cat "$TMP/b.err")"
wait $a || fail "capture of the after runs failed: $(cat "$TMP/a.err")"
kio=0
kvm_exit_fires "$GUEST" && kio=1
# dif NAME EXT [ARGS]: vmexit diff --per-run --json of a pair of files, into $TMP/NAME.EXT.json;
# its status in rc.
dif() {
	local n=$1 e=$2; shift 2
	chk "$VMEXIT" diff "$TMP/$n-b.$e" "$TMP/$n-a.$e" --per-run --json "$@" >"$TMP/$n.$e.json"
	rc=$?
}
# Every pair in one diff of the two recordings (guests matched by name): the MMIO and IO ones
# differ.
dif all vmexit
[ $rc = 1 ] || fail "vmexit diff --per-run of the recordings: status $rc, want 1"
for e in json data; do
	dif mmio $e --all
	[ $rc = 1 ] || fail "vmexit diff --per-run of the MMIO pair ($e): status $rc, want 1"
done
chk "$VMEXIT" diff "$TMP/all-b.vmexit" "$TMP/all-a.vmexit" --folded >"$TMP/all.folded" ||
	fail "vmexit diff --folded: status $?"

python3 - "$TMP" $kio <<'PY' || exit 1
import json, sys
d, kio = sys.argv[1], sys.argv[2] == "1"
bad = []
def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (" " + detail if detail else ""))
    if not ok:
        bad.append(what)
def reasons(j, guest=None):
    return [r for r in j["rows"] if r["level"] == "reason" and guest in (None, r["guest"])]
def row(j, ids, guest=None):
    return [r for r in reasons(j, guest) if (r["isa"], r["reason"]) in ids]
# The guest's exits to the VMM, and the kernel exits each makes where kvm_exit fires: an
# `out` is one IO exit, an MMIO store one NPF / EPT exit (plus a few first touches).
IO, KIO = {("user", 2)}, {("svm", 0x7b), ("vmx", 30)}
MMIO, KMMIO = {("user", 6)}, {("svm", 0x400), ("vmx", 48), ("vmx", 49)}
def rows_of(j, ids, what, need, guest=None):
    r = row(j, ids, guest)
    check(f"{what}: a row of {sorted(ids)}", bool(r) or not need, str([x["reason_name"] for x in r]))
    return r
j = json.load(open(f"{d}/all.vmexit.json"))
check("compared per run", j.get("rates_per") == "run")
for i in (1, 2, 3):
    g = f"same{i}"
    for ids, n in ((IO, 201), (MMIO, 300), (KIO, 201 if kio else None), (KMMIO, None)):
        for r in rows_of(j, ids, f"identical pair {i}", ids in (IO, MMIO) or (kio and ids is KIO), g):
            b, a = r["before"]["count"], r["after"]["count"]
            if n is not None:
                check(f"identical pair {i}: {r['reason_name']} {n} exits in each run", b == n == a,
                      f"{b} / {a}")
            check(f"identical pair {i}: {r['reason_name']} no count change",
                  not r["significant_rate"], f"{b} / {a}, p {r['p_rate']}")
    print(f"identical pair {i}: significant rows not judged (latencies, interrupts):",
          [(r["reason_name"], r["significant_rate"], r["significant_latency"])
           for r in reasons(j, g) if r["significant_rate"] or r["significant_latency"]])
ans = {}
for e in ("vmexit", "json", "data"):
    j = json.load(open(f"{d}/{'all' if e == 'vmexit' else 'mmio'}.{e}.json"))
    g = "mmio" if e == "vmexit" else None
    for r in rows_of(j, MMIO, f"MMIO pair ({e})", True, g) + \
             rows_of(j, KMMIO, f"MMIO pair ({e})", kio and e != "json", g):
        check(f"MMIO pair ({e}): {r['reason_name']} significantly up 15-25 %",
              r["significant_rate"] and 0.15 <= (r["rate_change"] or 0) <= 0.25,
              f"{r['before']['count']} -> {r['after']['count']} ({r['rate_change']})")
    for r in rows_of(j, IO, f"MMIO pair ({e})", True, g) + \
             rows_of(j, KIO, f"MMIO pair ({e})", False, g):
        check(f"MMIO pair ({e}): {r['reason_name']} 101 exits each, not significant",
              r["before"]["count"] == r["after"]["count"] == 101 and not r["significant_rate"],
              f"{r['before']['count']} / {r['after']['count']}")
    ans[e] = sorted((r["isa"], r["reason"]) for r in row(j, IO | KIO | MMIO | KMMIO, g)
                    if r["significant_rate"])
check("MMIO pair: the recording and stat --json call the same workload rows changed",
      [x for x in ans["vmexit"] if x in IO | MMIO] == [x for x in ans["json"] if x in IO | MMIO],
      f'{ans["vmexit"]} / {ans["json"]}')
check("MMIO pair: the recording and the perf.data import call the same rows changed",
      ans["vmexit"] == ans["data"], f'{ans["vmexit"]} / {ans["data"]}')
j = json.load(open(f"{d}/all.vmexit.json"))
r = reasons(j, "slow")
top = (r[0]["isa"], r[0]["reason"]) if r else None
check("slow IO pair: IO first", top in IO | KIO, str(top))
if r and top in IO | KIO:
    r = r[0]
    check("slow IO pair: its latency significant", r["significant_latency"])
    up = r["after"]["p50_ns"] - r["before"]["p50_ns"]
    check("slow IO pair: p50 up by >= 15 ms", up >= 15000000, f"{up} ns")
    check("slow IO pair: 51 exits each, no count change", r["before"]["count"] ==
          r["after"]["count"] == 51 and not r["significant_rate"])
lines = [l.rsplit(" ", 2) for l in open(f"{d}/all.folded").read().splitlines()]
check("--folded: 'stack before after' lines", bool(lines) and all(len(l) == 3 and l[1].isdigit()
      and l[2].isdigit() for l in lines))
nano = [l for l in lines if l[0].startswith("slow;") and "nanosleep" in l[0]]
nb, na = sum(int(l[1]) for l in nano), sum(int(l[2]) for l in nano)
check("--folded: after >= 0.5 s in nanosleep, before none", na >= 500000000 and nb == 0,
      f"{nb} / {na} ns, {len(nano)} stacks")
sys.exit(1 if bad else 0)
PY

expect_usage "give two runs" "$VMEXIT" diff "$TMP/all-b.vmexit"
expect_usage "min-change" "$VMEXIT" diff "$TMP/all-b.vmexit" "$TMP/all-a.vmexit" --min-change x
"$VMEXIT" diff "$TMP/all-b.vmexit" "$TMP/nonexistent" >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && grep -q nonexistent "$TMP/err" || fail "diff of a missing file: status $rc, said $(cat "$TMP/err")"
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_diff_host"
