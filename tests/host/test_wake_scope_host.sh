#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stat --wake keeps the guests and the vCPU the run traces, as its exit rows: -g NAME, -c N and
# a command's forked VMM (here, or in the SVM bed through tests/vm/test_nested_host.sh).
#
# Usage: tests/host/test_wake_scope_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# The workload: two guests of unique names, each `vmexit-guest --timer T --timer-us 2000 --vcpus
# 2`: per vCPU T x2APIC timer interrupts (vector 0x40) delivered while halted. Both are held
# (--hold-until) while `stat --wake --csv -g A -c 1` attaches, then run together. Its wake and
# halt rows must be guest A's (its pid) and vCPU 1's only, with T timer deliveries: guest B's,
# vCPU 0's, and any other guest's on the host are not the run's. A second `stat --wake` of
# every guest runs beside it: once both guests have ended, its wake_threads and wake_thr_shared
# maps (bpftool, found by its fds) hold none of their 4 vCPU threads: a thread's record goes with it (so a thread id
# given again starts anew, and the map keeps room for the vCPUs to come). Then `stat --wake --csv -- sh -c
# 'GUEST --timer T; exit $?'`: the shell forks the VMM (no exec), whose T deliveries are the
# command's and must be kept; with --overhead, its line counts --wake's programs apart from the
# exit programs: at least 2T runs (each delivery's hrtimer expiry and its kvm_entry). Last,
# `stat --wake -v -g C` started while a busy guest makes exits (the runs before start idle): on
# a kernel that fires kvm_exit for it (perf stat says), it starts on the fast pair, and guest C's
# T timer deliveries a vCPU are counted once.
set -u
OUT=${1:?usage: $0 OUTDIR}
OUT=$(cd "$OUT" && pwd)
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
T=30

[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || { echo "FAIL: $VMEXIT or $GUEST missing"; exit 1; }
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
kvm_exit_fires "$GUEST" || wake_untimed_only test_wake_scope_host
need_cmd python3 python3
need_cmd bpftool bpftool
need_cmd perf linux-perf

TMP=$(mktemp -d /tmp/vmexit-test-wake-scope.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT

A=wscopeA$$
B=wscopeB$$
declare -A GP
for g in $A $B; do
	"$GUEST" --name $g --timer $T --timer-us 2000 --vcpus 2 --hold-until "$TMP/go" \
		>"$TMP/$g.out" 2>"$TMP/$g.err" &
	PIDS+=($!)
	GP[$g]=$!
	wait_line "$TMP/$g.err" "held until" $! || { cat "$TMP/$g.err"; fail "$g was never held"; }
done
"$VMEXIT" stat --wake --csv -g $A -c 1 >"$TMP/g.csv" 2>"$TMP/g.err" &
sp=$!
PIDS+=($sp)
"$VMEXIT" stat --wake --csv >/dev/null 2>"$TMP/all.err" &
ap=$!
PIDS+=($ap)
wait_tracing $sp $ap
touch "$TMP/go"
for g in $A $B; do
	wait ${GP[$g]} || { rc=$?; cat "$TMP/$g.err"; fail "$g failed with exit $rc (its tally above)"; }
done
# The maps by stat's own fds (/proc/PID/fdinfo: map_id), named as the program names them: the
# records' array and the hash of the thread ids that met in one of its slots.
for m in wake_threads wake_thr_shared; do
	id=$(held_map_id $ap $m)
	[ -n "$id" ] || fail "no $m map of stat (pid $ap) in bpftool's list"
	bpftool -j map dump id "$id" >"$TMP/$m.json" || fail "bpftool map dump id $id failed"
	left=$(python3 -c '
import json, sys
gone = {int(p) for p in sys.argv[2:]}
print(sum(1 for e in json.load(open(sys.argv[1]))
          if e.get("formatted", {}).get("value", {}).get("tgid") in gone))' \
		"$TMP/$m.json" ${GP[$A]} ${GP[$B]})
	echo "$m of stat --wake (map $id) after both guests ended: $left of their threads" \
	     "($(grep -o '"tgid"' "$TMP/$m.json" | wc -l) entries in all)"
	[ "$left" = 0 ] || fail "$m keeps $left threads of guests that ended"
	grep -q '"tgid"' "$TMP/$m.json" || [ "$(cat "$TMP/$m.json")" = "[]" ] ||
		fail "$m dumped without its fields (BTF): cannot tell whose threads"
done
# stat -g A ends by itself once guest A has gone (as perf stat -p does), most often before the
# maps above are read: only the stat of every guest is sent SIGINT.
kill -INT $ap
ends_within 120 $sp "stat --wake -g $A -c 1, after guest A ended," "$TMP/g.err" ||
	{ rc=$?; cat "$TMP/g.err"; fail "stat --wake -g $A -c 1 exited $rc"; }
grep -q 'every traced process has exited' "$TMP/g.err" ||
	{ cat "$TMP/g.err"; fail "stat --wake -g $A -c 1 did not end with guest A"; }
wait $ap || { rc=$?; cat "$TMP/all.err"; fail "stat --wake (every guest) exited $rc"; }

"$VMEXIT" stat --wake --overhead --csv -- sh -c '"$0" --timer "$1" --timer-us 2000; exit $?' \
	"$GUEST" $T >"$TMP/fork.csv" 2>"$TMP/fork.err" ||
	{ rc=$?; cat "$TMP/fork.err"; fail "stat --wake -- sh -c GUEST exited $rc"; }
runs=$(sed -n "s/.*--wake's programs [0-9.]* ms in \([0-9]*\) BPF runs.*/\1/p" "$TMP/fork.err")
echo "stat --wake --overhead: --wake's programs ran ${runs:-never} times"
[ -n "$runs" ] && [ "$runs" -ge $((2 * T)) ] ||
	{ cat "$TMP/fork.err"; fail "--overhead: --wake's runs not said, or fewer than 2 x $T"; }
cat "$TMP/g.err" "$TMP/fork.err" >"$TMP/all-stderr"
sanitizer_reports && fail "sanitizer reports (above)"

python3 - "$TMP/g.csv" "$TMP/fork.csv" $T ${GP[$A]} <<'PY' || fail "stat --wake's rows (above)"
import csv, sys
t, a = int(sys.argv[3]), int(sys.argv[4])
def rows(path):
    cols, out = None, []
    for r in csv.reader(open(path)):
        if r and r[0] == 'kind':
            cols = r
        elif r and r[0] in ('wake', 'hlt') and cols:
            out.append(dict(zip(cols, r)))
    return out
bad = []
g = rows(sys.argv[1])
seen = sorted({(w['kind'], int(w['pid']), int(w['vcpu'])) for w in g})
print(f'-g A -c 1: rows of {seen}; guest A is pid {a}')
if any(int(w['pid']) != a or int(w['vcpu']) != 1 for w in g):
    bad.append(f'-g A -c 1 kept rows of other guests or vCPUs: {seen}')
timer = [w for w in g if w['kind'] == 'wake' and w['source'] == 'timer'
         and int(w['vector']) == 0x40 and int(w['pid']) == a and int(w['vcpu']) == 1]
if len(timer) != 1 or int(timer[0]['count']) != t:
    bad.append(f'-g A -c 1: timer 0x40 on vCPU 1 {[w["count"] for w in timer]}, expected [{t}]')
if not any(w['kind'] == 'hlt' for w in g):
    bad.append('-g A -c 1: no halt row')
f = [w for w in rows(sys.argv[2]) if w['kind'] == 'wake' and w['source'] == 'timer'
     and int(w['vector']) == 0x40]
print(f'-- sh -c GUEST (forked): timer 0x40 rows {[(w["pid"], w["vcpu"], w["count"]) for w in f]}')
if sum(int(w['count']) for w in f) != t or len({w['pid'] for w in f}) != 1:
    bad.append(f'-- sh -c GUEST: the forked VMM\'s timer deliveries not {t} of one pid')
for line in bad:
    print('  ' + line)
sys.exit(1 if bad else 0)
PY
echo "PASS: stat --wake -g A -c 1 kept guest A's vCPU 1 only ($T timer deliveries); a forked VMM's $T kept"

# Started while exits run: a busy guest (CPUID exits, in the kernel) keeps them coming through
# stat's start-up check, so that on a kernel that fires kvm_exit the run starts on the fast pair
# (the runs above start idle, on the classic one). Guest C, held until stat traces, then makes
# per vCPU T timer deliveries, each counted once: T a vCPU, as above.
C=wscopeC$$
"$GUEST" --name busy$$ --cpuid 50000000 >"$TMP/busy.out" 2>"$TMP/busy.err" &
bp=$!
PIDS+=($bp)
"$GUEST" --name $C --timer $T --timer-us 2000 --vcpus 2 --hold-until "$TMP/go-c" \
	>"$TMP/$C.out" 2>"$TMP/$C.err" &
cp=$!
PIDS+=($cp)
wait_line "$TMP/$C.err" "held until" $cp || { cat "$TMP/$C.err"; fail "$C was never held"; }
# Whether this kernel fires kvm_exit for the busy guest at all (its own threads only).
perf stat -x, -o "$TMP/busy.csv" -e kvm:kvm_exit -p $bp -- sleep 0.5 2>"$TMP/busy-perf.err" ||
	{ cat "$TMP/busy-perf.err"; fail "perf stat -e kvm:kvm_exit -p (the busy guest) failed"; }
busy_exits=$(awk -F, '/kvm_exit/ { print $1 + 0 }' "$TMP/busy.csv")
[ -n "$busy_exits" ] || { cat "$TMP/busy.csv"; fail "perf stat counted no kvm_exit line"; }
echo "the busy guest: $busy_exits kvm_exit in 0.5 s"
kill -0 $bp 2>/dev/null || { cat "$TMP/busy.err"; fail "the busy guest ended before stat started"; }
"$VMEXIT" stat --wake -v --csv -g $C >"$TMP/c.csv" 2>"$TMP/c.err" &
sc=$!
PIDS+=($sc)
wait_tracing $sc
touch "$TMP/go-c"
wait $cp || { rc=$?; cat "$TMP/$C.err"; fail "$C failed with exit $rc (its tally above)"; }
ends_within 120 $sc "stat --wake -v -g $C, after guest C ended," "$TMP/c.err" ||
	{ rc=$?; cat "$TMP/c.err"; fail "stat --wake -v -g $C exited $rc"; }
kill $bp 2>/dev/null
grep '^vmexit: hooks: kvm_exit\|^vmexit: hooks: --wake\|--wake: .* programs attached' "$TMP/c.err"
# A kernel that never fires kvm_exit (a software KVM) has no exits for the check, and one whose
# BTF does not describe the raw kvm_exit has no fast pair: classic then.
if [ "$busy_exits" -gt 0 ] && kvm_tp_btf kvm_exit; then
	grep -q "^vmexit: hooks: kvm_exit tp_btf/kvm_exit" "$TMP/c.err" ||
		{ cat "$TMP/c.err"; fail "stat --wake beside a busy guest did not start on the fast pair"; }
fi
cat "$TMP/c.err" >>"$TMP/all-stderr"
sanitizer_reports && fail "sanitizer reports (above)"
python3 - "$TMP/c.csv" $T $cp <<'PY' || fail "stat --wake's rows of guest C (above)"
import csv, sys
t, c = int(sys.argv[2]), int(sys.argv[3])
cols, rows = None, []
for r in csv.reader(open(sys.argv[1])):
    if r and r[0] == 'kind':
        cols = r
    elif r and r[0] == 'wake' and cols:
        rows.append(dict(zip(cols, r)))
timer = {int(w['vcpu']): int(w['count']) for w in rows if w['source'] == 'timer'
         and int(w['vector']) == 0x40 and int(w['pid']) == c}
print(f'guest C (pid {c}), stat started beside a busy guest: timer 0x40 by vCPU {timer}')
sys.exit(0 if timer == {0: t, 1: t} else 1)
PY
echo "PASS: stat --wake started while exits ran: guest C's $T timer deliveries a vCPU, counted once"
