#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# report -i on the captures operators already have: one run of the bundled guest captured at
# once by `vmexit record`, by trace-cmd (kvm:*) and by `perf record -e 'kvm:*'`.
#
# Usage: tests/host/test_report_imports_host.sh OUTDIR   (OUTDIR holds vmexit and vmexit-guest)
# Exit 0 pass, 1 fail, 77 skip (no root, BPF or /dev/kvm; the reason is printed).
#
# Expected numbers come from the workload (tools/vmexit-guest.md): each of V vCPUs of
# `vmexit-guest --io N --mmio M` does N `out 0xe9`, M stores to unbacked MMIO and one `out 0xea`,
# so the VMM sees V*(N+1) KVM_EXIT_IO and V*M KVM_EXIT_MMIO, and nothing else; the last exit of
# each vCPU (0xea) never sees another KVM_RUN: counted, in flight. kvm_pio fires V*(N+1) times.
# Where kvm_exit fires (hardware KVM, the nested beds) the kernel's rows of the three reports
# must agree too. trace-cmd record needs to write ftrace_enabled, which some hosts refuse: then
# the events are enabled in a private tracefs instance, following the guest's pid, and
# `trace-cmd extract` writes the trace.dat.
set -u
OUT=${1:?usage: $0 OUTDIR}
. "$(dirname "$0")/lib.sh"
stream_test_start imports
need_cmd perf linux-perf
need_cmd trace-cmd trace-cmd
N=40
I=10
M=15
V=2
WORK=("$GUEST" --io $N --in $I --mmio $M --vcpus $V)
INST=vmexit-imports-$$
ITD=/sys/kernel/tracing/instances/$INST
trap '[ -d "$ITD" ] && rmdir "$ITD"; rm -rf "$TMP"' EXIT

die() { echo "FAIL: $*"; exit 1; }

# perf and vmexit record around the guest, whose shell first runs the command in $1.
cat >"$TMP/capture.sh" <<EOF
exec perf record -q -e 'kvm:*' -o $TMP/p.data -- \\
	$VMEXIT record --force --kvm-events all --keys -o $TMP/r.vmexit -- sh -c "\$1; exec \\"\\\$@\\"" sh ${WORK[*]} >/dev/null
EOF
# One capture in a private instance: 0 when t.dat holds the instance's events alone.
# `extract` consumes the buffers and also copies the top one, where another tracer's events
# (or old ones nobody read) would be counted besides ours; it fails when /proc/kallsyms
# changes while it copies it (BPF programs loading): such a capture is made again.
instance_capture() {
	rm -f "$TMP/t.dat" "$TMP/p.data" "$TMP/r.vmexit"
	mkdir "$ITD" || die "cannot create the tracefs instance $ITD"
	echo 1 >"$ITD/options/event-fork"
	# The guest's own shell, then its threads (event-fork); events on only once it is listed.
	sh "$TMP/capture.sh" "echo \$\$ > $ITD/set_event_pid; echo 1 > $ITD/events/kvm/enable" \
		2>"$TMP/capture.err" ||
		die "perf record / vmexit record failed: $(cat "$TMP/capture.err")"
	echo 0 >"$ITD/tracing_on"
	trace-cmd extract -B "$INST" -o "$TMP/t.dat" >"$TMP/tc.out" 2>&1
	local rc=$?
	[ -d "$ITD" ] && rmdir "$ITD"
	[ $rc = 0 ] || { echo "note: trace-cmd extract: $(tr '\n' ' ' <"$TMP/tc.out")"; return 1; }
	trace-cmd dump -i "$TMP/t.dat" --flyrecord 2>/dev/null |
		grep -q '"buffer flyrecord ", flags [x0-9]*, 0 bytes' && return 0
	echo "note: the top tracefs buffer held events too (another tracer): captured again"
	return 1
}
method=record
if ! trace-cmd record -q -e kvm -F -c -o "$TMP/t.dat" -- sh "$TMP/capture.sh" : \
	>"$TMP/tc.out" 2>"$TMP/capture.err"; then
	method="tracefs instance + extract ($(grep -m1 -iE 'error|not permitted|cannot' \
		"$TMP/capture.err"))"
	for try in 1 2 3 4; do
		instance_capture && break
		[ $try = 4 ] && die "no clean trace-cmd capture in $try tries (above)"
	done
fi
cat "$TMP/capture.err" >>"$TMP/all-stderr"
echo "note: trace.dat by trace-cmd $method"

# The --by reason CSV of each as {(isa, reason): [count, completed]}; the three must agree.
for f in r.vmexit t.dat p.data; do
	chk "$VMEXIT" report -i "$TMP/$f" --by reason --csv >"$TMP/$f.csv" 2>"$TMP/$f.err" ||
		{ fail "report -i $f exited $?: $(cat "$TMP/$f.err")"; continue; }
	cat "$TMP/$f.err" >>"$TMP/all-stderr"
	chk "$VMEXIT" report -i "$TMP/$f" --by vcpu --csv >"$TMP/$f.vcpu.csv" 2>/dev/null ||
		fail "report -i $f --by vcpu"
done
if python3 - "$TMP" $((N + I)) $M $V <<'EOF'; then
import csv, sys
tmp, n, m, v = sys.argv[1], *map(int, sys.argv[2:])
def rows(name, by_vcpu=False):
    out = {}
    for r in csv.DictReader(open(f'{tmp}/{name}.{"vcpu." if by_vcpu else ""}csv')):
        k = (r['ISA'], r['Exit_Reason']) + ((r['vCPU'],) if by_vcpu else ())
        out[k] = (int(r['NR_Exit']), int(r['Completed']))
    return out
bad = []
want = {('user', 'KVM_EXIT_IO'): (v * (n + 1), v * n), ('user', 'KVM_EXIT_MMIO'): (v * m, v * m)}
own = rows('r.vmexit')
for f in ('r.vmexit', 't.dat', 'p.data'):
    got = rows(f)
    user = {k: c for k, c in got.items() if k[0] == 'user'}
    print(f'{f}: user rows {user}')
    if user != want:
        bad.append(f'{f}: user rows {user}, expected (count, completed) {want}')
    if got != own:
        bad.append(f'{f}: rows {got} differ from vmexit record\'s {own}')
    if rows(f, True) != rows('r.vmexit', True):
        bad.append(f'{f}: --by vcpu rows {rows(f, True)} differ from vmexit record\'s')
kernel = sum(c for (isa, _), (c, _) in own.items() if isa != 'user')
print(f'kernel exits in all three: {kernel}')
for b in bad:
    print('  ' + b)
sys.exit(1 if bad else 0)
EOF
	pass "report of trace.dat and perf.data: the workload's exact tally, the rows of vmexit record's"
else
	fail "report rows of the captures (see above)"
fi
# Keys: each capture's kvm_pio and kvm_mmio key its exits as vmexit record --keys keys them:
# the guest's OUTs to 0xe9, INs from 0xe8 (the port comes with the IN's data, in the next
# KVM_RUN), its done OUT to 0xea (left in flight) and its MMIO writes.
for f in r.vmexit t.dat p.data; do
	chk "$VMEXIT" report -i "$TMP/$f" --by key --csv >"$TMP/$f.key.csv" 2>/dev/null ||
		fail "report -i $f --by key"
done
if python3 - "$TMP" $N $M $V $I <<'EOF'; then
import csv, sys
tmp, n, m, v, i = sys.argv[1], *map(int, sys.argv[2:])
want = {('port', '233', 'out', 'KVM_EXIT_IO'): (v * n, v * n),
        ('port', '232', 'in', 'KVM_EXIT_IO'): (v * i, v * i),
        ('port', '234', 'out', 'KVM_EXIT_IO'): (v, 0),
        ('mmio', str(0x10000000), 'write', 'KVM_EXIT_MMIO'): (v * m, v * m)}
bad = 0
for f in ('r.vmexit', 't.dat', 'p.data'):
    got = {}	# summed over VMs: a trace.dat shows each vCPU thread as one
    for r in csv.DictReader(open(f'{tmp}/{f}.key.csv')):
        if r['ISA'] == 'user':
            k = (r['Key_Kind'], r['Key'], r['Key_Dir'], r['Exit_Reason'])
            c = got.get(k, (0, 0))
            got[k] = (c[0] + int(r['NR_Exit']), c[1] + int(r['Completed']))
    print(f'{f}: user key rows {got}')
    bad += got != want
sys.exit(1 if bad else 0)
EOF
	pass "report --by key of trace.dat and perf.data: the workload's ports and address, as vmexit record --keys"
else
	fail "report --by key rows (see above): expected the workload's keys"
fi
for f in t.dat p.data; do
	grep -q "names no guests" "$TMP/$f.err" || fail "$f: no note that the capture names no guests"
	[ "$(grep -c "names no guests" "$TMP/$f.err")" = 1 ] || fail "$f: the note said more than once"
done
grep -q "keeps thread ids" "$TMP/t.dat.err" || fail "t.dat: no note that pids are thread ids"

# Per-event outputs: JSON events, the stream's lines, a rules file's lines, Perfetto; the same
# exits in each.
RULES=$TMP/imports.formats
printf 'type:user_exit\tuser %%(reason_name)s %%(latency_ns)d\ndefault\tother %%(type)s\n' >"$RULES"
for f in t.dat p.data; do
	chk "$VMEXIT" report -i "$TMP/$f" --events --json >"$TMP/$f.json" 2>/dev/null ||
		fail "$f: --events --json"
	chk "$VMEXIT" report -i "$TMP/$f" --events >"$TMP/$f.lines" 2>/dev/null || fail "$f: --events"
	chk "$VMEXIT" report -i "$TMP/$f" --perfetto "$TMP/$f.trace.json" 2>/dev/null ||
		fail "$f: --perfetto"
	chk "$VMEXIT" report -i "$TMP/$f" --format "$RULES" >"$TMP/$f.rules" 2>/dev/null ||
		fail "$f: --format"
	if python3 - "$TMP/$f" $N $M $V $I <<'EOF'; then
import json, sys
base, n, m, v, i = sys.argv[1], *map(int, sys.argv[2:])
io = pio = 0
for line in open(base + '.json'):
    o = json.loads(line)
    io += o.get('type') == 'user_exit' and o.get('reason_name') == 'IO'
    pio += o.get('type') == 'kvm_event' and o.get('kvm_event') == 'pio' and o.get('port') == '0xe9'
lines = sum(' KVM_EXIT_IO ' in l for l in open(base + '.lines'))
rules = sum(l.startswith('user IO ') for l in open(base + '.rules'))
tr = json.load(open(base + '.trace.json'))
ev = tr['traceEvents'] if isinstance(tr, dict) else tr
slices = sum(e.get('ph') == 'X' and e.get('name') == 'IO' for e in ev)
print(f'{base}: json IO {io}, pio to 0xe9 {pio}, lines IO {lines}, rules-file lines IO {rules}, '
      f'perfetto IO slices {slices}')
ok = pio == v * n and io == lines == rules == slices == v * (n + i + 1)
sys.exit(0 if ok else 1)
EOF
		pass "$f: --events --json, lines, --format and --perfetto carry the workload's exits"
	else
		fail "$f: per-event outputs (see above)"
	fi
done

# perf.data is read by vmexit itself (import_perfdata.c); perf script (import_perf.c) reads what
# that reader leaves to it, e.g. a `perf record -o -` stream. The two readers' events of p.data
# are the same to the byte, and a stream capture of the workload has its exact tally.
chk env VMEXIT_PERF_SCRIPT=1 "$VMEXIT" report -i "$TMP/p.data" --events --json \
	>"$TMP/p.script.json" 2>/dev/null || fail "p.data by perf script: --events --json"
if cmp -s "$TMP/p.data.json" "$TMP/p.script.json"; then
	pass "p.data read natively and by perf script: the same $(wc -l <"$TMP/p.data.json") events"
else
	fail "the native perf.data reader and perf script disagree: $(diff "$TMP/p.script.json" "$TMP/p.data.json" | head -n 4)"
fi
# (Through cat: perf writes its stream format only into a pipe.)
perf record -q -e 'kvm:*' -o - -- "${WORK[@]}" 2>"$TMP/pipe-rec.err" | cat >"$TMP/p.pipe"
chk "$VMEXIT" report -i "$TMP/p.pipe" --by reason --csv >"$TMP/p.pipe.csv" 2>"$TMP/pipe.err" ||
	fail "report -i p.pipe: $(cat "$TMP/pipe.err")"
if python3 - "$TMP/p.pipe.csv" $((N + I)) $M $V <<'EOF'; then
import csv, sys
path, n, m, v = sys.argv[1], *map(int, sys.argv[2:])
got = {r['Exit_Reason']: (int(r['NR_Exit']), int(r['Completed']))
       for r in csv.DictReader(open(path)) if r['ISA'] == 'user'}
want = {'KVM_EXIT_IO': (v * (n + 1), v * n), 'KVM_EXIT_MMIO': (v * m, v * m)}
print(f'perf record -o - stream: user rows {got}')
sys.exit(0 if got == want else 1)
EOF
	pass "a perf record -o - stream (read by perf script): the workload's exact tally"
else
	fail "a perf record -o - stream: user rows are not the workload's (above)"
fi

# Lost events: a one-page perf buffer under a busy guest. The native reader counts what perf
# says it lost, exactly: the kernel's lost records, or perf's per-event lost counts (read as it
# ends) where those say more; perf's own dump of the records gives both sums.
for io in 5000 20000 80000; do
	perf record -q -m 1 -e 'kvm:*' -o "$TMP/lossy.data" -- "$GUEST" --vcpus 2 --io $io \
		>/dev/null 2>&1
	want_lost=$(perf report -D -i "$TMP/lossy.data" 2>/dev/null | awk '
		/PERF_RECORD_LOST: / { sub(/.*lost:/, ""); r += $1 }
		/PERF_RECORD_LOST_SAMPLES: / { sub(/.*lost samples :/, ""); s += $1 }
		END { print (s > r ? s : r) + 0 }')
	[ "$want_lost" -gt 0 ] && break
done
if [ "$want_lost" -gt 0 ]; then
	got_lost=$(chk "$VMEXIT" report -i "$TMP/lossy.data" --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["lost"]["ringbuf_full"])')
	[ "$got_lost" = "$want_lost" ] &&
		pass "a perf.data that lost events: $got_lost lost, as perf's own records say" ||
		fail "a perf.data that lost events: report says ${got_lost:-nothing} lost, perf's records $want_lost"
else
	fail "perf record -m 1 lost no event in three captures up to --io $io: loss not tested"
fi

# Bad input: one line naming the file and an offset, exit status 1, never a crash.
bad_input() {	# bad_input FILE WHAT
	local rc
	chk "$VMEXIT" report -i "$1" >"$TMP/bad.out" 2>"$TMP/bad.err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l <"$TMP/bad.err")" = 1 ] &&
		grep -qE "^vmexit: $1: offset [0-9]+" "$TMP/bad.err"; then
		pass "$2: $(cat "$TMP/bad.err")"
	else
		fail "$2: exit $rc, stderr: $(cat "$TMP/bad.err")"
	fi
}
# trace.dat: also inside its last CPU's events (trace-cmd's own dump of the data sections).
# Past them (the trailing option list) libtracecmd reads every event still: nothing is lost.
in_data=$(trace-cmd dump -i "$TMP/t.dat" --flyrecord 2>/dev/null |
	awk '/data offset and size/ && $3 > 0 { c = $2 + int($3 / 2) } END { print c + 0 }')
[ "$in_data" -gt 0 ] || fail "trace-cmd dump --flyrecord shows no CPU data in t.dat"
perf_in_data=$(perf report --header-only -i "$TMP/p.data" 2>/dev/null |
	awk '/# data offset/ { o = $NF } /# data size/ { print o + int($NF / 2) }')
[ "${perf_in_data:-0}" -gt 0 ] || fail "perf report --header-only shows no data section"
for f in t.dat p.data; do
	size=$(stat -c %s "$TMP/$f")
	cuts="200 $((size / 2))"
	[ $f = t.dat ] && cuts="$cuts $in_data" || cuts="$cuts $((size - 1)) $perf_in_data"
	for cut in $cuts; do
		head -c $cut "$TMP/$f" >"$TMP/cut-$f"
		bad_input "$TMP/cut-$f" "$f cut to $cut of $size bytes"
	done
done
# A record inside the data section that the header cannot vouch for: the first one's size 0.
perf_data_at=$(perf report --header-only -i "$TMP/p.data" 2>/dev/null | awk '/# data offset/ { print $NF }')
cp "$TMP/p.data" "$TMP/zero-record.data"
printf '\0\0' | dd of="$TMP/zero-record.data" bs=1 seek=$((perf_data_at + 6)) conv=notrunc 2>/dev/null
bad_input "$TMP/zero-record.data" "a perf.data whose first record has size 0"
printf 'PERFILE2' >"$TMP/magic-only.data"
bad_input "$TMP/magic-only.data" "a perf.data that is only its magic"
cp /bin/true "$TMP/other.bin"
bad_input "$TMP/other.bin" "a file of another kind"

if sanitizer_reports; then
	fail "sanitizer reports (above)"
fi
[ $fails = 0 ] || { echo "FAIL: test_report_imports_host: $fails check(s) failed"; exit 1; }
echo "PASS: test_report_imports_host"
