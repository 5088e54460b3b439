#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vmexit serve where kvm_exit fires: in the nested SVM bed (tests/vm/bed.sh), `vmexit serve`
# runs while vmexit-guest makes a known mix of exits and the kernel's own hist trigger counts
# kvm_exit by reason; a scrape (busybox wget) afterwards must show the kernel exits with
# isa="svm" and the reason names, each count equal to the hist trigger's, the documented ones
# equal to the guest's arguments, and the userspace exits exactly.
#
#   tests/vm/test_nested_serve.sh OUTDIR        (OUTDIR holds vmexit and vmexit-guest)
#
# Exit: 0 pass, 1 fail, 77 skip. Env: VMEXIT_BED_LOG, VMEXIT_BED_TIMEOUT (default 240 s).
set -euo pipefail

OUT=${1:-.output}
HERE=$(cd "$(dirname "$0")" && pwd)
BED=$HERE/bed.sh
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest

fail() { echo "FAIL: test_nested_serve: $*"; exit 1; }
skip() { echo "SKIP: test_nested_serve: $*"; exit 77; }

[ -x "$GUEST" ] && [ -x "$VMEXIT" ] || fail "$VMEXIT or $GUEST not built (make all)"
command -v python3 >/dev/null || fail "python3 not installed (apt-get install python3; tools/install-deps.sh)"

VCPUS=2 CPUID=300 IO=200 HLT=100 MSR=150 MMIO=120
WORK=$(mktemp -d "${TMPDIR:-/tmp}/test_nested_serve.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

cat >"$WORK/inbed.sh" <<EOF
ARGS="--vcpus $VCPUS --cpuid $CPUID --io $IO --hlt $HLT --msr $MSR --mmio $MMIO --name bedserve"
EOF
cat >>"$WORK/inbed.sh" <<'EOF'
T=/sys/kernel/tracing
die() { echo "T_ERROR $*"; exit 1; }
[ "$BED_BTF" = 1 ] || die "kernel or kvm module BTF missing in the bed"
/vmexit serve --listen 127.0.0.1:9477 2>/tmp/serve.err &
srv=$!
i=0
until grep -q "listening on" /tmp/serve.err; do
	i=$((i + 1))
	[ $i -lt 600 ] && kill -0 $srv 2>/dev/null || { cat /tmp/serve.err; die "vmexit serve did not start"; }
	sleep 0.1
done
# The kernel's own count of the same exits, by raw reason code.
echo 'hist:keys=exit_reason:size=256' >$T/events/kvm/kvm_exit/trigger || die "no hist trigger"
/vmexit-guest $ARGS >/tmp/guest.out 2>/tmp/guest.err
echo "T_GUEST_RC $?"
awk '/^\{ exit_reason:/{gsub(/[{}]/, ""); print "T_HIST " $2 " " $4} /^ *Dropped:/{print "T_HIST_DROPPED " $2}' \
	$T/events/kvm/kvm_exit/hist
echo '!hist:keys=exit_reason:size=256' >$T/events/kvm/kvm_exit/trigger
wget -q -O /tmp/metrics.txt http://127.0.0.1:9477/metrics || die "scrape failed"
grep '^vmexit_\(exits_total\|exit_duration_seconds_count\|lost_exits_total\)' /tmp/metrics.txt |
	sed 's/^/T_METRIC /'
kill $srv
wait $srv
echo "T_SERVE_RC $?"
sed 's/^/T_SERVE_ERR /' /tmp/serve.err
exit 0
EOF

echo "test_nested_serve: vmexit-guest --vcpus $VCPUS --cpuid $CPUID --io $IO --hlt $HLT --msr $MSR --mmio $MMIO"
set +e
"$BED" --timeout "${VMEXIT_BED_TIMEOUT:-240}" --smp "${VMEXIT_BED_SMP:-1}" --mem 1024 \
	${VMEXIT_BED_LOG:+--log "$VMEXIT_BED_LOG"} "$WORK/inbed.sh" "$GUEST:/vmexit-guest" \
	"$VMEXIT:/vmexit" >"$WORK/bed.out"
brc=$?
set -e
[ $brc = 77 ] && skip "the nested bed cannot run here (see the bed: SKIP line above)"
[ $brc = 0 ] || { sed 's/^/  | /' "$WORK/bed.out"; fail "the bed failed (exit $brc)"; }

# The SVM names serve uses, from this build's table (`vmexit list reasons`).
"$VMEXIT" list reasons >"$WORK/reasons.txt"
python3 - "$WORK/bed.out" "$WORK/reasons.txt" $VCPUS $CPUID $IO $HLT $MSR $MMIO <<'PY'
import re, sys
from collections import Counter
out, reasons = sys.argv[1], sys.argv[2]
vcpus, cpuid, io, hlt, msr, mmio = map(int, sys.argv[3:])
name_of = {}
section = None
for l in open(reasons):
    if re.match(r"^\w+:", l):
        section = l.split(":")[0]
    m = re.match(r"^\s+(0x[0-9a-f]+|\d+)\s+(\S+)", l)
    if m and section == "svm":
        name_of[int(m.group(1), 0)] = m.group(2)
hist, dropped, kern, user, done, lost, other = Counter(), 0, Counter(), Counter(), Counter(), {}, []
isas, rc = set(), {}
for line in open(out, errors="replace"):
    tag, _, rest = line.rstrip("\n").partition(" ")
    if tag == "T_HIST":
        code, n = rest.split()
        hist[name_of.get(int(code), f"UNKNOWN_{int(code):#x}")] += int(n)
    elif tag == "T_HIST_DROPPED":
        dropped = int(rest)
    elif tag in ("T_GUEST_RC", "T_SERVE_RC"):
        rc[tag] = int(rest)
    elif tag == "T_METRIC":
        m = re.match(r'(\w+)\{(.*)\} (\S+)$', rest)
        name, labels, v = m.group(1), dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))), float(m.group(3))
        if name == "vmexit_lost_exits_total":
            lost[labels["cause"]] = v
            continue
        if labels.get("guest") != "bedserve":
            other.append(rest)
            continue
        if labels["kind"] == "kernel":
            isas.add(labels["isa"])
            (kern if name == "vmexit_exits_total" else done)[labels["reason"]] += v
        elif name == "vmexit_exits_total":
            user[labels["reason"]] += v
    else:
        print("  | " + line.rstrip("\n"))
bad = []
def check(what, got, want):
    print(f"{what}: got {got}, expected {want}")
    if got != want:
        bad.append(what)
check("guest and serve exit status", rc, {"T_GUEST_RC": 0, "T_SERVE_RC": 0})
check("series of other guests", other, [])
check("isa label of kernel exits", isas, {"svm"})
# The hist map may drop a hit when two CPUs insert a new key at once; it counts the drops.
check("kernel exits by reason: serve >= hist, the difference = hist's drops",
      all(kern[r] >= n for r, n in hist.items()) and set(kern) == set(hist) and
      sum(kern.values()) - sum(hist.values()) == dropped, True)
print(f"  serve {dict(kern)}\n  hist  {dict(hist)} (dropped {dropped})")
# Each vCPU: io + 1 port writes (the last says "done"), and the documented instruction counts.
for r, n in {"cpuid": cpuid, "io": io + 1, "hlt": hlt, "msr": msr}.items():
    check(f"kernel {r}", kern[r], vcpus * n)
check("completed kernel exits <= seen", all(done[r] <= kern[r] for r in done), True)
check("userspace exits", dict(user), {"IO": vcpus * (io + 1), "MMIO": vcpus * mmio, "HLT": vcpus * hlt})
check("lost", {k: v for k, v in lost.items() if v and k not in ("unmatched_entry",)}, {})
if bad:
    print("FAILED:", ", ".join(bad)); sys.exit(1)
PY
echo "PASS: test_nested_serve"
