#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# top --wake and stream --wake on real KVM (here, or in the SVM bed through
# tests/vm/test_nested_host.sh), beside stat --wake on the same run.
#
# Usage: tests/host/test_wake_front_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# The workload: each of V vCPUs of `vmexit-guest --timer N --timer-us 2000 --msi M` arms its
# x2APIC one-shot timer (vector 0x40) N times and halts until it fires, then M times asks the
# VMM for an MSI (KVM_SIGNAL_MSI, vector 0x41) and halts until it comes: per vCPU N timer and M
# MSI deliveries; the guest checks its own tally (N + M per vCPU) and fails otherwise. The guest
# is created and held (--hold-until) while stat --wake --csv -p, top --once --wake -p and
# stream --wake --json -p attach, then runs; all are stopped (SIGINT: top prints the interval it
# saw) once it ended.
# top's screen: per vCPU a timer 0x40 row with Total N and an msi 0x41 row with Total M, a halt
# row per vCPU, and each of its rows' Totals equal to stat's count of the same cell; stat's
# rows: the same counts, each row's parts summing exactly to its total. stream: one wake event
# per delivery, as many per vCPU, source and vector as stat counts, each one's parts summing
# exactly to its latency_ns, none lost. record --wake -p of the same run, then report --wake
# --csv of its file: the same rows (per vCPU, source and vector the guest's counts, parts
# summing to each row's total), and report's default output of a --wake recording the same;
# report --perfetto: one flow per delivery, a slice per halt, every track's slices nesting.
# stream --wake --perfetto FILE.pftrace -p of the same run (decoded with protoc, canonical lines
# of tests/unit/perfetto_canon.py): one flow per delivery, per vCPU, source and vector the
# guest's tally and stream --json's events, each flow one end at pending and one at the entry
# on the vCPU's track, apart by the delivery's latency_ns, its parts summing to it; none lost.
# The HLT anatomy of the same run: stream's hlt events (one per halted exit) and halt events (one per halt) as many per vCPU as stat counts, each
# one's parts summing exactly to its latency_ns; report's hlt rows (record format 1.9) per vCPU
# the exits, halts, polled and (poll_slept + slept) and invalid halts stat counts, and KVM's
# halt time (kvm_vcpu_wakeup's ns, the same for every program set; the exits' own times are each
# set's clock reads, apart by the other sets' programs run between), stream's halt events the
# same halt time; each report row's parts summing exactly to its
# total, at most the HLT instructions the guest's tally counts (an HLT that finds its interrupt
# pending does not halt); its halt_poll advice: the same halts.
set -u
OUT=${1:?usage: $0 OUTDIR}
OUT=$(cd "$OUT" && pwd)
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
N=50
M=50
V=2

[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || { echo "FAIL: $VMEXIT or $GUEST missing"; exit 1; }
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
kvm_exit_fires "$GUEST" || wake_untimed_only test_wake_front_host
need_cmd python3 python3
need_cmd protoc protobuf-compiler
# The schema and the canonical-lines script, from the tree (in the nested bed: /docs, /tests).
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

TMP=$(mktemp -d /tmp/vmexit-test-wake-front.XXXXXX)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT

"$GUEST" --timer $N --timer-us 2000 --msi $M --vcpus $V --hold-until "$TMP/go" --json \
	>"$TMP/guest.out" 2>"$TMP/guest.err" &
gp=$!
PIDS+=($gp)
wait_line "$TMP/guest.err" "held until" $gp || { cat "$TMP/guest.err"; fail "the guest was never held"; }
"$VMEXIT" stat --wake --csv -p $gp >"$TMP/stat.csv" 2>"$TMP/stat.err" &
sp=$!
PIDS+=($sp)
"$VMEXIT" top --once --wake -p $gp -d 100 --width 300 >"$TMP/top.out" \
	2>"$TMP/top.err" &
tp=$!
PIDS+=($tp)
"$VMEXIT" stream --wake --json -p $gp >"$TMP/stream.json" 2>"$TMP/stream.err" &
mp=$!
PIDS+=($mp)
"$VMEXIT" stream --wake --perfetto "$TMP/stream.pftrace" -p $gp 2>"$TMP/pstream.err" &
pp=$!
PIDS+=($pp)
"$VMEXIT" record --wake -p $gp -o "$TMP/wake.vmexit" 2>"$TMP/record.err" &
rp=$!
PIDS+=($rp)
wait_tracing $sp $tp $mp $pp $rp
touch "$TMP/go"
wait $gp || { cat "$TMP/guest.err" "$TMP/guest.out"; fail "the guest failed (its tally above)"; }
kill -INT $sp $tp $mp $pp $rp
wait $sp
rc=$?
[ $rc = 0 ] || { cat "$TMP/stat.err"; fail "stat --wake -p exited $rc"; }
wait $tp
rc=$?
[ $rc = 0 ] || { cat "$TMP/top.err" "$TMP/top.out"; fail "top --once --wake -p exited $rc"; }
wait $mp
rc=$?
[ $rc = 0 ] || { cat "$TMP/stream.err"; fail "stream --wake -p exited $rc"; }
wait $pp
rc=$?
[ $rc = 0 ] || { cat "$TMP/pstream.err"; fail "stream --wake --perfetto -p exited $rc"; }
protoc --decode=vmexit.perfetto.Trace -I "$ROOT/docs" "$ROOT/docs/perfetto-subset.proto" \
	<"$TMP/stream.pftrace" >"$TMP/stream.pftrace.txt" &&
	python3 "$ROOT/tests/unit/perfetto_canon.py" proto "$TMP/stream.pftrace.txt" \
	>"$TMP/stream.canon" || fail "stream --wake --perfetto's trace does not decode (above)"
wait $rp
rc=$?
[ $rc = 0 ] || { cat "$TMP/record.err"; fail "record --wake -p exited $rc"; }
"$VMEXIT" report -i "$TMP/wake.vmexit" --wake --csv >"$TMP/report.csv" 2>"$TMP/report.err"
rc=$?
[ $rc = 0 ] || { cat "$TMP/report.err"; fail "report --wake --csv exited $rc"; }
"$VMEXIT" report -i "$TMP/wake.vmexit" --csv >"$TMP/report-default.csv" 2>>"$TMP/report.err"
rc=$?
[ $rc = 0 ] || { cat "$TMP/report.err"; fail "report --csv of a --wake recording exited $rc"; }
cmp -s "$TMP/report.csv" "$TMP/report-default.csv" ||
	fail "report --csv of a --wake recording is not report --wake --csv"
"$VMEXIT" report -i "$TMP/wake.vmexit" --wake --perfetto "$TMP/wake.json" 2>>"$TMP/report.err"
rc=$?
[ $rc = 0 ] || { cat "$TMP/report.err"; fail "report --wake --perfetto exited $rc"; }
cat "$TMP/stat.err" "$TMP/top.err" "$TMP/stream.err" "$TMP/pstream.err" "$TMP/record.err" \
	"$TMP/report.err" >"$TMP/all-stderr"
sanitizer_reports && fail "sanitizer reports (above)"

python3 - "$TMP/stat.csv" "$TMP/top.out" $N $M $V $gp "$TMP/stream.json" "$TMP/report.csv" \
	"$TMP/record.err" "$TMP/wake.json" "$TMP/guest.out" "$TMP/stream.canon" <<'PY' || { cat "$TMP/top.out"; fail "top --wake / stat --wake (above)"; }
import csv, json, re, sys
stat, top, stream = sys.argv[1], sys.argv[2], sys.argv[7]
report, record_err, trace, guest_out, pcanon = sys.argv[8:13]
n, m, v, gp = map(int, sys.argv[3:7])
bad = []
wparts = ['guest_ns', 'exit_ns', 'polled_ns', 'slept_ns', 'runq_ns', 'oncpu_ns']
hparts = ['poll_ns', 'sleep_ns', 'runq_ns', 'other_ns']
wake, hlt, shlt = {}, {}, {}
for r in csv.reader(open(stat)):
    if not r:
        continue
    if r[0] == 'kind':
        cols = r
    elif r[0] == 'wake':
        w = dict(zip(cols, r))
        if sum(int(w[p]) for p in wparts) != int(w['sum_ns']):
            bad.append(f'stat: a delivery row whose parts do not sum to its total: {w}')
        wake[(int(w['vcpu']), w['source'], int(w['vector']))] = int(w['count'])
    elif r[0] == 'hlt':
        h = dict(zip(cols, r))
        if sum(int(h[p]) for p in hparts) != int(h['sum_ns']):
            bad.append(f'stat: a halt row whose parts do not sum to its total: {h}')
        hlt[int(h['vcpu'])] = int(h['halts'])
        shlt[int(h['vcpu'])] = h
for c in range(v):
    for src, vec, want in (('timer', 0x40, n), ('msi', 0x41, m)):
        if wake.get((c, src, vec)) != want:
            bad.append(f'stat: vCPU {c} {src} 0x{vec:x}: {wake.get((c, src, vec))} '
                       f'deliveries, the guest made {want}')
# top's rows: "Total Current P50 P99 6 shares  guest/pid vCPU c source 0xVV" and, under the
# halts' header, "Halts Current 3 kinds 4 parts  guest/pid vCPU c".
twake, thlt, halts = {}, {}, False
for l in open(top):
    if l.startswith('     Halts'):
        halts = True
    mt = re.match(r' +(\d+) .*  \S+/(\d+) vCPU (\d+)(?: (\w+) 0x([0-9a-f]+))?$', l.rstrip('\n'))
    if not mt or int(mt[2]) != gp:
        continue
    if halts and mt[4] is None:
        thlt[int(mt[3])] = int(mt[1])
    elif not halts and mt[4]:
        twake[(int(mt[3]), mt[4], int(mt[5], 16))] = int(mt[1])
if twake != wake:
    bad.append(f'top --wake deliveries {twake} != stat --wake {wake}')
if thlt != hlt or len(thlt) != v:
    bad.append(f'top --wake halts per vCPU {thlt} != stat --wake {hlt} (want {v} vCPUs)')
print(f'top and stat --wake: deliveries {sorted(twake.items())}, halts {thlt}')
swake, lost, nbad, shalt = {}, [], 0, {}
for l in open(stream):
    e = json.loads(l)
    if 'lost' in e:
        lost.append(e)
    if e.get('type') in ('halt', 'hlt'):
        if e['pid'] != gp or sum(e['parts_ns'].values()) != e['latency_ns']:
            nbad += 1
            if nbad <= 3:
                bad.append(f'stream: a {e["type"]} event of another pid or whose parts do not '
                           f'sum: {e}')
        k = (e['vcpu'], e['type'])
        shalt[k] = shalt.get(k, 0) + 1
        if e['type'] == 'halt':
            k = (e['vcpu'], 'halt_ns')
            shalt[k] = shalt.get(k, 0) + e['latency_ns']
    if e.get('type') != 'wake':
        continue
    if e['pid'] != gp or sum(e['parts_ns'].values()) != e['latency_ns']:
        nbad += 1
        if nbad <= 3:
            bad.append(f'stream: a wake event of another pid or whose parts do not sum: {e}')
    k = (e['vcpu'], e['source'], e['vector'])
    swake[k] = swake.get(k, 0) + 1
if lost:
    bad.append(f'stream --wake lost records: {lost}')
if swake != wake:
    bad.append(f'stream --wake events {swake} != stat --wake counts {wake}')
for c, h in shlt.items():
    if shalt.get((c, 'hlt')) != int(h['exits']) or shalt.get((c, 'halt')) != int(h['halts']) \
       or shalt.get((c, 'halt_ns')) != int(h['halt_ns']):
        bad.append(f'stream --wake vCPU {c}: {shalt.get((c, "hlt"))} hlt and '
                   f'{shalt.get((c, "halt"))} halt events of {shalt.get((c, "halt_ns"))} ns, '
                   f'stat counts {h["exits"]} halted exits and {h["halts"]} halts of '
                   f'{h["halt_ns"]} ns')
print(f'stream --wake: {sum(swake.values())} wake events, hlt/halt events and halt ns {shalt}, '
      f'{nbad} bad')
# stream --wake --perfetto: its canonical lines X|pid|track|ts|dur|cat|name|args, each flow's
# end (an instant) followed by its F|id|out or in|pid|track|ts lines.
ends, pwake, plost, last = {}, {}, [], None
for l in open(pcanon):
    f = l.rstrip('\n').split('|')
    if f[0] == 'X':
        last = f
    elif f[0] == 'I' and f[5] == 'vmexit_lost':
        plost.append(l)
    elif f[0] == 'F':
        if not last or last[5] != 'wake' or last[1:4] != f[3:6] or last[4] != '0':
            bad.append(f'stream --perfetto: flow end {l!r} not on a zero-length wake slice '
                       f'there: {last}')
            continue
        ends.setdefault(int(f[1]), {})[f[2]] = (int(f[3]), f[4], int(f[5]), json.loads(last[7]),
                                               last[6])
want = {(c, src, vec): k for c in range(v) for src, vec, k in (('timer', 0x40, n),
                                                              ('msi', 0x41, m))}
for i, e in sorted(ends.items()):
    if sorted(e) != ['in', 'out']:
        bad.append(f'stream --perfetto: flow {i} has ends {sorted(e)}')
        continue
    (pid, track, a, _, _), (pid2, track2, b, args, name) = e['out'], e['in']
    k = (args['vcpu'], args['source'], args['vector'])
    pwake[k] = pwake.get(k, 0) + 1
    parts = sum(args[p] for p in wparts)
    if pid != gp or (pid2, track2) != (pid, track) or track != f'vCPU {args["vcpu"]}' or \
       b - a != args['latency_ns'] or parts != args['latency_ns'] or \
       name != f'irq delivered {args["source"]}':
        bad.append(f'stream --perfetto: flow {i} from {pid} {track} at {a} to {pid2} {track2} '
                   f'at {b}: {name} {args}')
if pwake != want or pwake != swake or plost:
    bad.append(f'stream --perfetto: flows {pwake}, guest\'s tally {want}, stream --json {swake}; '
               f'lost {plost}')
print(f'stream --wake --perfetto: {len(ends)} flows, per vCPU, source and vector '
      f'{sorted(pwake.items())}')
# record --wake + report --wake --csv: the guest's counts, each row's parts summing.
rwake, rhlt, radv = {}, {}, None
for r in csv.reader(open(report)):
    if r and r[0] == 'kind':
        cols = r
    elif r and r[0] == 'hlt':
        h = dict(zip(cols, r))
        if int(h['pid']) != gp or sum(int(h[p]) for p in hparts) != int(h['sum_ns']):
            bad.append(f'report: a halt row of another pid or whose parts do not sum: {h}')
        rhlt[int(h['vcpu'])] = h
    elif r and r[0] == 'halt_poll':
        radv = dict(zip(cols, r))
    elif r and r[0] == 'wake':
        w = dict(zip(cols, r))
        if int(w['pid']) != gp or sum(int(w[p]) for p in wparts) != int(w['sum_ns']):
            bad.append(f'report: a row of another pid or whose parts do not sum: {w}')
        rwake[(int(w['vcpu']), w['source'], int(w['vector']))] = int(w['count'])
for c in range(v):
    for src, vec, want in (('timer', 0x40, n), ('msi', 0x41, m)):
        if rwake.get((c, src, vec)) != want:
            bad.append(f'report --wake: vCPU {c} {src} 0x{vec:x}: {rwake.get((c, src, vec))} '
                       f'deliveries, the guest made {want}')
if rwake != wake:
    bad.append(f'report --wake rows {rwake} != stat --wake {wake}')
# The HLT anatomy of the recording against stat's of the same run, and the guest's HLTs.
tally = {c['vcpu']: c['tally']['hlt'] for c in json.loads(open(guest_out).readline())['vcpus']}
if sorted(rhlt) != sorted(shlt) or len(rhlt) != v:
    bad.append(f'report --wake halt rows for vCPUs {sorted(rhlt)}, stat {sorted(shlt)}')
for c in sorted(set(rhlt) & set(shlt)):
    r, s = rhlt[c], shlt[c]
    for k in ('exits', 'halts', 'polled', 'invalid'):
        if r[k] != s[k]:
            bad.append(f'report --wake vCPU {c}: {k} {r[k]}, stat {s[k]}')
    if int(r['poll_slept']) + int(r['slept']) != int(s['poll_slept']) + int(s['slept']):
        bad.append(f'report --wake vCPU {c}: halts that slept {r}, stat {s}')
    # KVM's own halt time (kvm_vcpu_wakeup's argument): the same in every program set.
    # The exits' times are each set's own clock reads, apart by the other sets' programs.
    if r['halt_ns'] != s['halt_ns'] or int(r['sum_ns']) < int(r['halt_ns']):
        bad.append(f'report --wake vCPU {c}: {r["halt_ns"]} ns halted by KVM in exits of '
                   f'{r["sum_ns"]}, stat {s["halt_ns"]}')
    # An HLT finding its interrupt already pending (an MSI asked for by an out comes in that
    # exit) is an exit without a halt: at most one halted exit per HLT, and some.
    if not 0 < int(r['exits']) <= tally[c]:
        bad.append(f'report --wake vCPU {c}: {r["exits"]} halted exits, the guest made '
                   f'{tally[c]} HLTs')
    print(f'report --wake vCPU {c}: {r["exits"]} halted exits ({s["exits"]} stat, '
          f'{tally[c]} HLTs in the guest), {r["halts"]} halts ({s["halts"]} stat), '
          f'{r["halt_ns"]} ns halted ({s["halt_ns"]} stat) in {r["sum_ns"]} ns of exits '
          f'({s["sum_ns"]} stat)')
if not radv or int(radv['halts']) != sum(int(h['halts']) for h in rhlt.values()):
    bad.append(f'report --wake halt_poll advice {radv} is not of its {len(rhlt)} rows\' halts')
rec = open(record_err).read()
if '--wake lost:' in rec or re.search(r'events, [1-9][0-9]* lost', rec):
    bad.append('record --wake lost records: ' + rec)
flows = {}
for e in json.load(open(trace)):
    if 'bind_id' in e:
        flows.setdefault(e['bind_id'], []).append(e)
ends = sorted(len(f) for f in flows.values())
if len(flows) != sum(wake.values()) or set(ends) != {2}:
    bad.append(f'report --perfetto: {len(flows)} flows for {sum(wake.values())} deliveries, '
               f'ends per flow {set(ends)}')
# Its halts: a slice each on its vCPU's track, as many per vCPU as report's rows count, and
# every track's slices nesting (Perfetto drops those that overlap partially), to the ns.
import decimal
slices, halts = {}, {}
names = {}
for e in json.load(open(trace), parse_float=decimal.Decimal):
    if e['ph'] == 'M' and e['name'] == 'thread_name':
        names[(e['pid'], e['tid'])] = e['args']['name']
    elif e['ph'] == 'X':
        a = int(e['ts'] * 1000)
        slices.setdefault((e['pid'], e['tid']), []).append((a, a + int(e['dur'] * 1000)))
        if e['cat'] == 'halt' and e['name'] in ('polled', 'poll_slept', 'slept'):
            halts[e['args']['vcpu']] = halts.get(e['args']['vcpu'], 0) + 1
for c, r in rhlt.items():
    if halts.get(c, 0) != int(r['halts']):
        bad.append(f'report --perfetto vCPU {c}: {halts.get(c, 0)} halt slices, report\'s row '
                   f'{r["halts"]} halts')
nested = 0
for k, xs in slices.items():
    open_ = []
    for a, b in sorted(xs, key=lambda x: (x[0], -x[1])):
        while open_ and open_[-1] <= a:
            open_.pop()
        if open_ and b > open_[-1]:
            bad.append(f'report --perfetto {names.get(k)}: [{a}, {b}] overlaps a slice '
                       f'ending at {open_[-1]}')
        nested += bool(open_)
        open_.append(b)
print(f'record --wake + report --wake: {sum(rwake.values())} deliveries in its rows, '
      f'{len(flows)} Perfetto flows, {sum(halts.values())} halt slices, {nested} slices '
      f'nested in another')
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY

# stream --wake -- COMMAND where the command forks the VMM (sh runs it, then one more command):
# the forked VMM's deliveries, V x T timer interrupts, all of one pid, not the command's own.
T=20
"$VMEXIT" stream --wake --json -- sh -c '"$0" --timer "$1" --timer-us 2000 --vcpus "$2" \
	>/dev/null; true' "$GUEST" $T $V >"$TMP/fork.json" 2>"$TMP/fork.err" ||
	{ cat "$TMP/fork.err"; fail "stream --wake -- sh -c GUEST exited $?"; }
python3 - "$TMP/fork.json" $T $V <<'PY' || { cat "$TMP/fork.err"; fail "stream --wake of a forked VMM (above)"; }
import json, sys
ev = [e for e in map(json.loads, open(sys.argv[1])) if e.get('type') == 'wake']
t, v = int(sys.argv[2]), int(sys.argv[3])
timers = [e for e in ev if e['source'] == 'timer']
pids = {e['pid'] for e in ev}
print(f'stream --wake -- sh -c GUEST: {len(timers)} timer deliveries of pids {pids}; {t} x {v} made')
sys.exit(0 if len(timers) == t * v and len(pids) == 1 else 1)
PY
echo "PASS: top --once --wake and stream --wake of ${V} vCPUs x (timer $N + msi $M) agree with the guest and stat --wake; a forked VMM's ${T} x ${V} timer deliveries streamed"
