#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The bundled guest's --touch N --uffd-delay-us US (the workload of the SVM bed's uffd test,
# tests/vm/test_nested_uffd.sh): each vCPU writes to N pages of a memslot the VMM registered
# with userfaultfd, whose handler answers each missing-page fault US later. Expected from the
# workload: every page faults once, on its first touch (vcpus x N faults per VM, whatever the
# passes), the guest counts N touches per pass, and no vCPU ends before its N faults were
# answered (>= N x US). Without --uffd-delay-us the same touches run on plain memory. Bad input
# is a usage error (status 2). Needs only /dev/kvm and userfaultfd: this host runs it all.
set -u
. "$(dirname "$0")/lib.sh"
guest_test_start "${1:-.output}"
GUEST=$OUT/vmexit-guest
N=12
US=20000

run() {	# run NAME ARGS...: the guest's JSON in $TMP/NAME
	local name=$1; shift
	timeout 120 "$GUEST" --json "$@" >"$TMP/$name" 2>"$TMP/$name.err" && return
	local rc=$?
	cat "$TMP/$name.err"
	fail "vmexit-guest $* exited with $rc"
}
run two --vcpus 2 --touch $N --uffd-delay-us $US
run passes --vcpus 2 --touch $N --uffd-delay-us 1000 --io 20 --seconds 0.3
run vms --vms 2 --touch $N --uffd-delay-us 1000
run plain --vcpus 2 --touch $N

python3 - "$TMP" $N $US <<'PY' || exit 1
import json, sys
d, n, us = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
bad = []
def check(what, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + what + (" " + detail if detail else ""))
    if not ok:
        bad.append(what)
def vms(name):
    return [json.loads(l) for l in open(f"{d}/{name}") if l.strip()]

for name, nvms, delay in (("two", 1, us), ("passes", 1, 1000), ("vms", 2, 1000)):
    got = vms(name)
    check(f"{name}: {nvms} VM(s)", len(got) == nvms)
    for vm in got:
        nv = len(vm["vcpus"])
        check(f"{name} {vm['name']}: {nv} x {n} faults answered", vm.get("uffd") ==
              {"faults": nv * n, "delay_ns": delay * 1000}, f"({vm.get('uffd')})")
        for v in vm["vcpus"]:
            check(f"{name} {vm['name']} vCPU {v['vcpu']}: {n} touches per pass",
                  v["tally"]["touch"] == n * v["passes"],
                  f"({v['tally']['touch']} in {v['passes']} passes)")
            check(f"{name} {vm['name']} vCPU {v['vcpu']}: ran >= its {n} delays",
                  v["ns"] >= n * delay * 1000, f"({v['ns']} ns)")
# Later passes touch the same pages: no new faults, as the check above says; some were made.
check("passes: more than one pass", all(v["passes"] > 1 for v in vms("passes")[0]["vcpus"]))
plain = vms("plain")[0]
check("plain memory: no uffd", "uffd" not in plain)
check("plain memory: the touches", all(v["tally"]["touch"] == n for v in plain["vcpus"]))
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] || exit 1

expect_usage "add --touch N" "$GUEST" --uffd-delay-us 100
expect_usage "at most 512 pages in all" "$GUEST" --vcpus 2 --touch 257
echo "PASS: test_guest_uffd_host"
