#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# stat --wake on real KVM (here, or in the SVM bed through tests/vm/test_nested_host.sh).
#
# Usage: tests/host/test_wake_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# The workload: each of V vCPUs of `vmexit-guest --timer N` arms its x2APIC one-shot timer
# (vector 0x40) N times and halts until it fires, handling each: N timer interrupts delivered
# per vCPU, all made pending in the vCPU's own thread. perf stat counts kvm_apic_accept_irq and
# kvm_vcpu_wakeup of the same run: every delivery vmexit keeps is one of those events and every
# halt one wake-up. Each row's parts must sum exactly to its total; a timer that fired while
# the vCPU halted is time in the halted parts.
set -u
OUT=${1:?usage: $0 OUTDIR}
OUT=$(cd "$OUT" && pwd)
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
N=300
V=2

[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || { echo "FAIL: $VMEXIT or $GUEST missing"; exit 1; }
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
command -v python3 >/dev/null || { echo "FAIL: python3 is needed to check the CSV"; exit 1; }
command -v perf >/dev/null || { echo "FAIL: perf not installed (apt-get install linux-perf)"; exit 1; }

TMP=$(mktemp -d /tmp/vmexit-test-wake.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# exec: the command stat traces (and whose rows it keeps) is the guest itself.
PERF=(perf stat -x, -o "$TMP/perf.csv" -e kvm:kvm_apic_accept_irq,kvm:kvm_vcpu_wakeup --)
chk "${PERF[@]}" "$VMEXIT" stat --wake --csv -- \
	sh -c 'exec "$0" --timer "$1" --vcpus "$2" >"$3"' "$GUEST" $N $V "$TMP/guest.out" \
	>"$TMP/stat.csv" || fail "stat --wake exited $? (its stderr above)"
python3 - "$TMP/stat.csv" "$TMP/perf.csv" $N $V <<'EOF' || fail "stat --wake (see above)"
import csv, sys
path, perf, n, v = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = {'wake': [], 'hlt': [], 'halt_poll': []}
head = {}
bad = []
for r in csv.reader(open(path)):
    if not r:
        continue
    if r[0].startswith('#'):
        bad.append('lost: ' + ','.join(r))
    elif r[0] == 'kind':
        head[r[1] if r[1] != 'pid' else None] = r
        cols = r
    elif r[0] in rows:
        rows[r[0]].append(dict(zip(cols, r)))
wparts = ['guest_ns', 'exit_ns', 'polled_ns', 'slept_ns', 'runq_ns', 'oncpu_ns']
hparts = ['poll_ns', 'sleep_ns', 'runq_ns', 'other_ns']
timer = {}
for w in rows['wake']:
    c, s = int(w['count']), int(w['sum_ns'])
    if sum(int(w[p]) for p in wparts) != s:
        bad.append(f'wake row parts do not sum to its total: {w}')
    # u64 in the kernel: a negative latency would wrap past any real one.
    if int(w['max_ns']) > 10**10 or c < 1:
        bad.append(f'wake row latency out of range: {w}')
    if w['source'] == 'timer' and w['vector'] == '64':
        timer[int(w['vcpu'])] = w
if sorted(timer) != list(range(v)) or any(int(w['count']) != n for w in timer.values()):
    bad.append(f'timer deliveries per vCPU: { {k: w["count"] for k, w in timer.items()} }, '
               f'expected {n} on each of vCPUs 0..{v - 1}')
# The guest halts until each timer fires: most deliveries wait in a halt.
for k, w in timer.items():
    halted = sum(int(w[p]) for p in ('polled_ns', 'slept_ns', 'runq_ns', 'oncpu_ns'))
    if halted * 2 < int(w['sum_ns']):
        bad.append(f'vCPU {k}: timer deliveries mostly not in the halted parts: {w}')
halts = 0
for h in rows['hlt']:
    halts += int(h['halts'])
    if int(h['polled']) + int(h['poll_slept']) + int(h['slept']) != int(h['halts']):
        bad.append(f'hlt row kinds do not add up to its halts: {h}')
    if sum(int(h[p]) for p in hparts) != int(h['sum_ns']):
        bad.append(f'hlt row parts do not sum to its total: {h}')
    if int(h['exits']) > int(h['halts']) or int(h['exits']) < 1:
        bad.append(f'hlt row: exits not within 1..halts: {h}')
if len(rows['halt_poll']) != 1 or int(rows['halt_poll'][0]['halts']) != halts:
    bad.append(f'halt-poll advice: {rows["halt_poll"]}, expected one VM with {halts} halts')
pc = {}
for l in open(perf):
    f = l.strip().split(',')
    if len(f) > 2 and f[2].startswith('kvm:'):
        pc[f[2]] = int(f[0])
delivered = sum(int(w['count']) for w in rows['wake'])
print(f'delivered {delivered} (timer {n} x {v}), halts {halts}; perf stat {pc}')
if pc.get('kvm:kvm_apic_accept_irq') != delivered:
    bad.append(f'perf counted {pc.get("kvm:kvm_apic_accept_irq")} kvm_apic_accept_irq, '
               f'vmexit {delivered} deliveries')
if pc.get('kvm:kvm_vcpu_wakeup') != halts:
    bad.append(f'perf counted {pc.get("kvm:kvm_vcpu_wakeup")} kvm_vcpu_wakeup, vmexit {halts}')
for b in bad:
    print('  ' + b)
sys.exit(1 if bad else 0)
EOF
sanitizer_reports && fail "sanitizer reports (above)"
echo "ok: test_wake_host"
