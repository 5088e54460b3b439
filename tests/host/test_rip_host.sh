#!/bin/bash
# Real kernel, this host: stat --by rip around record of the bundled guest, named with the
# guest's own symbol file (vmexit-guest --symbols), report --by rip of that recording, and
# top --rips (every reason's RIPs, one screen) of another run.
# Where kvm_exit fires, each exit to the VMM is charged to the RIP of the guest instruction
# that made it (IO at guest_out, MMIO at guest_mmio, HLT at guest_hlt); where it does not (a
# software KVM such as this development host's), to (none). Either way the counts are the
# guest's, and report gives stat's rows.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"

"$OUT/vmexit-guest" --symbols "$TMP/guest.map" || fail "vmexit-guest --symbols exited with $?"
"$OUT/vmexit" stat --by rip --guest-symbols riphost="$TMP/guest.map" --json -- \
	"$OUT/vmexit" record -o "$TMP/r.vmexit" -- \
	"$OUT/vmexit-guest" --io 300 --mmio 100 --hlt 50 --name riphost >"$TMP/stat" 2>"$TMP/stat.err" ||
	{ cat "$TMP/stat.err"; fail "vmexit stat --by rip -- vmexit record exited with $?"; }
"$OUT/vmexit" report -i "$TMP/r.vmexit" --by rip --guest-symbols riphost="$TMP/guest.map" \
	--json >"$TMP/report" 2>"$TMP/report.err" ||
	{ cat "$TMP/report.err"; fail "vmexit report --by rip exited with $?"; }

python3 - "$TMP" $kfires <<'PY'
import json, sys
d, kfires = sys.argv[1], int(sys.argv[2])
io, mmio, hlt = 300, 100, 50
KVM_EXIT_IO, KVM_EXIT_HLT, KVM_EXIT_MMIO = 2, 5, 6
addr = {l.split()[2]: int(l.split()[0], 16) for l in open(f"{d}/guest.map")}
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
def rows(name):
    return [json.loads(l) for l in open(f"{d}/{name}") if l.startswith('{"interval_s"')][-1]["rows"]
stat, rep = rows("stat"), rows("report")
for what, rs in (("stat", stat), ("report", rep)):
    for reason, n, sym in ((KVM_EXIT_IO, io, "guest_out"), (KVM_EXIT_MMIO, mmio, "guest_mmio"),
                           (KVM_EXIT_HLT, hlt, "guest_hlt")):
        got = sorted((r["key_kind"], r["rip"], r["symbol"], r["guest_mode"], r["count"],
                      r["completed"]) for r in rs if r["kind"] == "user" and r["reason"] == reason)
        # The last IO (the pass's done port, at guest_done) never completes: rows count it,
        # as the reason rows do, but not as completed.
        want = [("rip", hex(addr[sym]), sym, "user", n, n)] if kfires else [("none", None, None, None, n, n)]
        if reason == KVM_EXIT_IO and kfires:
            done = [g for g in got if (g[2] or "").startswith("guest_done")]
            got = [g for g in got if g not in done]
            check(f"{what}: the done exit, in flight at guest_done", [g[4:] for g in done], [(1, 0)])
        elif reason == KVM_EXIT_IO:
            want = [("none", None, None, None, n + 1, n)]
        check(f"{what}: exits to the VMM, reason {reason}", got, want)
    check(f"{what}: guests", sorted({r["guest"] for r in rs}), ["riphost"])
def keyed(rs):
    return sorted((r["kind"], r["reason"], r["key_kind"], r["rip"], r["symbol"], r["guest_mode"],
                   r["count"], r["completed"]) for r in rs)
check("report's rows are stat's", keyed(rep), keyed(stat))
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || fail "stat/report --by rip rows differ from the guest's exits (above)"

# top --rips: attached before the guest's first exit (it starts stopped), one screen of every
# reason's RIPs once the guest is done, named from the same symbol file.
stopped_guest --io 300 --mmio 100 --hlt 50 --linger 8 --name riptop
"$OUT/vmexit" top --once -x --rips --guest-symbols riptop="$TMP/guest.map" -d 5 -p "$gpid" \
	--width 160 >"$TMP/top" 2>"$TMP/top.err" &
tpid=$!
wait_tracing $tpid
kill -CONT "$gpid"
ends_within 60 $tpid "vmexit top --rips" "$TMP/top.err" || { cat "$TMP/top.err"; fail "vmexit top --rips exited with $?"; }
kill "$gpid" 2>/dev/null
python3 - "$TMP" $kfires <<'PY'
import re, sys
d, kfires = sys.argv[1], int(sys.argv[2])
io, mmio, hlt = 300, 100, 50
addr = {l.split()[2]: int(l.split()[0], 16) for l in open(f"{d}/guest.map")}
# "kvm_userspace_exit(IO) 0x1017 guest_out   Total ...", "kvm_userspace_exit(IO) (none)   Total ..."
rows = {}
for l in open(f"{d}/top"):
    m = re.match(r"\s*kvm_userspace_exit\((\w+)\) (\(none\)|0x[0-9a-f]+(?: \S+)?)\s+(\d+)\s", l)
    if m:
        rows[(m[1], m[2])] = int(m[3])
print(f"top: {rows}")
bad = []
for reason, n, sym in (("IO", io, "guest_out"), ("MMIO", mmio, "guest_mmio"), ("HLT", hlt, "guest_hlt")):
    got = {k[1]: v for k, v in rows.items() if k[0] == reason}
    if kfires:
        key = f"{addr[sym]:#x} {sym}"
        ok = got.get(key) == n
        print(("ok: " if ok else "FAIL: ") + f"top: {reason} at {key}: {got.get(key)}, expected {n}")
    else:	# no kvm_exit: every exit to the VMM under (none); the done exit may be counted
        ok = got.get("(none)") in ((n, n + 1) if reason == "IO" else (n,)) and len(got) == 1
        print(("ok: " if ok else "FAIL: ") + f"top: {reason} under (none): {got}, expected {n}")
    if not ok:
        bad.append(reason)
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || { cat "$TMP/top"; fail "top --rips rows differ from the guest's exits (above)"; }
echo "PASS: test_rip_host"
