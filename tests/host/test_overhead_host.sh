#!/bin/bash
# Real kernel, this host: --overhead reports vmexit's own cost from the kernel's BPF run-time
# statistics. Every exit to the VMM runs at least two of vmexit's programs (kvm_userspace_exit,
# and the hook at the next KVM_RUN), so the kernel must account at least two runs per exit the
# summary counts; the line and the JSON must say the same thing; without --overhead, nothing.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"
IO=2000 MMIO=500

chk "$VMEXIT" stat --overhead --json -- "$OUT/vmexit-guest" --vcpus 2 --io $IO --mmio $MMIO \
	>"$TMP/json" || fail "vmexit stat --overhead --json exited with $?"
chk "$VMEXIT" stat --overhead -- "$OUT/vmexit-guest" --vcpus 1 --io 300 >"$TMP/table" ||
	fail "vmexit stat --overhead exited with $?"
chk "$VMEXIT" stat --json -- "$OUT/vmexit-guest" --io 10 >"$TMP/plain" ||
	fail "vmexit stat --json exited with $?"
python3 - "$TMP/json" "$TMP/table" "$TMP/plain" <<'PY' || fail "overhead"
import json, re, sys
js, table, plain = sys.argv[1:4]
bad = []
def check(what, ok):
    print(f"{what}: {'ok' if ok else 'FAILED'}")
    if not ok:
        bad.append(what)
final = [json.loads(l) for l in open(js) if l.startswith('{"interval_s"')][-1]
o = final.get("overhead")
check(f"JSON summary has an overhead object: {o}", isinstance(o, dict))
if isinstance(o, dict):
    exits = sum(r["count"] for r in final["rows"])
    user = sum(r["completed"] for r in final["rows"] if r["kind"] == "user")
    check(f"{o['bpf_runs']} BPF runs >= 2 x {user} completed exits to the VMM",
          o["bpf_runs"] >= 2 * user > 0)
    check("BPF time > 0", o["bpf_ns"] > 0)
    check(f"ns_per_exit == bpf_ns / {exits} exits",
          abs(o["ns_per_exit"] - o["bpf_ns"] / exits) < 0.1)
    total = sum(r["total_ns"] for r in final["rows"])
    check("exit_time_pct == bpf_ns / time in exits",
          abs(o["exit_time_pct"] - 100 * o["bpf_ns"] / total) < 0.001)
lines = [l for l in open(table) if l.startswith("vmexit's own cost: ")]
check(f"the table summary says it in one line: {lines}", len(lines) == 1 and
      re.match(r"vmexit's own cost: \d+ ns per exit \([\d.]+ ms in \d+ BPF runs\), [\d.]+ % of the [\d.]+ s spent in exits$", lines[0].strip()))
check("no overhead without --overhead", all('"overhead"' not in l for l in open(plain)))
sys.exit(1 if bad else 0)
PY
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_overhead_host"
