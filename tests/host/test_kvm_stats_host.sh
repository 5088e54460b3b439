#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Real kernel, this host: KVM's own statistics as vmexit's source (stat --source kvm) and the
# cross-check of the BPF rows against them (stat --kvm-check).
#  - stat --source kvm, started before the bundled guests (2 VMs x 2 vCPUs, each gone 0.3 s
#    after its pass), read through debugfs (per VM; mounted here if it is not) and through the
#    stats fds the guest holds (--stats-fds, per vCPU): IO (io_exits), HLT (halt_exits) and
#    MMIO (mmio_exits) equal what the guests' arguments make and the guests' own tallies; exits
#    (KVM's every VM exit) holds at least IO + HLT; and no BPF program is held by that vmexit
#    (the program and link fds of that process; the same probe finds the BPF stat's below).
#  - serve --source kvm --by vcpu, the same for a guest that starts after it: its
#    vmexit_exits_total{isa="kvm"} series; promtool accepts the exposition; no BPF held.
#  - kernel lockdown (debugfs refuses root its writable files, KVM's counters among them): the
#    debugfs way says so once and reads nothing, and the cross-check's guest holds stats fds.
#  - stat --kvm-check -p on a guest that starts after it: no disagreement, exit status 0; the
#    same with the test-only VMEXIT_TEST_KVM_STATS_SKEW=io_exits:3 (KVM's io_exits read 3 too
#    many): the IO line says DIFFER by +3, exit status 3.
# Which statistics this kernel has is printed (the descriptors' names). $1: the build directory.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (pidfd_getfd of another user's VMM, BPF for --kvm-check)"
[ -c /dev/kvm ] || skip "/dev/kvm does not exist: no KVM on this host (load kvm)"
host_binaries "$OUT"
need_cmd curl curl
PY=/usr/bin/python3
[ -x $PY ] || PY=python3
TMP=$(mktemp -d /tmp/vmexit-test-kvmstats.XXXXXX)
KPID= gpid= MOUNTED=
trap '[ -n "$KPID" ] && kill $KPID 2>/dev/null; [ -n "$gpid" ] && kill -9 $gpid 2>/dev/null; wait 2>/dev/null; [ -n "$MOUNTED" ] && umount /sys/kernel/debug; rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
NAME=kvst-$$ VCPUS=2 IO=40 IN=10 MMIO=7 HLT=5

# bpf_progs_of PID: the ids of the BPF programs PID holds, by a program fd or a link fd (their
# /proc fdinfo's prog_id; bpftool's pids need a pid iterator not every kernel and bpftool has).
bpf_progs_of() {
	local fd t ids=
	for fd in /proc/$1/fd/*; do
		t=$(readlink "$fd" 2>/dev/null) || continue
		case $t in
		anon_inode:bpf-prog|anon_inode:bpf_link)
			ids="$ids $(awk '/^prog_id:/ { print $2 }' "/proc/$1/fdinfo/${fd##*/}" 2>/dev/null)" ;;
		esac
	done
	echo $ids
}

# kvm_stat_run WAY [GUEST ARGS...]: stat --source kvm (per vCPU for WAY vcpu) started first,
# then 2 VMs x $VCPUS vCPUs of the bundled guest, each gone 0.3 s after its pass: every count
# from the guests' whole lives, checked against their arguments and tallies.
kvm_stat_run() {
	local way=$1 by=
	shift
	[ $way = vcpu ] && by="--by vcpu"
	"$VMEXIT" stat --source kvm -v $by --json -g $NAME-$way-0 -g $NAME-$way-1 \
		>"$TMP/kvm-$way.json" 2>"$TMP/kvm.err" &
	KPID=$!
	wait_said "$TMP/kvm.err" "Reading KVM's statistics" $KPID ||
		{ cat "$TMP/kvm.err"; fail "stat --source kvm did not start"; }
	"$GUEST" --vms 2 --vcpus $VCPUS --io $IO --in $IN --mmio $MMIO --hlt $HLT --linger 0.3 \
		--name $NAME-$way --json "$@" >"$TMP/guest-$way.json" 2>"$TMP/guest.err" ||
		{ cat "$TMP/guest.err"; fail "vmexit-guest failed"; }
	held=$(bpf_progs_of $KPID)
	[ -z "$held" ] || fail "stat --source kvm holds BPF programs: ids $held"
	kill -INT $KPID
	wait $KPID
	rc=$?
	KPID=
	cat "$TMP/kvm.err" | tee -a "$TMP/all-stderr"
	[ $rc = 0 ] || fail "stat --source kvm: exit status $rc"
	$PY - "$TMP/kvm-$way.json" "$TMP/guest-$way.json" $IO $IN $MMIO $HLT $VCPUS $way <<'PYEOF' ||
import json, sys
kvm = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
guests = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
io, inn, mmio, hlt, vcpus = map(int, sys.argv[3:8])
per_vcpu = sys.argv[8] == "vcpu"
final = kvm[-1]
assert final["final"], "the last object is not the summary"
print("KVM statistics read (%s, non-zero):" % ("stats fds, per vCPU" if per_vcpu else
      "per VM"), " ".join(sorted({r["kvm"] for r in final["rows"]})))
rows = {(r["pid"], r["vcpu"], r["stat"]): r["total"] for r in final["rows"]}
name = {"IO": "io_exits", "HLT": "halt_exits", "MMIO": "mmio_exits", "exits": "exits"}
bad = 0
assert len(guests) == 2, "want 2 guest lines, got %d" % len(guests)
for g in guests:
    assert len(g["vcpus"]) == vcpus
    # want: the arguments; tally: the guest's own count; own: KVM's counter as the VMM read it
    # from the vCPU's stats fd at its end (vmexit-guest --json "kvm"), summed per VM.
    want, tally, own = {}, {}, {}
    for v in g["vcpus"]:
        assert "kvm" in v, "vmexit-guest read no KVM statistics of its vCPUs (a kernel before 5.14?)"
        p = v["passes"]
        w = {"IO": p * (io + inn + 1), "HLT": p * hlt, "MMIO": p * mmio}
        key = v["vcpu"] if per_vcpu else -1
        for stat, n in w.items():
            want[(key, stat)] = want.get((key, stat), 0) + n
            tally[(key, stat)] = tally.get((key, stat), 0) + v["exits"][stat]
        for stat in name:
            own[(key, stat)] = own.get((key, stat), 0) + v["kvm"][name[stat]]
    for (vcpu, stat), n in sorted(want.items()):
        got = rows.get((g["pid"], vcpu, stat), 0)
        k = own[(vcpu, stat)]
        # vmexit reads what KVM counted, exactly; KVM counts what the guest did, where it
        # keeps that counter (kvm_pvm leaves io_exits at 0): said, not failed.
        ok = got == k and n == tally[(vcpu, stat)]
        bad += not ok
        print("%s pid %d vcpu %d %s: vmexit %d, KVM's own %d, from the arguments %d, the guest's tally %d%s" %
              ("ok:" if ok else "FAIL:", g["pid"], vcpu, stat, got, k, n, tally[(vcpu, stat)],
               "" if k == n else " (note: this KVM's %s does not count them all)" % name[stat]))
        ex = rows.get((g["pid"], vcpu, "exits"))
        if stat == "IO":
            if ex != own[(vcpu, "exits")]:
                bad += 1
                print("FAIL: pid %d vcpu %d exits: vmexit %s, KVM's own %d" % (g["pid"], vcpu, ex, own[(vcpu, "exits")]))
            elif ex < n + want[(vcpu, "HLT")]:
                bad += 1
                print("FAIL: pid %d vcpu %d exits %d < IO + HLT" % (g["pid"], vcpu, ex))
sys.exit(1 if bad else 0)
PYEOF
		{ ls /sys/kernel/debug/kvm; fail "KVM's counts differ (above)"; }
}

# debugfs: the way in for a VMM that holds no stats fds (all but a few).
MOUNTED=
if [ ! -d /sys/kernel/debug/kvm ]; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null && MOUNTED=1
fi
[ -d /sys/kernel/debug/kvm ] || fail "no /sys/kernel/debug/kvm although root and KVM"
# Kernel lockdown refuses debugfs' writable files to root too, KVM's counters among them (the
# host-wide kvm/exits is one): there the debugfs way must say so in one line, read nothing,
# and the cross-check below goes through the guest's stats fds instead.
LOCKED=
if ! cat /sys/kernel/debug/kvm/exits >/dev/null 2>"$TMP/probe.err"; then
	grep -q "Operation not permitted" "$TMP/probe.err" ||
		{ cat "$TMP/probe.err"; fail "debugfs kvm/exits unreadable, and not by lockdown"; }
	LOCKED=--stats-fds
fi
if [ -z "$LOCKED" ]; then
	kvm_stat_run vm
else
	: >"$TMP/lock.err"
	"$VMEXIT" stat --source kvm --json -g $NAME-lock >"$TMP/lock.json" 2>"$TMP/lock.err" &
	KPID=$!
	wait_said "$TMP/lock.err" "Reading KVM's statistics" $KPID ||
		{ cat "$TMP/lock.err"; fail "stat --source kvm did not start"; }
	"$GUEST" --vcpus $VCPUS --io $IO --linger 0.5 --name $NAME-lock >/dev/null 2>&1 ||
		fail "vmexit-guest failed"
	kill -INT $KPID
	wait $KPID
	rc=$?
	KPID=
	# Its one guest refused: no figures of any guest, exit 1 (README, "KVM's own statistics").
	[ $rc = 1 ] || { cat "$TMP/lock.err"; fail "lockdown: exit status $rc with every guest refused (want 1)"; }
	n=$(grep -c "debugfs refuses KVM's statistics files (kernel lockdown" "$TMP/lock.err")
	[ "$n" = 1 ] || { cat "$TMP/lock.err"; fail "lockdown: want the refusal said once, said $n times"; }
	! grep -q '"stat"' "$TMP/lock.json" || { cat "$TMP/lock.json"; fail "lockdown: rows read anyway"; }
	echo "note: kernel lockdown refuses debugfs' KVM counters here: the debugfs way said so: $(grep refuses "$TMP/lock.err")"
fi
# The VMM's own stats fds (vmexit-guest --stats-fds), copied with pidfd_getfd: per vCPU.
kvm_stat_run vcpu --stats-fds

# --- serve --source kvm: the same counts as series, a valid exposition, no BPF
"$VMEXIT" serve --source kvm --by vcpu --listen 127.0.0.1:0 -g $NAME-s >/dev/null \
	2>"$TMP/serve.err" &
KPID=$!
wait_said "$TMP/serve.err" "listening on" $KPID || { cat "$TMP/serve.err"; fail "serve did not start"; }
URL=$(grep -o 'http://[^ ]*/metrics' "$TMP/serve.err")
"$GUEST" --vcpus $VCPUS --io $IO --in $IN --mmio $MMIO --hlt $HLT --linger 0.3 --name $NAME-s \
	--stats-fds --json >"$TMP/sguest.json" 2>"$TMP/guest.err" || { cat "$TMP/guest.err"; fail "vmexit-guest failed"; }
curl -sf "$URL" >"$TMP/metrics.txt" || fail "no answer from $URL"
held=$(bpf_progs_of $KPID)
[ -z "$held" ] || fail "serve --source kvm holds BPF programs: ids $held"
kill -TERM $KPID
wait $KPID
rc=$?
KPID=
cat "$TMP/serve.err" >>"$TMP/all-stderr"
[ $rc = 0 ] || { cat "$TMP/serve.err"; fail "serve --source kvm: exit status $rc"; }
if command -v promtool >/dev/null; then
	promtool check metrics <"$TMP/metrics.txt" >"$TMP/promtool.out" 2>&1 ||
		{ cat "$TMP/promtool.out"; fail "promtool refuses serve --source kvm's exposition"; }
fi
$PY - "$TMP/metrics.txt" "$TMP/sguest.json" $IO $IN $MMIO $HLT <<'PYEOF' || fail "serve's series differ (above)"
import json, re, sys
series = {}
for l in open(sys.argv[1]):
    m = re.match(r'vmexit_exits_total\{guest="[^"]*",pid="(\d+)",vcpu="(\d+)",kind="\w+",isa="kvm",reason="(\w+)"\} (\d+)', l)
    if m:
        series[(int(m[1]), int(m[2]), m[3])] = int(m[4])
io, inn, mmio, hlt = map(int, sys.argv[3:7])
bad = 0
name = {"IO": "io_exits", "HLT": "halt_exits", "MMIO": "mmio_exits"}
for g in (json.loads(l) for l in open(sys.argv[2]) if l.strip()):
    for v in g["vcpus"]:
        p = v["passes"]
        for r, n in (("IO", p * (io + inn + 1)), ("HLT", p * hlt), ("MMIO", p * mmio)):
            got = series.get((g["pid"], v["vcpu"], r))
            k = v["kvm"][name[r]]	# KVM's own, as the VMM read it (see above)
            ok = got == k and v["exits"][r] == n
            print("%s serve pid %d vcpu %d %s: %s, KVM's own %d, want %d%s" % ("ok:" if ok else "FAIL:",
                  g["pid"], v["vcpu"], r, got, k, n, "" if k == n else " (note: this KVM's %s does not count them all)" % name[r]))
            bad += not ok
sys.exit(1 if bad else 0)
PYEOF

# --- a VMM that refuses us (another user's, no CAP_SYS_PTRACE, debugfs root's): said in one
# line naming the way out, exit 1, no samples of zeros; the same VMM read as root is counted
# (under lockdown through the stats fds it holds: debugfs refuses root too, see above).
NR=$TMP/nobody
mkdir "$NR" && chmod 755 "$NR" && cp "$VMEXIT" "$NR/vmexit" && chmod 755 "$NR/vmexit"
"$GUEST" --io $IO --linger 60 --name $NAME-nr $LOCKED >/dev/null 2>"$TMP/nr.guest" &
gpid=$!
wait_said "$TMP/nr.guest" "$NAME-nr (pid" $gpid || { cat "$TMP/nr.guest"; fail "vmexit-guest failed"; }
setpriv --reuid=65534 --regid=65534 --clear-groups "$NR/vmexit" stat --source kvm -p $gpid 0.2 \
	>"$TMP/nr.out" 2>"$TMP/nr.err" &
KPID=$!
ends_within 10 $KPID "stat --source kvm of another user's VMM" "$TMP/nr.err"
rc=$?
KPID=
[ $rc = 1 ] || { cat "$TMP/nr.err"; fail "stat --source kvm refused by the VMM: exit status $rc (want 1)"; }
# As nobody even the listing of its files is refused (/proc/PID/fd is its owner's, mode 0500).
n=$(grep -c "^vmexit: pid $gpid: cannot list its open files (/proc/$gpid/fd: .* run as its user, or as root" "$TMP/nr.err")
[ "$n" = 1 ] || { cat "$TMP/nr.err"; fail "refused: want the refusal said once, said $n times"; }
[ ! -s "$TMP/nr.out" ] || { cat "$TMP/nr.out"; fail "refused: samples printed anyway"; }
# As root the same VMM is read (the refusal above was the user's, not the guest's).
"$VMEXIT" stat --source kvm -v -p $gpid 0.2 1 >"$TMP/nr.root" 2>"$TMP/nr.err" ||
	{ cat "$TMP/nr.err"; fail "stat --source kvm -p $gpid as root failed"; }
grep -q "^vmexit: pid $gpid ($NAME-nr): KVM statistics from" "$TMP/nr.err" &&
	grep -q "(KVM's statistics, 1 guest)" "$TMP/nr.root" ||
	{ cat "$TMP/nr.err" "$TMP/nr.root"; fail "as root: pid $gpid's statistics not read"; }
kill $gpid; wait $gpid 2>/dev/null; gpid=

# --- the cross-check, on a guest that starts after vmexit: its whole life on both sides
cross() {	# cross OUTFILE [ENV...]: stat --kvm-check -p of a stopped guest run to its end
	local out=$1 spid
	shift
	# stopped_guest's, with the guest's --json kept: KVM's own counters, the truth below.
	sh -c 'kill -STOP $$; exec "$@"' sh "$GUEST" --vcpus $VCPUS --io $IO --in $IN --mmio $MMIO \
		--hlt $HLT --linger 0.3 --json $LOCKED >"$out.guest" 2>/dev/null &
	gpid=$!
	for _ in $(seq 600); do
		[ "$(awk '/^State:/ { print $2 }' "/proc/$gpid/status" 2>/dev/null)" = T ] && break
		sleep 0.1
	done
	env "$@" "$VMEXIT" stat --kvm-check -p $gpid 0.5 >"$out" 2>"$TMP/cross.err" &
	spid=$!
	wait_tracing $spid
	[ -n "$(bpf_progs_of $spid)" ] || fail "the BPF programs of stat (pid $spid) were not found: the no-BPF probe above proves nothing"
	kill -CONT $gpid
	wait $gpid || fail "vmexit-guest failed"
	gpid=
	ends_within 60 $spid "stat --kvm-check" "$TMP/cross.err"
	rc=$?
	cat "$TMP/cross.err" >>"$TMP/all-stderr"
	sed -n '/^KVM statistics against/,$p' "$out"
}
# off GUEST.json: the reasons whose KVM counter (as the VMM read it) is not the guest's count:
# where this KVM does not keep it (kvm_pvm's io_exits), --kvm-check must say DIFFER.
off() {
	$PY - "$1" <<'PYEOF'
import json, sys
g = json.loads(open(sys.argv[1]).readline())
for r, k in (("IO", "io_exits"), ("HLT", "halt_exits"), ("MMIO", "mmio_exits")):
    if sum(v["kvm"][k] for v in g["vcpus"]) != sum(v["exits"][r] for v in g["vcpus"]):
        print(r)
PYEOF
}
cross "$TMP/cross.out"
OFF=$(off "$TMP/cross.out.guest")
want=$(echo $OFF | wc -w)
[ -z "$OFF" ] || echo "note: this KVM's counters of $OFF are not the guest's counts: --kvm-check must say DIFFER there"
[ $rc = $([ $want = 0 ] && echo 0 || echo 3) ] ||
	{ cat "$TMP/cross.err"; fail "stat --kvm-check on a normal run: status $rc ($want reasons KVM miscounts)"; }
grep -qE "^$want disagreements?$" "$TMP/cross.out" || fail "stat --kvm-check: not '$want disagreements'"
for r in IO HLT MMIO; do
	if [[ " $OFF " == *" $r "* ]]; then
		grep -qE " $r +DIFFER:" "$TMP/cross.out" || fail "stat --kvm-check: $r: KVM miscounts it, no DIFFER"
	else
		grep -qE " $r +agree:" "$TMP/cross.out" || fail "stat --kvm-check: $r not compared"
	fi
done
if kvm_exit_fires "$GUEST"; then
	grep -qE " exits +agree:" "$TMP/cross.out" ||
		fail "stat --kvm-check: kvm_exit fires here but exits did not agree"
fi
# A planted difference, on a counter this KVM keeps.
for r in IO MMIO HLT; do [[ " $OFF " == *" $r "* ]] || break; done
case $r in IO) k=io_exits ;; MMIO) k=mmio_exits ;; HLT) k=halt_exits ;; esac
cross "$TMP/skew.out" VMEXIT_TEST_KVM_STATS_SKEW=$k:3
[ $rc = 3 ] || fail "stat --kvm-check with a planted difference: status $rc (want 3)"
grep -qE " $r +DIFFER: .*, \+3: " "$TMP/skew.out" ||
	fail "stat --kvm-check did not report the planted $k difference"
grep -qE "^$((want + 1)) disagreements?$" "$TMP/skew.out" ||
	fail "stat --kvm-check: want exactly $((want + 1)) disagreements"
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_kvm_stats_host"
