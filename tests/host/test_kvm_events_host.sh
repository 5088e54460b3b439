#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# --kvm-events on this host's real KVM: the other kvm tracepoints as stream / record events.
#
# Usage: tests/host/test_kvm_events_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# Expected numbers come from the workload (tools/vmexit-guest.md), never from vmexit: each vCPU
# of `vmexit-guest --io N --mmio M` does N `out 0xe9`, M one-byte stores to the unbacked GPA
# 0x10000000 and one `out 0xea` (pass done), so kvm:kvm_pio fires V*(N+1) times (N to port
# 0xe9 and one to 0xea per vCPU) and kvm:kvm_mmio V*M times, all writes of size 1. A kvm event
# is emitted when the tracepoint fires, so unlike exits even the last one of a vCPU is there.
# perf stat, run around the same capture, counts the same tracepoints as a cross-check.
set -u
OUT=${1:?usage: $0 OUTDIR}
OUT=$(cd "$OUT" && pwd)
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
N=200
M=50
V=2

[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || { echo "FAIL: $VMEXIT or $GUEST missing"; exit 1; }
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
fails=0
pass() { echo "ok: $*"; }
# Unlike lib.sh's, this fail counts and goes on: the test reports every mismatch.
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v python3 >/dev/null || { echo "FAIL: python3 is needed to check JSON"; exit 1; }

TMP=$(mktemp -d /tmp/vmexit-test-kvm-events.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

need_stream --kvm-events pio
# need_kvm_bpf showed /dev/kvm opens: a guest that cannot run now is a failure, not this host.
"$GUEST" --io 1 >/dev/null 2>&1 || { echo "FAIL: $GUEST --io 1 failed although /dev/kvm opens"; exit 1; }
kfires=0
kvm_exit_fires "$GUEST" && kfires=1

WORK=(-- "$GUEST" --io $N --mmio $M --vcpus $V)

# 1. stream --json: exactly the predicted pio / mmio events, with their fields; perf agrees.
command -v perf >/dev/null || { echo "FAIL: perf not installed (apt-get install linux-perf)"; exit 1; }
PERF=(perf stat -x, -o "$TMP/perf.csv" -e kvm:kvm_pio,kvm:kvm_mmio --)
if chk "${PERF[@]}" "$VMEXIT" stream --json --kvm-events pio,mmio "${WORK[@]}" \
	>"$TMP/s.json" 2>"$TMP/s.err"; then
	if python3 - "$TMP/s.json" "$TMP/perf.csv" $N $M $V <<'EOF'; then
import collections, json, os, sys
path, perf, n, m, v = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
bad = []
pio = collections.Counter()	# (tid, vcpu, port)
mmio = collections.Counter()	# (tid, vcpu)
io_exits = lost = 0
pids = set()
for i, line in enumerate(open(path), 1):
    o = json.loads(line)
    if 'lost' in o:
        lost += o['lost']
        continue
    if o['type'] == 'user_exit' and o['reason_name'] == 'IO':
        io_exits += 1
    if o['type'] != 'kvm_event':
        continue
    pids.add(o['pid'])
    if o['latency_ns'] != 0 or 'isa' in o or 'reason' in o:
        bad.append(f'line {i}: not an instant kvm event: {line}')
    if o['kvm_event'] == 'pio':
        if (o['access'], o['size'], o['count']) != ('write', 1, 1):
            bad.append(f'line {i}: pio fields: {line}')
        pio[(o['tid'], o['vcpu'], o['port'])] += 1
    elif o['kvm_event'] == 'mmio':
        if (o['access'], o['size'], o['gpa']) != ('write', 1, '0x10000000'):
            bad.append(f'line {i}: mmio fields: {line}')
        mmio[(o['tid'], o['vcpu'])] += 1
    else:
        bad.append(f'line {i}: kvm event not asked for: {line}')
tids = {k[0] for k in pio}
vcpus = sorted({k[1] for k in pio})
want_pio = {(t, c, p): (n if p == '0xe9' else 1) for (t, c, _) in pio for p in ('0xe9', '0xea')}
if pio != want_pio or len(tids) != v or vcpus != list(range(v)):
    bad.append(f'pio per (tid, vcpu, port): {dict(pio)}; expected {n} to 0xe9 and 1 to 0xea '
               f'on each of vCPUs 0..{v - 1}')
if {(t, c): k for (t, c), k in mmio.items()} != {(t, c): m for (t, c, _) in pio}:
    bad.append(f'mmio per (tid, vcpu): {dict(mmio)}; expected {m} on each vCPU thread')
if len(pids) != 1:
    bad.append(f'kvm events from pids {pids}, expected the one guest')
if lost:
    bad.append(f'{lost} records lost')
# N+1 per vCPU: the last (the done port) emitted in flight when its thread exits.
if io_exits != v * (n + 1):
    bad.append(f'{io_exits} IO exits streamed alongside, expected {v * (n + 1)}')
total_pio, total_mmio = sum(pio.values()), sum(mmio.values())
print(f'kvm_pio {total_pio} (V*(N+1) = {v * (n + 1)}), kvm_mmio {total_mmio} (V*M = {v * m})')
if total_pio != v * (n + 1) or total_mmio != v * m:
    bad.append('wrong totals')
if os.path.exists(perf):
    c = {}
    for l in open(perf):
        f = l.strip().split(',')
        if len(f) > 2 and f[2].startswith('kvm:'):
            c[f[2]] = int(f[0])
    print(f'perf stat: {c}')
    if c.get('kvm:kvm_pio') != total_pio or c.get('kvm:kvm_mmio') != total_mmio:
        bad.append(f'perf counts {c} differ from the stream')
for b in bad:
    print('  ' + b)
sys.exit(1 if bad else 0)
EOF
		pass "stream --json --kvm-events pio,mmio: exact counts and fields"
	else
		fail "stream --json --kvm-events pio,mmio (see above)"
	fi
	grep -Eq '^vmexit: [0-9]+ events, 0 lost' "$TMP/s.err" ||
		fail "stream: no '0 lost' summary on stderr: $(cat "$TMP/s.err")"
else
	fail "stream --json --kvm-events exited $?: $(cat "$TMP/s.err")"
fi

# 2. --perfetto: valid JSON, one instant per kvm event on its vCPU's track, exits unchanged.
if chk "$VMEXIT" stream --perfetto "$TMP/trace.json" --kvm-events pio,mmio "${WORK[@]}" \
	>/dev/null 2>"$TMP/p.err"; then
	if python3 - "$TMP/trace.json" $N $M $V <<'EOF'; then
import collections, json, sys
t = json.load(open(sys.argv[1]))
n, m, v = map(int, sys.argv[2:])
tracks = {(e['pid'], e['tid']): e['args']['name'] for e in t
          if e['ph'] == 'M' and e['name'] == 'thread_name'}
inst = collections.Counter()
bad = []
slices = 0
for e in t:
    if e.get('cat') == 'kvm_event':
        if e['ph'] != 'i' or e['s'] != 't' or 'dur' in e:
            bad.append(f'not a thread instant: {e}')
        tr = tracks.get((e['pid'], e['tid']), '?')
        if not tr.startswith('vCPU ') or tr.endswith('(VMM)'):
            bad.append(f'kvm event on track {tr!r}: {e}')
        inst[(e['name'], tr)] += 1
    elif e['ph'] == 'X' and tracks.get((e['pid'], e['tid']), '').endswith('(VMM)'):
        slices += 1
want = {}
for c in range(v):
    want[('kvm_pio', f'vCPU {c}')] = n + 1
    want[('kvm_mmio', f'vCPU {c}')] = m
print(f'instants {dict(inst)}, {slices} exit slices')
if inst != want:
    bad.append(f'expected instants {want}')
# Every user exit: N + 1 IO (the done port's in flight when its thread exits) and M MMIO.
if slices != v * (n + 1 + m):
    bad.append(f'{slices} X slices on the VMM tracks, expected {v * (n + 1 + m)} user exits')
for b in bad[:10]:
    print('  ' + b)
sys.exit(1 if bad else 0)
EOF
		pass "--perfetto: one instant per kvm event, on the vCPU tracks"
	else
		fail "--perfetto with kvm events (see above)"
	fi
else
	fail "stream --perfetto --kvm-events exited $?: $(cat "$TMP/p.err")"
fi

# 3. The default line (built-in rules) names the port, size and direction.
if chk "$VMEXIT" stream --kvm-events pio -- "$GUEST" --io $N >"$TMP/lines" 2>/dev/null; then
	got=$(grep -Ec ' pio write port 0xe9 size 1 val 0x[0-9a-f]+$' "$TMP/lines")
	end=$(grep -Ec ' pio write port 0xea size 1 val 0x[0-9a-f]+$' "$TMP/lines")
	[ "$got" = $N ] && [ "$end" = 1 ] && pass "default lines: $got 'pio write port 0xe9' + 1" ||
		fail "default lines: $got pio lines to 0xe9 (want $N), $end to 0xea (want 1)"
else
	fail "stream --kvm-events pio (lines) failed"
fi

# 4. record / report: --events carry them, the stat table ignores them.
REC=$TMP/k.vmexit
if chk "$VMEXIT" record -o "$REC" --kvm-events pio,mmio "${WORK[@]}" 2>/dev/null; then
	n_ev=$(chk "$VMEXIT" report -i "$REC" --events --json | grep -c '"type":"kvm_event"')
	[ "$n_ev" = $((V * (N + 1) + V * M)) ] && pass "report --events: $n_ev kvm events" ||
		fail "report --events: $n_ev kvm events, expected $((V * (N + 1) + V * M))"
	chk "$VMEXIT" report -i "$REC" --json >"$TMP/rep.json"
	if python3 - "$TMP/rep.json" $N $M $V <<'EOF'; then
import json, sys
n, m, v = map(int, sys.argv[2:])
rows = {r['reason_name']: r['count'] for r in json.loads(open(sys.argv[1]).readline())['rows']
        if r['kind'] == 'user'}
print(f'report rows: {rows}')
sys.exit(0 if rows == {'IO': v * (n + 1), 'MMIO': v * m} else 1)
EOF
		pass "report: the stat rows count exits only"
	else
		fail "report: stat rows are not just the $((V * (N + 1))) IO and $((V * M)) MMIO exits"
	fi
	chk "$VMEXIT" report -i "$REC" --perfetto "$TMP/rep-trace.json" &&
		python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); sys.exit(0 if sum(
e.get("cat") == "kvm_event" and e["ph"] == "i" for e in t) == int(sys.argv[2]) else 1)' \
		"$TMP/rep-trace.json" $((V * (N + 1) + V * M)) &&
		pass "report --perfetto: one instant per recorded kvm event" ||
		fail "report --perfetto: kvm event instants"
else
	fail "record --kvm-events failed"
fi

# kvm_vs_perf JSON CSV EVENTS WANT: each of EVENTS (comma-separated) counted in the stream's
# JSON exactly as often as perf counted it (CSV), and WANT, a Python expression over got (the
# stream's counts) and evs (its records), a list of what else is wrong.
kvm_vs_perf() {
	python3 - "$@" <<'EOF'
import collections, json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
got = collections.Counter(e.get('kvm_event') for e in evs)
del got[None]
perf = {}
for l in open(sys.argv[2]):
    f = l.strip().split(',')
    if len(f) > 2 and f[2].startswith('kvm:kvm_'):
        perf[f[2][len('kvm:kvm_'):]] = int(f[0])
print(f'stream {dict(got)}, perf {perf}')
bad = [k for k in sys.argv[3].split(',') if got.get(k, 0) != perf.get(k)]
bad += eval('(' + sys.argv[4] + ')')
if bad:
    print('mismatch:', bad)
sys.exit(1 if bad else 0)
EOF
}

# 6. The other programs: msr, cpuid, inj_virq and page_fault load, and each emits exactly what
# perf counts on the same tracepoints in the same run. In ring 0 each vCPU's `rdmsr` and `cpuid`
# fire kvm_msr and kvm_cpuid once each (tools/vmexit-guest.md); page faults (the unbacked MMIO
# GPA, first touches) where the kernel takes them; the guest takes no interrupts, so inj_virq
# may stay at 0, as perf then says too.
C=30 R=20
if chk perf stat -x, -o "$TMP/perf6.csv" \
	-e kvm:kvm_msr,kvm:kvm_cpuid,kvm:kvm_inj_virq,kvm:kvm_page_fault -- \
	"$VMEXIT" stream --json --kvm-events msr,cpuid,inj_virq,page_fault -- "$GUEST" --vcpus $V \
	--cpuid $C --msr $R --mmio $M >"$TMP/k6.json" 2>"$TMP/k6.err"; then
	if kvm_vs_perf "$TMP/k6.json" "$TMP/perf6.csv" msr,cpuid,inj_virq,page_fault \
		"[] if (got['cpuid'], got['msr']) == ($V * $C, $V * $R) else
		 [f'cpuid {got[\"cpuid\"]} / msr {got[\"msr\"]}, expected $((V * C)) / $((V * R))']"; then
		pass "--kvm-events msr,cpuid,inj_virq,page_fault: the counts perf sees"
	else
		fail "--kvm-events msr,cpuid,inj_virq,page_fault (see above)"
	fi
else
	fail "stream --kvm-events msr,cpuid,inj_virq,page_fault exited $?: $(cat "$TMP/k6.err")"
fi

# 7. The interrupt events kvm_stat users read: msi_set_irq, apic_accept_irq, halt_poll_ns load
# and emit exactly what perf counts in the same run. Each of the guest's T one-shot timer
# interrupts is accepted once by the in-kernel local APIC (apic_accept_irq, of the guest's timer
# vector 0x40), on the vCPU thread that takes it; the guest raises no MSI, and halt polling
# (halt_poll_ns) changes where the host's polling decides: perf says how often.
T=40
if chk perf stat -x, -o "$TMP/perf7.csv" \
	-e kvm:kvm_msi_set_irq,kvm:kvm_apic_accept_irq,kvm:kvm_halt_poll_ns -- \
	"$VMEXIT" stream --json --kvm-events msi_set_irq,apic_accept_irq,halt_poll_ns -- "$GUEST" \
	--timer $T >"$TMP/k7.json" 2>"$TMP/k7.err"; then
	if kvm_vs_perf "$TMP/k7.json" "$TMP/perf7.csv" msi_set_irq,apic_accept_irq,halt_poll_ns \
		"([] if got['apic_accept_irq'] == $T else
		  [f'apic_accept_irq {got[\"apic_accept_irq\"]}, expected $T']) +
		 (['an apic_accept_irq not of the timer vector 0x40'] if any(
		  e.get('vector') != '0x40' for e in evs if e.get('kvm_event') == 'apic_accept_irq')
		  else [])"; then
		pass "--kvm-events msi_set_irq,apic_accept_irq,halt_poll_ns: the counts perf sees"
	else
		fail "--kvm-events msi_set_irq,apic_accept_irq,halt_poll_ns (see above)"
	fi
else
	fail "stream --kvm-events msi_set_irq,... exited $?: $(cat "$TMP/k7.err")"
fi

# 5. A bad list is a usage error, before anything is loaded.
chk "$VMEXIT" stream --kvm-events pio,bogus -- true >/dev/null 2>"$TMP/bad.err"
rc=$?
[ $rc = 2 ] && grep -q "unknown kvm event 'bogus'" "$TMP/bad.err" &&
	pass "--kvm-events pio,bogus: usage error" ||
	fail "--kvm-events pio,bogus: exit $rc: $(cat "$TMP/bad.err")"

sanitizer_reports && fail "sanitizer reports (above)"
[ $fails = 0 ] && { echo "PASS: test_kvm_events_host"; exit 0; }
echo "FAIL: test_kvm_events_host ($fails)"
exit 1
