#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vmexit stream / record / report against real kvm:kvm_exit / kvm:kvm_entry: boots the nested SVM
# bed (tests/vm/bed.sh) once and, inside it, with the tracefs events kvm_exit, kvm_entry,
# kvm_userspace_exit and kvm_write_tsc_offset enabled (an independent record of every exit, which
# comes out whole through the serial console, gzip'd and base64'd, with the outputs), runs:
#
#   "stream":   vmexit stat --json --by vcpu -- vmexit stream --json -- vmexit-guest ARGS1
#   "perfetto": vmexit stat --json --by vcpu -- vmexit stream --perfetto F -- vmexit-guest ARGS2
#   "record":   vmexit record -o R -- vmexit-guest ARGS2;  vmexit report -i R --json --by vcpu
#
# How stat and stream see the same run: they are nested. stat runs the stream as its COMMAND,
# and the stream runs the guest as its COMMAND. Each vmexit loads and attaches its BPF programs
# before it lets its command start (session.c: the child waits on a pipe), and both follow
# forks in the kernel, so when the guest's first KVM_RUN happens both tracers are attached,
# and both stay attached until after the last VM process has exited. Their counts are therefore
# of exactly the same exits, with no start/stop race. (The stream and vmexit-guest themselves
# make no KVM exits, so following them costs nothing.) The guest's stdout goes to its own file
# so that its JSON line never interleaves with the stream's.
#
# Every expected number comes from the guest's arguments and what tools/vmexit-guest.c
# documents, or from tracefs, never from vmexit's output. Per vCPU: kvm_exit cpuid 0x72 = cpuid,
# hlt 0x78 = hlt, ioio 0x7b = io + 1 (the done port 0xea), msr 0x7c = msr, npf 0x400 = mmio
# (GPA 0x10000000) + a few RAM first touches; KVM_EXIT_IO = io + 1, HLT = hlt, MMIO = mmio. The
# done-port exit is each vCPU's last: the thread then quits without another KVM_RUN or
# kvm_entry, so exactly one ioio and one IO per vCPU never complete. stream, record and
# perfetto emit them too, when the thread exits, flagged in_flight: their completed exits are
# the tracefs counts minus those two, and those two are each vCPU's last.
#
#   tests/vm/test_nested_stream.sh OUTDIR     (OUTDIR holds vmexit and vmexit-guest)
#
# beds: svm vmx
#
# The bed is VMEXIT_BED (svm, the default, or vmx: Intel VMX under Bochs), the kernel
# VMEXIT_BED_KERNEL (6.1 or 6.12). On vmx the same phases check VMX reasons, and two more run
# in the same boot (Bochs takes minutes to boot, seconds per phase), with the guest's extended
# kinds, whose expected counts are the guest's own tally:
#   "wide":  stat --json -- stat (table) -- stream --json -- stream --format kvmtrace rules --
#            vmexit-guest ARGS3 (io, mmio, hlt, cpuid, rdmsr, wrmsr, CR accesses, vmcall, #UD)
#   "timer": stat --json -- stream --json -- vmexit-guest ARGS4 (local APIC timer interrupts)
#   "fast":  stat -v --json started while another VM runs, so that its start-up check of the
#            kvm_exit fast path (src/kernel/hooks.c) judges real exits: the fast path (tp_btf) must be
#            chosen, and its counts equal tracefs'; the traced command stops the other VM and
#            turns tracing on, then runs vmexit-guest ARGS6
#   "skew":  the same with the test-only VMEXIT_TEST_FAST_PATH_SKEW=1 (the fast path reads
#            reason + 1): the check must refuse it, say so, and the classic counts equal tracefs'
#
# Exit: 0 pass, 1 fail, 77 skip (the bed cannot run here: bed.sh says why).
# Env: VMEXIT_TEST_KEEP=DIR keeps the bed's output, the decoded files and the in-bed script;
# VMEXIT_BED_LOG=FILE keeps the serial log; VMEXIT_BED_TIMEOUT (default 240 s, vmx 1800 s).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
BED=$HERE/bed.sh
TEST=test_nested_stream SVM_TIMEOUT=240 VMX_TIMEOUT=1800
. "$HERE/lib/x86_test.sh"	# OUT, VMEXIT, GUEST, TNAME, fail, skip, TIMEOUT, WORK

# Phase "stream": two VM processes x two vCPUs, so keys differ in pid and in vCPU. Phases
# "perfetto" and "record" run the identical workload ARGS2, so the recording's report must give
# the deliberate counts the perfetto phase's stat gave. A few hundred exits per kind: ~4,000
# exits in phase one, ~1,800 in the others; each phase takes a few seconds under TCG.
ARGS1="--vms 2 --vcpus 2 --cpuid 200 --io 150 --hlt 80 --msr 120 --mmio 100 --name duo --json"
ARGS2="--vms 1 --vcpus 2 --cpuid 300 --io 200 --hlt 100 --msr 250 --mmio 150 --name solo --json"
if [ "$BED_NAME" = vmx ]; then
	# Every file leaves Bochs through its emulated UART at ~6 KB/s: fewer exits, smaller files.
	ARGS1="--vms 2 --vcpus 2 --cpuid 50 --io 40 --hlt 20 --msr 30 --mmio 25 --name duo --json"
	ARGS2="--vms 1 --vcpus 2 --cpuid 60 --io 50 --hlt 25 --msr 50 --mmio 30 --name solo --json"
fi
ARGS3="--vms 1 --vcpus 2 --io 40 --mmio 40 --hlt 30 --cpuid 40 --msr 40 --wrmsr 40 --cr 40 --vmcall 40 --ud 40 --name wide --json"
ARGS4="--vms 1 --vcpus 2 --timer 60 --wrmsr 20 --vmcall 20 --ud 20 --io 20 --cpuid 20 --name tick --json"
# Phases "fast" and "skew" (VMX): small, the files cross Bochs' UART.
ARGS6="--vms 1 --vcpus 2 --cpuid 40 --io 30 --hlt 15 --msr 30 --mmio 20 --name fastvm --json"
# Phase "top": a guest started once `top --once` is attached, done before top's screen but
# still there (--linger), so top shows it with every exit, as tracefs does.
ARGS5="--vms 1 --vcpus 2 --io 150 --cpuid 150 --hlt 40 --linger 1000 --name toppy --json"

# ------------------------------------------------------------------ the script run inside the bed
{
	echo "ARGS1='$ARGS1'"
	echo "ARGS2='$ARGS2'"
	echo "ARGS3='$ARGS3'"
	echo "ARGS4='$ARGS4'"
	echo "ARGS5='$ARGS5'"
	echo "ARGS6='$ARGS6'"
} >"$WORK/inbed.sh"
cat "$HERE/lib/inbed.sh" >>"$WORK/inbed.sh"	# die, send, /tmp/run.sh
cat >>"$WORK/inbed.sh" <<'EOF'
T=/sys/kernel/tracing
[ "$BED_BTF" = 1 ] || die "kernel or kvm module BTF missing in the bed: vmexit cannot load its BPF programs"
PT=120
[ "$BED" = vmx ] && PT=300	# Bochs: seconds per vmexit start, ~50 us per guest exit
echo 0 >$T/tracing_on
echo 16384 >$T/buffer_size_kb || die "cannot size the trace buffer"
for e in kvm_exit kvm_entry kvm_userspace_exit kvm_write_tsc_offset; do
	echo 1 >$T/events/kvm/$e/enable || die "cannot enable kvm:$e"
done

phase_start() {
	echo "T_PHASE $1"
	rm -f /tmp/*.out /tmp/*.err /tmp/*.rc /tmp/*.json /tmp/*.vmexit
	echo >$T/trace
	echo 1 >$T/tracing_on
	t0=$(cut -d' ' -f1 /proc/uptime)
}
phase_end() {
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo 0 >$T/tracing_on
	echo "T_TIME $t0 $t1"
	# Ring buffer overflow guard: nothing may have been lost.
	head -n 5 $T/trace | sed -n 's/.*entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/T_BUF \1 \2/p'
	echo "T_OVERRUN $(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/{s+=$2} END{print s+0}')"
	cat $T/trace >/tmp/trace.txt
	send trace /tmp/trace.txt
}
send_outputs() {
	for f in /tmp/*.out /tmp/*.err /tmp/*.rc; do
		[ -f "$f" ] && send "$(basename "$f")" "$f"
	done
	return 0
}
send format $T/events/kvm/kvm_exit/format

phase_start stream
timeout $PT sh /tmp/run.sh stat /vmexit stat --json --by vcpu -- \
	sh /tmp/run.sh stream /vmexit stream --json -- \
	sh /tmp/run.sh guest /vmexit-guest $ARGS1
echo "T_RC $?"
phase_end
send_outputs

phase_start perfetto
timeout $PT sh /tmp/run.sh stat /vmexit stat --json --by vcpu -- \
	sh /tmp/run.sh stream /vmexit stream --perfetto /tmp/perfetto.json -- \
	sh /tmp/run.sh guest /vmexit-guest $ARGS2
echo "T_RC $?"
phase_end
send_outputs
send perfetto.json /tmp/perfetto.json

phase_start record
timeout $PT sh /tmp/run.sh record /vmexit record -o /tmp/rec.vmexit -- \
	sh /tmp/run.sh guest /vmexit-guest $ARGS2
echo "T_RC $?"
phase_end
sh /tmp/run.sh report /vmexit report -i /tmp/rec.vmexit --json --by vcpu
send_outputs
send rec.vmexit /tmp/rec.vmexit

# top --once: attached (its BPF links exist) before the guest starts; the guest is stopped
# before top prints, and tracing ends before it resumes. Only counts leave the bed.
echo "T_PHASE top"
rm -f /tmp/*.out /tmp/*.err /tmp/*.rc
echo >$T/trace
echo 1 >$T/tracing_on
/vmexit top --once -x -d 6 >/tmp/top.out 2>/tmp/top.err &
tp=$!
# Attached: its BPF links exist and their number has not changed for a second.
i=0 last=-1 same=0
while [ $i -lt 1200 ] && [ $same -lt 10 ]; do
	n=$(ls -l /proc/$tp/fd 2>/dev/null | grep -c bpf_link)
	if [ "$n" -gt 0 ] && [ "$n" = "$last" ]; then same=$((same + 1)); else same=0; fi
	last=$n
	sleep 0.1
	i=$((i + 1))
done
echo "T_TOPWAIT $i"
/vmexit-guest $ARGS5 >/tmp/guest.out 2>/tmp/guest.err &
gp=$!
# Done once it printed its JSON; then it lingers, making no exits, until top has printed.
i=0
while [ $i -lt 1200 ] && ! grep -q '^{"pid"' /tmp/guest.out; do sleep 0.1; i=$((i + 1)); done
wait $tp
rc=$?
echo $rc >/tmp/top.rc
echo "T_RC $rc"
echo 0 >$T/tracing_on
kill $gp
wait $gp
head -n 5 $T/trace | sed -n 's/.*entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/T_BUF \1 \2/p'
echo "T_OVERRUN $(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/{s+=$2} END{print s+0}')"
cat $T/trace >/tmp/trace.txt	# one pass over tracefs: formatting every event is slow
sed -n 's/.* kvm_exit: vcpu [0-9]* reason \(.*\) rip 0x.*/\1/p' /tmp/trace.txt | sort | uniq -c | sed 's/^ *\([0-9]*\) /T_TOPK \1 /'
sed -n 's/.* kvm_userspace_exit: reason \(.*\) (\([0-9]*\)).*/\1 \2/p' /tmp/trace.txt | sort | uniq -c | sed 's/^ *\([0-9]*\) /T_TOPU \1 /'
send_outputs
[ "$BED" = vmx ] || exit 0

# kvmtrace's per-cause event ids (docs/formats.md), each rendering the words it decodes; the
# generic VMEXIT id and the user exits too, so every event makes exactly one line.
{
	for id in 00020001 00020004 00020005 00020006 00020007 00020008 00020009 0002000a \
		  0002000b 0002000c 0002000d 0002000e 0002000f 00020010 00020011 00020012 \
		  00020013 00010002; do
		echo "0x$id K %(tid)d %(rip)x %(event)x %(1)x %(2)x"
	done
	echo "type:user_exit U %(tid)d %(reason)d"
	echo "0x00000000 O %(type)s %(tid)d"
} >/tmp/kvmtrace.formats
phase_start wide
timeout 300 sh /tmp/run.sh stat /vmexit stat --json --by vcpu -- \
	sh /tmp/run.sh table /vmexit stat --by vcpu -- \
	sh /tmp/run.sh stream /vmexit stream --json -- \
	sh /tmp/run.sh kvmtrace /vmexit stream --format /tmp/kvmtrace.formats -- \
	sh /tmp/run.sh guest /vmexit-guest $ARGS3
echo "T_RC $?"
phase_end
send_outputs

phase_start timer
timeout 300 sh /tmp/run.sh stat /vmexit stat --json --by vcpu -- \
	sh /tmp/run.sh stream /vmexit stream --json -- \
	sh /tmp/run.sh guest /vmexit-guest $ARGS4
echo "T_RC $?"
phase_end
send_outputs

# The fast path's start-up check, with exits to judge: a busy VM runs while stat starts; its
# command stops that VM (and waits until its threads are gone), then turns tracing on, so that
# tracefs and stat count the same exits.
for h in fast skew; do
	echo "T_PHASE $h"
	rm -f /tmp/*.out /tmp/*.err /tmp/*.rc
	echo >$T/trace
	t0=$(cut -d' ' -f1 /proc/uptime)
	busy_start
	skew=0
	[ $h = skew ] && skew=1
	VMEXIT_TEST_FAST_PATH_SKEW=$skew timeout $PT sh /tmp/run.sh stat /vmexit stat -v --json --by vcpu -- \
		sh /tmp/quiet.sh $BUSY sh /tmp/run.sh guest /vmexit-guest $ARGS6
	echo "T_RC $?"
	busy_stop
	phase_end
	# -v sends libbpf's debug log there too: only vmexit's own lines cross the UART.
	grep -v '^libbpf' /tmp/stat.err >/tmp/stat.short
	mv /tmp/stat.short /tmp/stat.err
	send_outputs
done
exit 0
EOF

# ------------------------------------------------------------------ run the bed
echo "$TNAME: booting the bed"
BED_OPTS=()
[ "$BED_NAME" = svm ] && BED_OPTS=(--smp "${VMEXIT_BED_SMP:-1}" --mem 1024)
set +e
"$BED" --bed "$BED_NAME" --kernel "$KSERIES" --timeout "$TIMEOUT" "${BED_OPTS[@]}" ${VMEXIT_BED_LOG:+--log "$VMEXIT_BED_LOG"} \
	"$WORK/inbed.sh" "$GUEST:/vmexit-guest" "$VMEXIT:/vmexit" >"$WORK/bed.out" 2>"$WORK/bed.err"
brc=$?
set -e
cat "$WORK/bed.err"
[ $brc = 77 ] && skip "the nested bed cannot run here: $(sed -n 's/^bed: SKIP: //p' "$WORK/bed.err" | head -n 1)"
[ $brc = 0 ] || { grep -v '^[A-Za-z0-9+/=]*$' "$WORK/bed.out" | sed 's/^/  | /' | tail -n 60; fail "the bed failed (exit $brc)"; }

# ------------------------------------------------------------------ assertions (host side)
prc=0
PYTHONPATH="$HERE/lib" python3 - "$WORK/bed.out" "$WORK" "$VMEXIT" "$ARGS1" "$ARGS2" "$BED_NAME" "$TNAME" "$ARGS3" "$ARGS4" "$ARGS5" "$ARGS6" <<'PYEOF' || prc=$?
import json, os, re, subprocess, sys
from collections import Counter, defaultdict
from decimal import Decimal
import bedout

bed_out, work, vmexit_host, ARGS1, ARGS2, BED, TNAME, ARGS3, ARGS4, ARGS5, ARGS6 = sys.argv[1:12]
VMX = BED == "vmx"
ISA = "vmx" if VMX else "svm"

# Exit codes (SVM: APM vol. 2 appendix C; VMX: SDM vol. 3 appendix C) and KVM_EXIT_* numbers
# of what the guest makes; its layout (tools/vmexit-guest.c).
if VMX:
    INTR, CPUID, HLT, IOIO, MSR, MSR_W = 1, 10, 12, 30, 31, 32
    # MMIO under EPT: the first access to the page is an EPT violation, after which KVM marks
    # the page's EPT entry misconfigured, so further accesses (any vCPU) are EPT misconfigs.
    NPFS = (48, 49)
    EXC, CR, VMCALL, IRQ_WINDOW, PREEMPT = 0, 28, 18, 7, 52
else:
    INTR, CPUID, HLT, IOIO, MSR, MSR_W = 0x60, 0x72, 0x78, 0x7b, 0x7c, 0x7c
    NPFS = (0x400,)
NPF = NPFS[0]
U_IO, U_HLT, U_MMIO = 2, 5, 6
NAMES = {("kernel", CPUID): "cpuid", ("kernel", HLT): "hlt", ("kernel", IOIO): "ioio",
         ("kernel", MSR): "msr", ("kernel", INTR): "intr",
         ("user", U_IO): "IO", ("user", U_HLT): "HLT", ("user", U_MMIO): "MMIO"}
for r in NPFS:
    NAMES[("kernel", r)] = "npf" if r == NPF else "npf2"
# Only in phases wide and timer (VMX): the extended kinds.
NAMES_EXTRA = {}
if VMX:
    NAMES_EXTRA = {("kernel", MSR_W): "wrmsr", ("kernel", CR): "cr", ("kernel", VMCALL): "vmcall",
                   ("kernel", EXC): "exception", ("kernel", IRQ_WINDOW): "irq_window",
                   ("kernel", PREEMPT): "preemption_timer"}
IO_PORT, DONE_PORT, MMIO_GPA = 0xe9, 0xea, 0x10000000
CODE_LO, CODE_HI = 0x1000, 0x2000          # CODE_GPA: the guest's code page (identity mapped)
NPF_RAM_SLACK = 32                          # NPFs of first touches of guest RAM: not exact
# The userspace exit that each kernel exit hands to the VMM.
USER_OF = {U_IO: (IOIO,), U_HLT: (HLT,), U_MMIO: NPFS}
# Exits nobody can count in advance (host interrupts): compared with tracefs only.
RANDOM = {INTR}

errors = []
def check(cond, msg):
    if not cond:
        errors.append(msg)
    return bool(cond)

def parse_args(s):
    a = s.split(); d = {}
    for i, w in enumerate(a):
        if w.startswith("--") and i + 1 < len(a) and not a[i + 1].startswith("--"):
            d[w[2:]] = a[i + 1]
    A = {k: 0 for k in ("vms", "vcpus", "io", "mmio", "hlt", "cpuid", "msr", "wrmsr", "cr", "vmcall", "ud", "timer")}
    A.update({k: (v if k == "name" else int(v)) for k, v in d.items()})
    return A

def kname(k):
    return NAMES.get(k) or NAMES_EXTRA.get(k) or f"{k[0]}:{k[1]:#x}"

# ---------------------------------------------------------------- the bed's output
def own_tag(tag, rest, f, cur, top):
    if tag == "T_TOPWAIT": cur["topwait"] = int(f[0])
    elif tag == "T_TOPK": cur.setdefault("topk", Counter())[rest.split(" ", 1)[1]] += int(f[0])
    elif tag == "T_TOPU":
        num = int(f[-1]) + (2 ** 31 if f[1] in ("restart", "error") else 0)
        cur.setdefault("topu", Counter())[num] += int(f[0])
    else: return False
    return True
top, phases, order = bedout.read(bed_out, check, tag=own_tag,
                                 save=lambda ph, name: os.path.join(work, f"{ph}.{name}"))

def need(P, pre, names):
    """The files a phase's checks need: one message instead of a cascade when one is missing."""
    missing = [n for n in names if n not in P["files"]]
    return check(not missing, f"{pre}: no usable {', '.join(missing)} from the bed: checks of this phase skipped")

def text(P, name):
    return P["files"].get(name, b"").decode(errors="replace")

# ---------------------------------------------------------------- tracefs
# Reason name -> code, from the event's own format: the trace prints reasons by name. The
# format holds the VMX table (for isa == 1: pairs like { 10, "CPUID" }) then the SVM one (pairs
# like { 0x072, "cpuid" } and { 0x040 + 14, "PF excp" }); only the bed's ISA's table counts.
fmt_text = top["files"].get("format", b"").decode()
tables = fmt_text.split("__print_symbolic(")
CODE = {}
if len(tables) >= 3:
    for m in re.finditer(r'\{ ((?:0x)?[0-9a-fA-F]+)(?: \+ (\d+))?, "([^"]*)" \}', tables[1 if VMX else 2]):
        CODE.setdefault(m.group(3), int(m.group(1), 0) + int(m.group(2) or 0))
NAME_OF = {v: k for k, v in CODE.items()}
if VMX:
    check(CODE.get("CPUID") == CPUID and CODE.get("IO_INSTRUCTION") == IOIO and CODE.get("EPT_VIOLATION") == NPF,
          f"kvm_exit format: VMX reason table not understood ({len(CODE)} names)")
else:
    check(CODE.get("cpuid") == CPUID and CODE.get("io") == IOIO and CODE.get("npf") == NPF,
          f"kvm_exit format: SVM reason table not understood ({len(CODE)} names)")

LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s+\S+\s+(\d+\.\d+): (kvm_exit|kvm_entry|kvm_userspace_exit|kvm_write_tsc_offset): (.*)$")
EXIT = re.compile(r"vcpu (\d+) reason (.*) rip 0x([0-9a-f]+) info1 0x([0-9a-f]+) info2 0x([0-9a-f]+) intr_info 0x([0-9a-f]+) error_code 0x([0-9a-f]+)")
def parse_trace(P, pre):
    """Per thread, in order: kvm_exit tuples, kvm_entry count, kvm_userspace_exit reasons,
    kvm_write_tsc_offset (vcpu, prev, next)."""
    ex = defaultdict(list); en = Counter(); us = defaultdict(list); tsc = defaultdict(list); bad = []
    for l in text(P, "trace").split("\n"):
        if not l or l.startswith("#"):
            continue
        m = LINE.match(l)
        if not m:
            bad.append(l); continue
        tid, ev, rest = int(m.group(2)), m.group(5), m.group(6)
        if ev == "kvm_exit":
            e = EXIT.match(rest)
            if not e or e.group(2) not in CODE:
                bad.append(l); continue
            ex[tid].append(dict(vcpu=int(e.group(1)), reason=CODE[e.group(2)], rip=int(e.group(3), 16),
                                info1=int(e.group(4), 16), info2=int(e.group(5), 16),
                                intr_info=int(e.group(6), 16), error_code=int(e.group(7), 16)))
        elif ev == "kvm_entry":
            en[tid] += 1
        elif ev == "kvm_write_tsc_offset":
            t = re.match(r"vcpu=(\d+) prev=(\d+) next=(\d+)", rest)
            if not t:
                bad.append(l); continue
            tsc[tid].append((int(t.group(1)), int(t.group(2)), int(t.group(3))))
        else:
            u = re.match(r"reason (\S+) \((\d+)\)", rest)
            if not u:
                bad.append(l); continue
            us[tid].append(int(u.group(2)) + (2 ** 31 if u.group(1) in ("restart", "error") else 0))
    check(not bad, f"{pre}: {len(bad)} trace lines not understood, e.g. {bad[:2]}")
    P["tsc"] = tsc
    return ex, en, us

def guests_of(P, pre, A):
    """tid -> (pid, vcpu); pid -> name, from the guest's --json lines; checks its own tally."""
    vms, vcpus = A["vms"], A["vcpus"]
    tids = {}; names = {}
    gl = [l for l in text(P, "guest.out").split("\n") if l.strip()]
    check(len(gl) == vms, f"{pre}: {len(gl)} vmexit-guest JSON lines, expected {vms}")
    for l in gl:
        try:
            g = json.loads(l)
        except ValueError:
            check(False, f"{pre}: vmexit-guest line is not JSON: {l[:100]}"); continue
        pid = g.get("pid"); names[pid] = g.get("name")
        want = A["name"] if vms == 1 else None
        check(g.get("name") == want if want else str(g.get("name", "")).startswith(A["name"] + "-"),
              f"{pre}: guest pid {pid} reports name {g.get('name')!r}")
        check(len(g.get("vcpus", [])) == vcpus, f"{pre}: guest {pid}: {len(g.get('vcpus', []))} vCPUs, expected {vcpus}")
        for v in g.get("vcpus", []):
            tids[v.get("tid")] = (pid, v.get("vcpu"))
            check(v.get("passes") == 1 and v.get("exits") == {"IO": A["io"] + 1, "MMIO": A["mmio"], "HLT": A["hlt"]},
                  f"{pre}: guest {pid} vCPU {v.get('vcpu')}: passes {v.get('passes')}, exits {v.get('exits')}")
    check(len(set(names.values())) == vms, f"{pre}: guest names not distinct: {names}")
    return tids, names

def expected_completed(A):
    """Per vCPU, completed exits of the deliberate reasons: the done-port IO never completes."""
    return {("kernel", CPUID): A["cpuid"], ("kernel", HLT): A["hlt"], ("kernel", IOIO): A["io"],
            ("kernel", MSR): A["msr"], ("user", U_IO): A["io"], ("user", U_HLT): A["hlt"],
            ("user", U_MMIO): A["mmio"]}

def expected_from_tally(t, A):
    """Per vCPU, completed exits from the guest's own tally (VMX phases wide and timer): each
    counted instruction exits once; the done-port OUT never completes."""
    e = {("kernel", IOIO): t["out"] - 1, ("kernel", CPUID): t["cpuid"], ("kernel", HLT): t["hlt"],
         ("kernel", MSR): t["rdmsr"], ("kernel", MSR_W): t["wrmsr"], ("kernel", CR): t["cr_read"] + t["cr_write"],
         ("kernel", VMCALL): t["vmcall"], ("kernel", EXC): t["ud"],
         ("user", U_IO): t["out"] - 1, ("user", U_MMIO): t["mmio"],
         # with the in-kernel APIC (--timer) hlt waits in the kernel, without it goes to the VMM
         ("user", U_HLT): 0 if A["timer"] else t["hlt"]}
    return {k: v for k, v in e.items()}

def check_expected(pre, what, got, vkeys, A, tallies=None):
    """got: Counter of ((pid, vcpu), kind, reason) -> completed exits. Expected: from the
    guest's arguments, or (tallies: (pid, vcpu) -> the guest's tally) from its own tally."""
    random = set(RANDOM)
    if tallies is not None and A["timer"]:
        random |= {IRQ_WINDOW, PREEMPT}     # when the timer fires relative to cli/sti is luck
    for key in vkeys:
        exp = expected_from_tally(tallies[key], A) if tallies is not None else expected_completed(A)
        for (kind, r), n in exp.items():
            check(got[(key, kind, r)] == n, f"{pre}: {what}: pid {key[0]} vCPU {key[1]} {kind} {kname((kind, r))}: "
                  f"{got[(key, kind, r)]} completed, expected {n}")
        n = sum(got[(key, "kernel", r)] for r in NPFS)
        check(A["mmio"] <= n <= A["mmio"] + NPF_RAM_SLACK, f"{pre}: {what}: pid {key[0]} vCPU {key[1]} npf: {n}, "
              f"expected {A['mmio']} MMIO + at most {NPF_RAM_SLACK} RAM faults")
        known = set(exp) | {("kernel", r) for r in set(NPFS) | random}
        extra = {k: v for k, v in got.items() if v and k[0] == key and (k[1], k[2]) not in known}
        check(not extra, f"{pre}: {what}: exits the guest does not make: {extra}")
    extra = {k: v for k, v in got.items() if v and k[0] not in vkeys}
    check(not extra, f"{pre}: {what}: exits on no vCPU of the guest: {extra}")

def tracefs_truth(P, pre, A, tids, tallies=None):
    """Checks tracefs against the guest's arguments; returns (counts, completed) per
    ((pid, vcpu), kind, reason), completed = counts minus each vCPU's unfinished last exits."""
    check(P.get("buf") is not None and P["buf"][0] == P["buf"][1] and P["buf"][0] > 0,
          f"{pre}: trace ring buffer lost events (entries-in-buffer/entries-written = {P.get('buf')})")
    check(P.get("overrun") == 0, f"{pre}: trace ring buffer overrun = {P.get('overrun')}")
    ex, en, us = parse_trace(P, pre)
    counts = Counter(); done = Counter()
    for tid in sorted(set(ex) | set(us) | set(en)):
        key = tids.get(tid)
        if not check(key is not None, f"{pre}: tracefs events from thread {tid}, no vCPU of the guest"):
            continue
        for e in ex[tid]:
            check(e["vcpu"] == key[1], f"{pre}: tracefs kvm_exit of thread {tid} says vcpu {e['vcpu']}, the guest says {key[1]}")
            counts[(key, "kernel", e["reason"])] += 1
        for r in us[tid]:
            counts[(key, "user", r)] += 1
        # The documented behaviour: the last kernel exit is the OUT to the done port, the last
        # user exit its KVM_EXIT_IO; then the thread quits: no kvm_entry, no KVM_RUN after them.
        last = ex[tid][-1] if ex[tid] else {}
        check(last.get("reason") == IOIO and (last.get("info1", 0) >> 16) & 0xffff == DONE_PORT,
              f"{pre}: thread {tid}: last kvm_exit is {last}, expected ioio to port {DONE_PORT:#x}")
        check(us[tid][-1:] == [U_IO], f"{pre}: thread {tid}: last userspace exit {us[tid][-1:]}, expected IO")
        check(en[tid] == len(ex[tid]), f"{pre}: thread {tid}: {len(ex[tid])} kvm_exit but {en[tid]} kvm_entry "
              "(expected equal: the first entry has no exit, the last exit no entry)")
        ports = Counter((e["info1"] >> 16) & 0xffff for e in ex[tid] if e["reason"] == IOIO)
        check(ports == Counter({IO_PORT: A["io"], DONE_PORT: 1}), f"{pre}: thread {tid}: ioio ports {dict(ports)}")
    done = counts.copy()
    for tid, key in tids.items():
        done[(key, "kernel", IOIO)] -= 1
        done[(key, "user", U_IO)] -= 1
    vkeys = sorted(tids.values())
    check_expected(pre, "tracefs", done, vkeys, A, tallies)
    return counts, +done, ex, us

def stat_rows(P, pre, name):
    """The final line of `vmexit stat --json --by vcpu` (or report): rows and lost."""
    ls = [l for l in text(P, name).split("\n") if l.startswith('{"interval_s"')]
    if not check(ls, f"{pre}: {name}: no JSON summary line"):
        return None, {}
    try:
        s = json.loads(ls[-1])
    except ValueError as e:
        check(False, f"{pre}: {name}: last line is not JSON: {e}"); return None, {}
    check(s.get("final") is True, f"{pre}: {name}: last line is not the final summary")
    return s.get("rows", []), s.get("lost", {})

def stat_counts(pre, what, rows, names):
    count = Counter(); done = Counter(); byname = Counter()
    for r in rows:
        key = (r.get("pid"), r.get("vcpu")); k = (key, r.get("kind"), r.get("reason"))
        check((r.get("kind"), r.get("isa")) in (("kernel", ISA), ("user", "user")), f"{pre}: {what}: row {k} kind/isa {r.get('kind')}/{r.get('isa')}")
        check(r.get("guest") == names.get(key[0]), f"{pre}: {what}: row {k} guest {r.get('guest')!r}, expected {names.get(key[0])!r}")
        check(r.get("hist_total") == r.get("completed"), f"{pre}: {what}: row {k} hist_total {r.get('hist_total')} != completed {r.get('completed')}")
        if r.get("kind") == "kernel" and VMX:
            # The kernel's own name for the code (the kvm_exit format's table).
            check(r.get("reason_name") == NAME_OF.get(r.get("reason")), f"{pre}: {what}: row {k} reason_name "
                  f"{r.get('reason_name')!r}, the kernel calls {r.get('reason')} {NAME_OF.get(r.get('reason'))!r}")
        count[k] += r.get("count", 0); done[k] += r.get("completed", 0)
        byname[(r.get("guest"), key[1], r.get("kind"), r.get("reason"))] += r.get("completed", 0)
    return count, +done, byname

def diff(a, b):
    return ", ".join(f"pid {k[0][0]} vCPU {k[0][1]} {kname(k[1:])}: {a[k]} vs {b[k]}" for k in sorted(set(a) | set(b), key=str) if a[k] != b[k])

def check_lost(pre, what, lost, nvcpus):
    want = {"cells_full": 0, "threads_full": 0, "unmatched_entry": nvcpus, "overwritten_exit": 0,
            "unmatched_run": 0, "ringbuf_full": 0}
    for k, v in want.items():
        check(lost.get(k) == v, f"{pre}: {what}: lost.{k} = {lost.get(k)}, expected {v}")

def check_events(pre, what, evs, tids, names, ex, us, tsc):
    """Field sanity of stream-format events and, per vCPU thread, the same exits in the same
    order as tracefs: the completed ones, then the unfinished last ones, flagged in_flight.
    Returns completed per key."""
    got = Counter(); per_k = defaultdict(list); per_u = defaultdict(list); bad = Counter(); mmio_npf = Counter()
    left = defaultdict(list)
    npf_rip = Counter(); misconfig_rips = defaultdict(set)
    per_t = defaultdict(list)
    def bad_if(cond, why, e):
        if cond:
            if not bad[why]:
                errors.append(f"{pre}: {what}: {why}: first one: {json.dumps(e)[:300]}")
            bad[why] += 1
        return cond
    for e in evs:
        t = e.get("type")
        if bad_if(t not in ("exit", "user_exit", "tsc_offset"), "unknown event type", e):
            continue
        key = tids.get(e.get("tid"))
        bad_if(e.get("guest") != names.get(e.get("pid")), "guest name is not the VM's", e)
        if t == "tsc_offset":
            # KVM writes the TSC offset at every vcpu_load (each KVM_RUN here: TCG's TSC is
            # unstable), also from the VMM's main thread while it sets a vCPU up: the event
            # names the vCPU loaded, whichever thread loads it.
            bad_if((e.get("pid"), e.get("vcpu")) not in tids.values(), "tsc_offset of no vCPU of the guest", e)
            bad_if(key is not None and key != (e.get("pid"), e.get("vcpu")), "tsc_offset: pid/vcpu do not match the guest's thread", e)
            per_t[e.get("tid")].append(e)
            continue
        if bad_if(key is None, "exit from a thread that is no vCPU of the guest", e):
            continue
        bad_if(e.get("pid") != key[0] or e.get("vcpu") != key[1], "pid/vcpu do not match the guest's thread", e)
        kind = "kernel" if t == "exit" else "user"
        bad_if(e.get("isa") != (ISA if kind == "kernel" else "user"), f"isa is not {ISA} (exit) / user (user_exit)", e)
        bad_if(not isinstance(e.get("latency_ns"), int) or e["latency_ns"] <= 0, "latency_ns not > 0", e)
        bad_if(not e.get("reason_name"), "no reason_name", e)
        if e.get("in_flight"):
            bad_if(e["in_flight"] is not True, "in_flight is not true", e)
            left[(e["tid"], kind)].append(e)
            continue
        got[(key, kind, e.get("reason"))] += 1
        if kind == "kernel":
            rip = int(e.get("rip", "0"), 16)
            bad_if(not CODE_LO <= rip < CODE_HI, f"rip outside the guest's code page [{CODE_LO:#x}, {CODE_HI:#x})", e)
            if e.get("reason") == IOIO:
                bad_if((int(e["info1"], 16) >> 16) & 0xffff != IO_PORT, f"ioio not to port {IO_PORT:#x}", e)
            if not VMX and e.get("reason") == NPF and int(e.get("info2", "0"), 16) == MMIO_GPA:
                mmio_npf[key] += 1
            if VMX and e.get("reason") in NPFS:
                # EPT exits do not record the GPA: the MMIO ones are at the store's rip, the
                # one rip of the VM's EPT misconfigs (counted below).
                npf_rip[(key, int(e["rip"], 16))] += 1
                if e.get("reason") == NPFS[1]:
                    misconfig_rips[key[0]].add(int(e["rip"], 16))
            per_k[e["tid"]].append(e)
        else:
            bad_if(e.get("errno") != 0, "user exit with errno != 0", e)
            per_u[e["tid"]].append(e)
    # Every kvm_write_tsc_offset, per thread in order, with the same offsets.
    ntsc = 0
    for tid in sorted(set(per_t) | set(tsc)):
        mine = [(e["vcpu"], int(e["prev_offset"], 16), int(e["next_offset"], 16)) for e in sorted(per_t[tid], key=lambda e: e["ts_ns"])]
        ntsc += len(mine)
        check(mine == tsc[tid], f"{pre}: {what}: thread {tid}: {len(mine)} tsc_offset events, tracefs has {len(tsc[tid])} "
              "kvm_write_tsc_offset" + ("" if len(mine) != len(tsc[tid]) else " (values differ)"))
    for tid, key in tids.items():
        ks = sorted(per_k[tid], key=lambda e: e["ts_ns"]); uu = sorted(per_u[tid], key=lambda e: e["ts_ns"])
        # The same exits, in the same order, with the same fields as tracefs shows.
        mine = [(e["reason"], int(e["rip"], 16), int(e["info1"], 16), int(e["info2"], 16), e["intr_info"], e["error_code"]) for e in ks]
        theirs = [(x["reason"], x["rip"], x["info1"], x["info2"], x["intr_info"], x["error_code"]) for x in ex[tid][:-1]]
        if mine != theirs:
            n = next((j for j in range(min(len(mine), len(theirs))) if mine[j] != theirs[j]), min(len(mine), len(theirs)))
            check(False, f"{pre}: {what}: thread {tid}: kernel exits differ from tracefs from #{n} on "
                  f"({len(mine)} vs {len(theirs)} exits): {mine[n:n + 1]} vs {theirs[n:n + 1]}")
        check([e["reason"] for e in uu] == us[tid][:-1], f"{pre}: {what}: thread {tid}: userspace exits differ from tracefs's "
              f"({len(uu)} vs {len(us[tid]) - 1})")
        # The last of each kind never completed: emitted once, in flight, when the thread exited.
        kl = [(e["reason"], int(e["rip"], 16), int(e["info1"], 16), int(e["info2"], 16), e["intr_info"], e["error_code"])
              for e in left[(tid, "kernel")]]
        check(kl == theirs_all(ex[tid])[-1:], f"{pre}: {what}: thread {tid}: kernel exits in flight {kl}, "
              f"expected the last of tracefs {theirs_all(ex[tid])[-1:]}")
        check([e["reason"] for e in left[(tid, "user")]] == us[tid][-1:], f"{pre}: {what}: thread {tid}: user exits in flight "
              f"{[e['reason'] for e in left[(tid, 'user')]]}, expected the last of tracefs {us[tid][-1:]}")
        # A vCPU thread's exits are sequential: none starts before the previous one ended, and
        # each exit to the VMM lies inside the kernel exit that caused it.
        for seq, nm in ((ks, "kernel"), (uu, "user")):
            ov = [j for j in range(1, len(seq)) if seq[j - 1]["ts_ns"] + seq[j - 1]["latency_ns"] > seq[j]["ts_ns"]]
            check(not ov, f"{pre}: {what}: thread {tid}: {len(ov)} {nm} exits overlap the previous one")
        starts = [e["ts_ns"] for e in ks]; j = 0; outside = 0
        for u in uu:
            while j + 1 < len(ks) and starts[j + 1] <= u["ts_ns"]:
                j += 1
            k = ks[j] if ks and starts[j] <= u["ts_ns"] else None
            if not (k and k["reason"] in USER_OF.get(u["reason"], ()) and u["ts_ns"] + u["latency_ns"] <= k["ts_ns"] + k["latency_ns"]):
                outside += 1
        check(not outside, f"{pre}: {what}: thread {tid}: {outside} exits to the VMM not inside a kernel exit of the matching reason")
    if VMX:
        for pid, rips in misconfig_rips.items():
            check(len(rips) == 1, f"{pre}: {what}: pid {pid}: EPT misconfigs at {len(rips)} rips {sorted(map(hex, rips))}, "
                  "expected one (the guest's MMIO store)")
        for (key, rip), n in npf_rip.items():
            if rip in misconfig_rips.get(key[0], ()):
                mmio_npf[key] += n
    return +got, mmio_npf, ntsc

def theirs_all(xs):
    return [(x["reason"], x["rip"], x["info1"], x["info2"], x["intr_info"], x["error_code"]) for x in xs]

def stream_events(pre, raw):
    evs = []; lost = []
    for n, l in enumerate(raw.split("\n"), 1):
        if not l:
            continue
        try:
            o = json.loads(l)
        except ValueError as e:
            check(False, f"{pre}: stream --json line {n} is not JSON ({e}): {l[:120]}"); continue
        (lost if "lost" in o else evs).append(o)
    check(not lost, f"{pre}: stream --json reports lost records: {lost[:3]}")
    return evs

def summary_events(pre, what, err):
    m = re.search(r"^vmexit: (\d+) events, (\d+) lost", err, re.M)
    if not check(m, f"{pre}: {what}: no 'vmexit: N events, M lost' summary on stderr: {err.strip()[:300]!r}"):
        return None
    check(m.group(2) == "0", f"{pre}: {what}: {m.group(0)}")
    return int(m.group(1))

def rcs(P, pre, tags):
    check(P.get("rc") == 0, f"{pre}: the outer command exited {P.get('rc')}")
    for t in tags:
        rc = text(P, f"{t}.rc").strip()
        check(rc == "0", f"{pre}: {t} exited {rc or '(no status)'}; stderr: {text(P, t + '.err').strip()[:400]!r}")

def total(c, kind):
    return sum(v for k, v in c.items() if k[1] == kind)

def fmt(c):
    agg = Counter()
    for k, v in c.items():
        agg[kname(k[1:])] += v
    return " ".join(f"{n}:{v}" for n, v in sorted(agg.items()))

results = {}

# ---------------------------------------------------------------- phase "stream"
def phase_stream():
    pre = "phase stream"; P = phases.get("stream")
    if not check(P, f"{pre}: did not run"):
        return
    A = parse_args(ARGS1); nv = A["vms"] * A["vcpus"]
    if not need(P, pre, ("guest.out", "trace", "stat.out", "stream.out", "stream.err")):
        return
    print(f"{TNAME}: {pre}: stat -- stream --json -- vmexit-guest {ARGS1}: {P.get('secs', 0):.1f} s (bed clock)")
    rcs(P, pre, ("stat", "stream", "guest"))
    tids, names = guests_of(P, pre, A)
    tcount, tdone, ex, us = tracefs_truth(P, pre, A, tids)
    rows, lost = stat_rows(P, pre, "stat.out")
    if rows is None:
        return
    scount, sdone, _ = stat_counts(pre, "stat", rows, names)
    check(scount == tcount, f"{pre}: stat count != tracefs: {diff(scount, tcount)}")
    check(sdone == tdone, f"{pre}: stat completed != tracefs minus the unfinished last exits: {diff(sdone, tdone)}")
    check_lost(pre, "stat", lost, nv)
    evs = stream_events(pre, text(P, "stream.out"))
    n = summary_events(pre, "stream", text(P, "stream.err"))
    check(n is None or n == len(evs), f"{pre}: stream says {n} events, printed {len(evs)}")
    got, mmio_npf, ntsc = check_events(pre, "stream", evs, tids, names, ex, us, P["tsc"])
    # The point of the phase: per (pid, vCPU, reason), stream events == stat's completed.
    check(got == sdone, f"{pre}: stream events != stat completed: {diff(got, sdone)}")
    check_expected(pre, "stream", got, sorted(tids.values()), A)
    for key in sorted(tids.values()):
        check(mmio_npf[key] == A["mmio"], f"{pre}: stream: pid {key[0]} vCPU {key[1]}: {mmio_npf[key]} npf at GPA {MMIO_GPA:#x} (VMX: EPT exits at the MMIO store), expected {A['mmio']}")
    print(f"{TNAME}:   tracefs kvm_exit {total(tcount, 'kernel')}, kvm_userspace_exit {total(tcount, 'user')}; "
          f"stat completed == stream events: kernel {total(got, 'kernel')}, user {total(got, 'user')} [{fmt(got)}]; "
          f"{ntsc} tsc_offset events == tracefs kvm_write_tsc_offset")

# ---------------------------------------------------------------- phase "perfetto"
def phase_perfetto():
    pre = "phase perfetto"; P = phases.get("perfetto")
    if not check(P, f"{pre}: did not run"):
        return
    A = parse_args(ARGS2); nv = A["vms"] * A["vcpus"]
    if not need(P, pre, ("guest.out", "trace", "stat.out", "stream.err", "perfetto.json")):
        return
    print(f"{TNAME}: {pre}: stat -- stream --perfetto -- vmexit-guest {ARGS2}: {P.get('secs', 0):.1f} s (bed clock)")
    rcs(P, pre, ("stat", "stream", "guest"))
    tids, names = guests_of(P, pre, A)
    vcpu_tid = {v: t for t, v in tids.items()}
    tcount, tdone, ex, us = tracefs_truth(P, pre, A, tids)
    rows, lost = stat_rows(P, pre, "stat.out")
    if rows is None:
        return
    scount, sdone, sbyname = stat_counts(pre, "stat", rows, names)
    check(scount == tcount, f"{pre}: stat count != tracefs: {diff(scount, tcount)}")
    check(sdone == tdone, f"{pre}: stat completed != tracefs minus the unfinished last exits: {diff(sdone, tdone)}")
    check_lost(pre, "stat", lost, nv)
    results["perfetto_stat_byname"] = sbyname
    n = summary_events(pre, "stream --perfetto", text(P, "stream.err"))
    raw = P["files"]["perfetto.json"]
    # The writer ended normally (Ctrl-C or the command's exit close it), so the file must be
    # complete JSON: the missing ']' the format tolerates is only for a writer killed mid-way.
    try:
        tr = json.loads(raw, parse_float=Decimal)
    except ValueError as e:
        check(False, f"{pre}: the perfetto file is not valid JSON: {e}"); return
    evs = tr["traceEvents"] if isinstance(tr, dict) else tr
    pname = {}; tname = {}; got = Counter(); tracks = defaultdict(list); bad = Counter(); other = Counter(); rates = Counter()
    left = Counter(); rrates = Counter(); slices = Counter()
    for e in evs:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "process_name":
            pname[e.get("pid")] = e["args"]["name"]
        elif ph == "M" and e.get("name") == "thread_name":
            tname[(e.get("pid"), e.get("tid"))] = e["args"]["name"]
        elif ph == "X":
            tracks[(e.get("pid"), e.get("tid"))].append(e)
            slices[(e.get("pid"), "user" if e.get("cat") == "kvm_userspace_exit" else "kernel",
                    e.get("name"))] += 1
        elif ph == "C" and (e.get("name") or "").endswith((" exits/s", " exits to VMM/s")):
            # Per-reason rate counters ("HLT exits/s", "IO exits to VMM/s"): the same windows,
            # summed back per VM and reason they give that reason's slices.
            user = e["name"].endswith(" exits to VMM/s")
            reason = e["name"][:-len(" exits to VMM/s" if user else " exits/s")]
            rrates[(e.get("pid"), "user" if user else "kernel", reason)] += e["args"]["value"]
        elif ph == "C" and e.get("name") == "exits/s":
            # Rate counters: value = exits in a 100 ms window x 10; summed back they must
            # give every exit slice of the VM exactly once.
            rates[(e.get("pid"), "kernel")] += e["args"]["guest exits"]
            rates[(e.get("pid"), "user")] += e["args"]["exits to VMM"]
        elif ph != "M":
            other[(ph, e.get("cat"))] += 1
    check(not [k for k in other if k[1] == "vmexit_lost"], f"{pre}: the trace has lost-record events: {dict(other)}")
    check(set(other) <= {("i", "kvm_tsc_offset")}, f"{pre}: unexpected events in the trace: {dict(other)}")
    check(pname == names, f"{pre}: process names {pname}, expected the guest names {names}")
    nx = 0
    for (pid, ttid), sl in tracks.items():
        tn = tname.get((pid, ttid), "")
        m = re.fullmatch(r"vCPU (\d+)( \(VMM\))?", tn)
        if not check(m, f"{pre}: {len(sl)} slices on track {tn!r} (pid {pid} tid {ttid}), expected 'vCPU N' or 'vCPU N (VMM)'"):
            continue
        vcpu, kind = int(m.group(1)), ("user" if m.group(2) else "kernel")
        key = (pid, vcpu)
        sl.sort(key=lambda e: e["ts"])
        for j, e in enumerate(sl):
            a = e.get("args", {}); nx += 1
            inflight = a.get("in_flight") is True
            why = None
            if e.get("cat") != ("kvm_exit" if kind == "kernel" else "kvm_userspace_exit"): why = "cat does not match the track"
            elif tids.get(a.get("tid")) != key: why = "args.tid is not that vCPU's thread"
            elif a.get("isa") != (ISA if kind == "kernel" else "user"): why = "isa"
            elif not (a.get("latency_ns", 0) > 0 and e["dur"] * 1000 == a["latency_ns"]): why = "dur != latency_ns / 1000 or not > 0"
            elif j and sl[j - 1]["ts"] + sl[j - 1]["dur"] > e["ts"]: why = "overlaps the previous slice on its track"
            elif kind == "kernel" and not CODE_LO <= int(a.get("rip", "0"), 16) < CODE_HI: why = "rip outside the guest's code page"
            if why:
                if not bad[why]:
                    errors.append(f"{pre}: perfetto slice: {why}: first one: {json.dumps(e, default=str)[:300]}")
                bad[why] += 1
            if inflight:
                # each vCPU's last exits, never completed: the last slice of their tracks
                left[(key, kind)] += 1
                if j != len(sl) - 1 and not bad["in flight, not the track's last"]:
                    errors.append(f"{pre}: perfetto slice in flight, not the track's last: {json.dumps(e, default=str)[:300]}")
                    bad["in flight, not the track's last"] += 1
                continue
            got[(key, kind, a.get("reason"))] += 1
        check(tn == ("vCPU %d%s" % (vcpu, " (VMM)" if kind == "user" else "")) and vcpu in [k[1] for k in tids.values()],
              f"{pre}: track {tn!r}: no such vCPU")
    # Exactly one X slice per completed exit, per (pid, vCPU, reason); and one per vCPU and kind
    # for the last exits, in flight when the thread exited.
    check(got == sdone, f"{pre}: perfetto slices != stat completed: {diff(got, sdone)}")
    check(left == Counter({(key, kind): 1 for key in tids.values() for kind in ("kernel", "user")}),
          f"{pre}: perfetto slices in flight {dict(left)}, expected one kernel and one user per vCPU")
    per_vm = Counter()
    for (key, kind, _), cnt in got.items():
        per_vm[(key[0], kind)] += cnt
    for (key, kind), cnt in left.items():
        per_vm[(key[0], kind)] += cnt
    check(Counter({k: v // 10 for k, v in rates.items() if v}) == per_vm and
          all(v % 10 == 0 for v in rates.values()),
          f"{pre}: exits/s counters summed back {dict(rates)} (x10) != slices per VM {dict(per_vm)}")
    check(Counter({k: v // 10 for k, v in rrates.items() if v}) == slices and
          all(v % 10 == 0 for v in rrates.values()),
          f"{pre}: per-reason exits/s counters summed back {dict(rrates)} (x10) != slices per VM and reason {dict(slices)}")
    check(got == tdone, f"{pre}: perfetto slices != tracefs minus the unfinished last exits: {diff(got, tdone)}")
    check_expected(pre, "perfetto", got, sorted(tids.values()), A)
    ntsc = sum(len(v) for v in P["tsc"].values())
    check(other[("i", "kvm_tsc_offset")] == ntsc, f"{pre}: {other[('i', 'kvm_tsc_offset')]} tsc_offset instants in the trace, "
          f"tracefs has {ntsc} kvm_write_tsc_offset")
    check(n is None or n == nx + other[("i", "kvm_tsc_offset")], f"{pre}: stream says {n} events, the trace has {nx} slices + "
          f"{other[('i', 'kvm_tsc_offset')]} tsc_offset instants")
    print(f"{TNAME}:   tracefs kvm_exit {total(tcount, 'kernel')}, kvm_userspace_exit {total(tcount, 'user')}; "
          f"perfetto X slices == stat completed: {nx} [{fmt(got)}], {len(raw)} bytes")

# ---------------------------------------------------------------- phase "record"
def phase_record():
    pre = "phase record"; P = phases.get("record")
    if not check(P, f"{pre}: did not run"):
        return
    A = parse_args(ARGS2)
    if not need(P, pre, ("guest.out", "trace", "record.err", "report.out", "rec.vmexit")):
        return
    print(f"{TNAME}: {pre}: record -- vmexit-guest {ARGS2}: {P.get('secs', 0):.1f} s (bed clock)")
    rcs(P, pre, ("record", "guest", "report"))
    tids, names = guests_of(P, pre, A)
    tcount, tdone, ex, us = tracefs_truth(P, pre, A, tids)
    n = summary_events(pre, "record", text(P, "record.err"))
    rows, lost = stat_rows(P, pre, "report.out")
    if rows is None:
        return
    rcount, rdone, rbyname = stat_counts(pre, "report (in the bed)", rows, names)
    check(rcount == tcount, f"{pre}: report: count != tracefs (a recording holds every exit): {diff(rcount, tcount)}")
    check(rdone == tdone, f"{pre}: report completed != tracefs minus the unfinished last exits: {diff(rdone, tdone)}")
    check_expected(pre, "report", rdone, sorted(tids.values()), A)
    sb = results.get("perfetto_stat_byname")
    if check(sb is not None, f"{pre}: no stat of the identical workload (phase perfetto) to compare with"):
        # Same arguments, same guest name: the deliberate reasons must have identical counts.
        delib = set(expected_completed(A))
        a = {k: v for k, v in rbyname.items() if (k[2], k[3]) in delib}
        b = {k: v for k, v in sb.items() if (k[2], k[3]) in delib}
        check(a == b, f"{pre}: report != stat of the identical workload (phase perfetto), deliberate reasons: report {sorted(a.items())}, stat {sorted(b.items())}")
    rec = os.path.join(work, "record.rec.vmexit")
    # The file copied out: the host's report gives the same summary, the same events as
    # tracefs, and a valid perfetto trace.
    def host(*args):
        r = subprocess.run([vmexit_host, "report", "-i", rec, *args], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"{pre}: host: vmexit report {' '.join(args)} exited {r.returncode}: {r.stderr.strip()[:300]}")
        return r.stdout
    hr = [json.loads(l) for l in host("--json", "--by", "vcpu").split("\n") if l.startswith("{")]
    check(hr and hr[-1].get("rows") == rows, f"{pre}: the host's report of the copied file differs from the bed's")
    evs = stream_events(pre + ": report --events --json", host("--events", "--json"))
    check(n is None or n == len(evs), f"{pre}: record said {n} events, the file holds {len(evs)}")
    got, mmio_npf, _ = check_events(pre, "report --events", evs, tids, names, ex, us, P["tsc"])
    check(got == rdone, f"{pre}: report --events != report summary: {diff(got, rdone)}")
    pf = os.path.join(work, "record.report-perfetto.json")
    host("--perfetto", pf)
    try:
        tr = json.load(open(pf))
        evp = tr["traceEvents"] if isinstance(tr, dict) else tr
        nx = sum(1 for e in evp if e.get("ph") == "X")
        check(nx == sum(rcount.values()), f"{pre}: report --perfetto: {nx} X slices, expected {sum(rcount.values())} (one per exit)")
    except (OSError, ValueError) as e:
        check(False, f"{pre}: report --perfetto is not valid JSON: {e}")
    print(f"{TNAME}:   tracefs kvm_exit {total(tcount, 'kernel')}, kvm_userspace_exit {total(tcount, 'user')}; "
          f"report completed kernel {total(rdone, 'kernel')}, user {total(rdone, 'user')} [{fmt(rdone)}]; "
          f"file {os.path.getsize(rec)} bytes, {len(evs)} events")


# ---------------------------------------------------------------- VMX phases "wide" and "timer"
# The kvmtrace per-cause ids and their words, decoded here from the SDM (vol. 3, "Exit
# Qualification" tables and the VM-exit interruption-information format), independently of
# src/output/rules/: (event id, %(1), %(2)) of a VMX exit.
KT_VMEXIT = 0x10002
def kvmtrace_of(x):
    r, q, ii = x["reason"], x["info1"], x["intr_info"]
    if r == IOIO:                                  # bits 2:0 size - 1, bit 3 IN, 31:16 port
        return (0x20004 if q & 8 else 0x20005, (q >> 16) & 0xffff, (q & 7) + 1)
    if r == CR:                                    # bits 3:0 CR, 5:4 access type
        t = (q >> 4) & 3
        return [(0x20007, q & 0xf, 0), (0x20006, q & 0xf, 0), (0x20011, 0, 0), (0x20012, (q >> 16) & 0xffff, 0)][t]
    if r == 48:                                    # EPT violation: qualification, GPA not recorded
        return (0x20001, q, 0)
    if r == EXC and ii & 0x80000000:               # bits 10:8 type (2 NMI, 3 hw exception), 7:0 vector
        if (ii >> 8) & 7 == 2:
            return (0x2000e, 0, 0)
        if (ii >> 8) & 7 == 3 and ii & 0xff == 14:
            return (0x20001, x["error_code"], q)
    if r == INTR:
        return (0x2000d, ii & 0xff if ii & 0x80000000 else 0, 0)
    simple = {CPUID: 0x2000c, HLT: 0x20010, VMCALL: 0x2000f, MSR: 0x2000a, MSR_W: 0x2000b}
    if r in simple:
        return (simple[r], 0, 0)
    return (KT_VMEXIT, r, x["rip"])

def tallies_of(P, pre, A, tids):
    """(pid, vcpu) -> the guest's own tally, checked against its arguments where exact."""
    out = {}
    for l in text(P, "guest.out").split("\n"):
        try:
            g = json.loads(l)
        except ValueError:
            continue
        for v in g.get("vcpus", []):
            t = v.get("tally", {}); key = (g.get("pid"), v.get("vcpu"))
            out[key] = t
            want = {"out": A["io"] + 1, "mmio": A["mmio"], "cpuid": A["cpuid"], "rdmsr": A["msr"] + (1 if A["timer"] else 0),
                    "wrmsr": A["wrmsr"] + (4 + 2 * A["timer"] if A["timer"] else 0), "cr_read": A["cr"],
                    "cr_write": 2 * A["cr"], "vmcall": A["vmcall"], "ud": A["ud"], "irq": A["timer"]}
            if not A["timer"]:
                want["hlt"] = A["hlt"]
            bad = {k: (t.get(k), n) for k, n in want.items() if t.get(k) != n}
            check(not bad, f"{pre}: guest {key}: its tally disagrees with its arguments (tally, expected): {bad}")
    check(sorted(out) == sorted(tids.values()), f"{pre}: tallies for {sorted(out)}, vCPUs {sorted(tids.values())}")
    return out

def check_decode(pre, ex, tids, tallies):
    """The exit qualifications tracefs shows are those of what the guest did (per vCPU)."""
    for tid, key in tids.items():
        t = tallies.get(key, {}); xs = ex[tid]
        io = [x for x in xs if x["reason"] == IOIO]
        check(all(x["info1"] & 0x1f == 0 and (x["info1"] >> 16) & 0xffff in (IO_PORT, DONE_PORT) for x in io),
              f"{pre}: thread {tid}: an IO exit is not a 1-byte OUT to {IO_PORT:#x}/{DONE_PORT:#x}: "
              f"{[hex(x['info1']) for x in io if x['info1'] & 0x1f or (x['info1'] >> 16) & 0xffff not in (IO_PORT, DONE_PORT)][:3]}")
        crs = Counter(((x["info1"] >> 4) & 3, x["info1"] & 0xf) for x in xs if x["reason"] == CR)
        want = Counter({(1, 8): t.get("cr_read", 0), (0, 8): t.get("cr_read", 0), (0, 0): t.get("cr_read", 0)})
        check(+crs == +want, f"{pre}: thread {tid}: CR accesses (type, CR) {dict(crs)}, expected {dict(+want)} "
              "(mov from CR8, mov to CR8, mov to CR0 per iteration)")
        exc = Counter(x["intr_info"] for x in xs if x["reason"] == EXC)
        check(exc == Counter({0x80000306: t.get("ud", 0)}) or (not exc and not t.get("ud")),
              f"{pre}: thread {tid}: exception exits by intr_info {dict(exc)}, expected {t.get('ud')} x 0x80000306 (#UD, hw exception)")

def check_kvmtrace(pre, raw, tids, ex, us, tsc):
    """The --format kvmtrace lines: per thread, one K line per kernel exit (the last in flight) with the
    per-cause id and words of kvmtrace_of(tracefs' exit), U lines = the user exits, O = the rest."""
    K = defaultdict(list); U = defaultdict(list); O = Counter(); bad = []
    for l in raw.split("\n"):
        f = l.split()
        if not f:
            continue
        try:
            if f[0] == "K" and len(f) == 6:
                K[int(f[1])].append((int(f[2], 16), int(f[3], 16), int(f[4], 16), int(f[5], 16)))
            elif f[0] == "U" and len(f) == 3:
                U[int(f[1])].append(int(f[2]))
            elif f[0] == "O" and len(f) == 3:
                O[f[1]] += 1
            else:
                bad.append(l)
        except ValueError:
            bad.append(l)
    check(not bad, f"{pre}: kvmtrace: {len(bad)} lines not understood, e.g. {bad[:2]}")
    classes = Counter()
    for tid in tids:
        want = [(x["rip"],) + kvmtrace_of(x) for x in ex[tid]]
        got = K.get(tid, [])
        classes.update(hex(w[1]) for w in got)
        if got != want:
            n = next((j for j in range(min(len(got), len(want))) if got[j] != want[j]), min(len(got), len(want)))
            check(False, f"{pre}: kvmtrace: thread {tid}: line #{n} of {len(got)} is {got[n:n + 1]}, expected {want[n:n + 1]} "
                  f"(from tracefs, {len(want)} exits)")
        check(U.get(tid, []) == us[tid], f"{pre}: kvmtrace: thread {tid}: user exit lines differ from tracefs")
    stray = set(K) - set(tids)
    check(not stray, f"{pre}: kvmtrace: lines of threads {sorted(stray)} that are no vCPU")
    ntsc = sum(len(v) for v in tsc.values())
    check(O == (Counter({"tsc_offset": ntsc}) if ntsc else Counter()), f"{pre}: kvmtrace: other lines {dict(O)}, expected {ntsc} tsc_offset")
    return classes

def phase_vmx(name, args, tags):
    pre = f"phase {name}"; P = phases.get(name)
    if not check(P, f"{pre}: did not run"):
        return
    A = parse_args(args); nv = A["vms"] * A["vcpus"]
    if not need(P, pre, ("guest.out", "trace", "stat.out", "stream.out", "stream.err") + tuple(f"{t}.out" for t in tags)):
        return
    print(f"{TNAME}: {pre}: {' -- '.join(['stat', 'stream'] + list(tags))} -- vmexit-guest {args}: {P.get('secs', 0):.1f} s (bed clock)")
    rcs(P, pre, ("stat", "stream", "guest") + tuple(tags))
    tids, names = guests_of(P, pre, A)
    tallies = tallies_of(P, pre, A, tids)
    tcount, tdone, ex, us = tracefs_truth(P, pre, A, tids, tallies)
    check_decode(pre, ex, tids, tallies)
    rows, lost = stat_rows(P, pre, "stat.out")
    if rows is None:
        return
    scount, sdone, _ = stat_counts(pre, "stat", rows, names)
    check(scount == tcount, f"{pre}: stat count != tracefs: {diff(scount, tcount)}")
    check(sdone == tdone, f"{pre}: stat completed != tracefs minus the unfinished last exits: {diff(sdone, tdone)}")
    check_lost(pre, "stat", lost, nv)
    evs = stream_events(pre, text(P, "stream.out"))
    n = summary_events(pre, "stream", text(P, "stream.err"))
    check(n is None or n == len(evs), f"{pre}: stream says {n} events, printed {len(evs)}")
    got, mmio_npf, ntsc = check_events(pre, "stream", evs, tids, names, ex, us, P["tsc"])
    check(got == sdone, f"{pre}: stream events != stat completed: {diff(got, sdone)}")
    check_expected(pre, "stream", got, sorted(tids.values()), A, tallies)
    for key in sorted(tids.values()):
        check(mmio_npf[key] == A["mmio"], f"{pre}: stream: pid {key[0]} vCPU {key[1]}: {mmio_npf[key]} EPT exits at the MMIO store, expected {A['mmio']}")
    extra = ""
    if "kvmtrace" in tags:
        classes = check_kvmtrace(pre, text(P, "kvmtrace.out"), tids, ex, us, P["tsc"])
        extra += f"; kvmtrace ids == tracefs decode [{' '.join(f'{k}:{v}' for k, v in sorted(classes.items()))}]"
    if "table" in tags:
        check_table(pre, text(P, "table.out"), rows)
        extra += "; stat table == JSON"
    irq = sum(t.get("irq", 0) for t in tallies.values())
    print(f"{TNAME}:   tracefs kvm_exit {total(tcount, 'kernel')}, kvm_userspace_exit {total(tcount, 'user')}; "
          f"stat == stream == tracefs == tally: kernel {total(got, 'kernel')}, user {total(got, 'user')} [{fmt(got)}]"
          f"{'; timer interrupts ' + str(irq) if irq else ''}{extra}")

def phase_hooks(name, want):
    """Phases fast and skew: which kvm_exit hooks the start-up check chose with a VM running,
    said in -v and JSON, and the counts of the chosen hooks against tracefs."""
    pre = f"phase {name}"; P = phases.get(name)
    if not check(P, f"{pre}: did not run"):
        return
    A = parse_args(ARGS6); nv = A["vms"] * A["vcpus"]
    if not need(P, pre, ("guest.out", "trace", "stat.out", "stat.err")):
        return
    print(f"{TNAME}: {pre}: stat -v started while a VM runs{' (VMEXIT_TEST_FAST_PATH_SKEW=1)' if want == 'skew' else ''} "
          f"-- vmexit-guest {ARGS6}: {P.get('secs', 0):.1f} s (bed clock)")
    rcs(P, pre, ("stat", "guest"))
    tids, names = guests_of(P, pre, A)
    tcount, tdone, ex, us = tracefs_truth(P, pre, A, tids)
    rows, lost = stat_rows(P, pre, "stat.out")
    if rows is None:
        return
    scount, sdone, _ = stat_counts(pre, "stat", rows, names)
    check(scount == tcount, f"{pre}: stat count != tracefs: {diff(scount, tcount)}")
    check(sdone == tdone, f"{pre}: stat completed != tracefs minus the unfinished last exits: {diff(sdone, tdone)}")
    check_lost(pre, "stat", lost, nv)
    h = json.loads([l for l in text(P, "stat.out").split("\n") if l.startswith('{"interval_s"')][-1]).get("hooks")
    lines = [l for l in text(P, "stat.err").split("\n") if l.startswith("vmexit: ")]
    if not check(isinstance(h, dict), f"{pre}: no \"hooks\" object in stat's JSON"):
        return
    c = h.get("fast_path_check") or {}
    if want == "fast":
        check(h.get("kvm_exit") == "tp_btf/kvm_exit" and h.get("kvm_entry") == "tp_btf/kvm_entry",
              f"{pre}: the fast path was not chosen with a VM running: {h}")
        # src/kernel/hooks.c trusts the fast path only after 100 exits read alike (CHECK_MIN_MATCHED).
        check(c.get("matched", 0) >= 100 and c.get("mismatched") == 0 and c.get("unpaired") == 0
              and c.get("unreadable") == 0, f"{pre}: fast path check {c}")
        check(any(l.startswith("vmexit: hooks: kvm_exit tp_btf/kvm_exit") for l in lines),
              f"{pre}: -v does not name the fast path: {lines}")
    else:
        # The classic kvm_exit with the BTF-enabled kvm_entry: the bed's kvm BTF has it.
        check(h.get("kvm_exit") == "kvm:kvm_exit" and h.get("kvm_entry") == "tp_btf/kvm_entry",
              f"{pre}: a skewed fast path was not refused: {h}")
        check(c.get("mismatched", 0) > 0, f"{pre}: the check saw no mismatch: {c}")
        check(any("warning: the kvm_exit fast path disagreed" in l for l in lines),
              f"{pre}: the fallback was not said on stderr: {lines}")
        check(any(l.startswith("vmexit: hooks: kvm_exit kvm:kvm_exit") for l in lines),
              f"{pre}: -v does not name the classic tracepoint: {lines}")
    print(f"{TNAME}:   hooks: kvm_exit {h.get('kvm_exit')}, kvm_entry {h.get('kvm_entry')}, check {c}; "
          f"stat == tracefs: kernel {total(sdone, 'kernel')}, user {total(sdone, 'user')} completed [{fmt(sdone)}]")

def check_table(pre, raw, rows):
    """stat's table (the same run, nested) shows the JSON's counts, by guest, vCPU and reason
    (exits to the VMM are named KVM_EXIT_*), and the two TOTAL lines their sums."""
    want = Counter(); tot = Counter()
    for r in rows:
        want[(r.get("guest"), r.get("vcpu"), r.get("reason_name"))] += r.get("count", 0)
        tot["guest exits" if r.get("kind") == "kernel" else "exits to the VMM"] += r.get("count", 0)
    got = Counter(); gtot = Counter(); summary = False
    for l in raw.split("\n"):
        if l.startswith("Summary"):
            summary = True; got.clear(); gtot.clear()      # the final table only
            continue
        m = re.match(r"^TOTAL\s+(guest exits|exits to the VMM)\s+(\d+)\s", l)
        if m:
            gtot[m.group(1)] += int(m.group(2)); continue
        m = re.match(r"^(\S+)\s+(\d+)\s+(\S+)\s+(\d+)\s", l)
        if m:
            name = m.group(3)[len("KVM_EXIT_"):] if m.group(3).startswith("KVM_EXIT_") else m.group(3)
            got[(m.group(1), int(m.group(2)), name)] += int(m.group(4))
    check(summary, f"{pre}: the stat table has no Summary")
    check(got == want, f"{pre}: stat table {sorted(got.items())} != stat JSON {sorted(want.items())}")
    check(gtot == tot, f"{pre}: stat table TOTAL lines {dict(gtot)} != JSON sums {dict(tot)}")

# ---------------------------------------------------------------- phase "top"
def list_names():
    """vmexit's reason names per ISA (`vmexit list`, run on the host): name -> code."""
    r = subprocess.run([vmexit_host, "list"], capture_output=True, text=True, timeout=60)
    names = defaultdict(dict); sec = None
    for l in r.stdout.split("\n"):
        m = re.match(r"^(\w+): ", l)
        if m:
            sec = m.group(1); continue
        m = re.match(r"^\s+(0x[0-9a-fA-F]+|\d+)\s+(.+?)\s*$", l)
        if m and sec:
            names[sec][m.group(2)] = int(m.group(1), 0)
            # The list prints KVM's API name (KVM_EXIT_IO); top's rows keep kvm_stat's (IO).
            if sec == "user" and m.group(2).startswith("KVM_EXIT_"):
                names[sec][m.group(2)[len("KVM_EXIT_"):]] = int(m.group(1), 0)
    return names

def phase_top():
    pre = "phase top"; P = phases.get("top")
    if not check(P, f"{pre}: did not run"):
        return
    A = parse_args(ARGS5)
    if not need(P, pre, ("guest.out", "top.out", "top.rc")):
        return
    print(f"{TNAME}: {pre}: top --once -x -d 6 while vmexit-guest {ARGS5} runs, then lingers "
          f"(top attached after {P.get('topwait', 0) / 10:.1f} s, bed clock)")
    rcs(P, pre, ("top",))
    tids, _ = guests_of(P, pre, A)
    check(P.get("buf") is not None and P["buf"][0] == P["buf"][1] and P["buf"][0] > 0,
          f"{pre}: trace ring buffer lost events (entries-in-buffer/entries-written = {P.get('buf')})")
    check(P.get("overrun") == 0, f"{pre}: trace ring buffer overrun = {P.get('overrun')}")
    names = list_names()
    tk = Counter()
    for n, c in P.get("topk", Counter()).items():
        if check(n in CODE, f"{pre}: trace reason {n!r} not in the format table"):
            tk[CODE[n]] += c
    tu = P.get("topu", Counter())
    out = text(P, "top.out")
    rows = {}
    for l in out.split("\n"):
        m = re.match(r"^\s*(kvm_exit|kvm_userspace_exit)(?:\((.+)\))?\s+(\d+)\s", l)
        if m:
            rows[(m.group(1), m.group(2))] = int(m.group(3))
    check(re.search(r" - 1 VM - ", out), f"{pre}: top does not show exactly 1 VM: {out.splitlines()[:1]}")
    vk = Counter(); vu = Counter()
    for (ev, n), c in rows.items():
        if n is None:
            continue
        tab = names[ISA] if ev == "kvm_exit" else names["user"]
        if check(n in tab, f"{pre}: top row {ev}({n}): not a name `vmexit list` knows"):
            (vk if ev == "kvm_exit" else vu)[tab[n]] += c
    check(vk == tk, f"{pre}: top kvm_exit totals {dict(vk)} != tracefs {dict(tk)}")
    check(vu == tu, f"{pre}: top kvm_userspace_exit totals {dict(vu)} != tracefs {dict(tu)}")
    check(rows.get(("kvm_exit", None)) == sum(tk.values()) and rows.get(("kvm_userspace_exit", None)) == sum(tu.values()),
          f"{pre}: top's kvm_exit / kvm_userspace_exit totals {rows.get(('kvm_exit', None))} / "
          f"{rows.get(('kvm_userspace_exit', None))}, tracefs {sum(tk.values())} / {sum(tu.values())}")
    # Both saw every exit of the guest: the deliberate ones are its arguments (+ the done port).
    nv = A["vcpus"]
    want = {IOIO: nv * (A["io"] + 1), CPUID: nv * A["cpuid"], HLT: nv * A["hlt"]}
    check(all(tk[r] == n for r, n in want.items()), f"{pre}: tracefs kvm_exit {dict(tk)}, expected {want} and interrupts/npf")
    print(f"{TNAME}:   top totals == tracefs: kvm_exit {sum(vk.values())} [{' '.join(f'{NAME_OF.get(k, k)}:{v}' for k, v in sorted(vk.items()))}], "
          f"kvm_userspace_exit {sum(vu.values())}")

phase_stream()
phase_perfetto()
phase_record()
phase_top()
if VMX:
    phase_vmx("wide", ARGS3, ("table", "kvmtrace"))
    phase_vmx("timer", ARGS4, ())
    phase_hooks("fast", "fast")
    phase_hooks("skew", "skew")

if errors:
    for e in errors:
        print(f"{TNAME}: ASSERT: " + e)
    sys.exit(1)
PYEOF
[ $prc = 0 ] || fail "assertions failed (above)"
echo "PASS: $TNAME"
