#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What tracing costs each KVM exit, measured on real kvm_exit/kvm_entry in a nested bed
# (tests/vm): in ONE boot, a guest making a fixed number of exits is timed alone, under empty
# BPF programs on vmexit's hooks (the floor: tp_btf kvm_exit/kvm_entry, kvm_userspace_exit and
# the KVM_RUN hook, bench/floor_progs), under `vmexit stat` (the tp_btf fast path), under
# `vmexit stat` on the classic tracepoints, under empty programs on the classic tracepoints
# (empty-classic: the classic path's own floor, whose dispatch builds the trace record), and
# under bpftrace's simplest exit->entry histogram, and under `vmexit stat --by key` (keys:
# its key programs on kvm_pio, kvm_cpuid... too, on the fast path) and `--by rip` (rip; on
# VMX the classic kvm_exit, whose record reads the RIP), and `vmexit stat` started
# before any VM runs (late: it moves to the fast path once the warm-up VM's exits begin,
# src/kernel/fast_switch.h, and is timed after). The cases alternate for several rounds,
# each timing --reps guests in a row under one tracer start. Noise on a shared host only ever
# adds time, so the least time of each case is the estimate (the medians are printed too): ns
# per exit over "alone", and the ratios vmexit/floor, vmexit/bpftrace, fast/classic and
# keys/rip over plain stat.
# --wake: the cost of stat --wake per interrupt delivery instead (issue 31): the guest halts for
# --timer N x2APIC timer interrupts (vector 0x40, each 50 us of guest time after its arming),
# timed alone, under the empty exit programs (empty), under those plus empty programs on every
# hook of --wake (empty-wake: bpf/floor.bpf.c), under plain stat (fast), under stat --wake
# (wake), and under bpftrace's simplest pairing of kvm_apic_accept_irq with the target vCPU's next
# kvm_entry (bpftrace-wake); per delivery: wake over fast against empty-wake over empty (target
# <= 2x) and against bpftrace-wake over alone (target <= 0.5x).
# --base DIR: another build (DIR/vmexit, e.g. main's) in the same boot, its figures beside: the
# case fast-base (its plain stat, beside fast, and fast/fast-base), with --wake wake-base (its
# stat --wake, beside wake); classic-base, asked for in --cases, its stat refused the fast path as
# classic's is (beside classic, and classic/classic-base); keys-base, asked for, its stat --by key
# (beside keys: keys/keys-base).
# Per program (both modes, after the timed rounds): each case that loads BPF programs (empty,
# fast, keys, fast-base, and with --wake empty-wake, wake, wake-base) runs once more with bpf_stats_enabled=1
# around one timed guest, and bpftool's run_cnt and run_time_ns of every program, their growth
# over that guest, say which hook costs what (per run, per exit or delivery). The statistics'
# own clock reads inflate every run alike, so these guests are not among the timed ones;
# --no-progs leaves the step out.
# Nothing is asserted: it prints figures and whether the targets of the design are met.
# In the vmx bed the clock counts instructions (Bochs' ips), so the figures are the emulated work
# each tracer adds. In the svm bed it is the host's clock: other jobs on the host add noise, which
# alternation and medians only partly remove (QEMU's -icount does not boot the bed).
# Not part of `make test`; `make bench-bed` runs it (~5 min on svm, ~25 min on vmx, here).
#
# usage: bench/bed_overhead.sh [--bed svm|vmx] [--kernel 6.1|6.12] [--rounds R] [--cpuid N]
#                              [--reps N] [--io N] [--smp N] [--cases LIST]
#                              [--base DIR] [--wake [--timer N]] [--no-progs] [OUTPUT dir]
# --cases: a comma-separated subset of alone,empty,timing,empty-classic,fast,fast-task,classic,bpftrace,keys,rip,late
# (default all; alone is always run; timing: floor_progs --timed, the least a program that times
# each exit does, bpf/floor.bpf.c); with --wake of alone,empty,empty-wake,fast,wake,bpftrace-wake (default
# all); with --base also fast-base (--wake: wake-base), in the default list too, and classic-base; without bpftrace
# the bed boots without its 200 MB of LLVM.
# One bed CPU by default: the guest, the tracer and the warm-up VM share it, as on a busy
# host, and a 2-CPU svm bed hung twice (2026-11-23) at a tracer's start (once with soft
# lockups, both CPUs idle).
set -u
cd "$(dirname "$0")/.." || exit 1
BED=svm KERNEL=6.1 ROUNDS= REPS= CPUID= IO= OUT=.output SMP=1 WAKE=0 TIMER= BASE= PROGS=1
CASES=
while [ $# -gt 0 ]; do
	case $1 in
	--bed) BED=$2; shift 2 ;;
	--kernel) KERNEL=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--smp) SMP=$2; shift 2 ;;
	--cpuid) CPUID=$2; shift 2 ;;
	--io) IO=$2; shift 2 ;;
	--cases) CASES=alone,$2; shift 2 ;;
	--wake) WAKE=1; shift ;;
	--timer) TIMER=$2; shift 2 ;;
	--base) BASE=$2; shift 2 ;;
	--no-progs) PROGS=0; shift ;;
	-h|--help) sed -n '3,49p' "$0"; exit 0 ;;
	-*) echo "bed_overhead: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) OUT=$1; shift ;;
	esac
done
# Defaults per bed: Bochs' clock counts instructions, so runs repeat within 0.5 % and a few
# suffice; every exit costs it much host time (2 rounds: ~20 min with a 6.12 boot). Not the
# timers: at 200 a guest the guests' spread was 150 bed-ns a delivery, as large as --wake's
# targets' margins; at 2,000 it is 20 (2026-11-30), for ~30 min with a 6.12 boot.
if [ "$BED" = vmx ]; then
	: "${ROUNDS:=2}" "${REPS:=2}" "${CPUID:=1000}" "${IO:=200}" "${TIMER:=2000}"
else
	: "${ROUNDS:=3}" "${REPS:=3}" "${CPUID:=3000}" "${IO:=500}" "${TIMER:=1000}"
fi
# The baseline's case (--base): its stat --wake beside wake, else its plain stat beside fast.
BASECASE=fast-base
[ $WAKE = 1 ] && BASECASE=wake-base
if [ -z "$CASES" ] && [ $WAKE = 1 ]; then
	CASES=alone,empty,empty-wake,fast,wake,bpftrace-wake
elif [ -z "$CASES" ]; then
	CASES=alone,empty,timing,empty-classic,fast,classic,bpftrace,keys,rip,late
fi
# --base always runs its case, asked for in --cases or not.
[ -n "$BASE" ] && [[ ,$CASES, != *,$BASECASE,* ]] && CASES=$CASES,$BASECASE
for v in ROUNDS REPS CPUID IO SMP TIMER; do
	case ${!v} in
	''|*[!0-9]*) echo "bed_overhead: --${v,,} wants a number, not '${!v}'" >&2; exit 2 ;;
	esac
done
[ "$ROUNDS" -ge 1 ] && [ "$REPS" -ge 1 ] || { echo "bed_overhead: --rounds and --reps want at least 1" >&2; exit 2; }
for f in "$OUT/vmexit" "$OUT/vmexit-guest" "$OUT/bench/floor_progs"; do
	[ -x "$f" ] || { echo "bed_overhead: no $f: run make bench-bed (or give the OUTPUT dir)" >&2; exit 2; }
done
for c in $(echo "$CASES" | tr , ' '); do
	case $c in
	alone|empty|timing|fast) continue ;;
	fast-task|empty-classic|classic|bpftrace|keys|rip|late) [ $WAKE = 0 ] && continue ;;
	empty-wake|wake|bpftrace-wake) [ $WAKE = 1 ] && continue ;;
	fast-base|wake-base) [ $c = $BASECASE ] && [ -n "$BASE" ] && continue ;;
	classic-base|keys-base) [ $WAKE = 0 ] && [ -n "$BASE" ] && continue ;;
	esac
	echo "bed_overhead: --cases: no case '$c' (alone, empty, timing, empty-classic, fast, fast-task, classic, bpftrace, keys, rip, late, and fast-base, classic-base and keys-base with --base; with --wake alone, empty, empty-wake, fast, wake, bpftrace-wake, and wake-base with --base)" >&2
	exit 2
done
if [ -n "$BASE" ]; then
	[ -x "$BASE/vmexit" ] ||
		{ echo "bed_overhead: no $BASE/vmexit: build the baseline there" >&2; exit 2; }
fi
BPFTOOL=
if [ $PROGS = 1 ]; then
	BPFTOOL=$(command -v bpftool) ||
		{ echo "bed_overhead: no bpftool on this host (the per-program step): run tools/install-deps.sh, or --no-progs" >&2; exit 2; }
fi
BPFTRACE=
case ,$CASES, in
*,bpftrace,*|*,bpftrace-wake,*) BPFTRACE=$(command -v bpftrace) || {
	echo "bed_overhead: no bpftrace on this host: run tools/install-deps.sh" >&2; exit 2; } ;;
esac
if [ "$(id -u)" -ne 0 ]; then
	echo "bed_overhead: needs root (the bed's kernel cache, as tests/vm)" >&2
	exit 2
fi

tmp=$(mktemp -d /tmp/bed_overhead.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
# The bed puts each file at / by its name: the baseline's under a name of its own.
[ -n "$BASE" ] && { cp "$BASE/vmexit" "$tmp/vmexit-base" || exit 1; }

# The in-bed script (busybox sh). Every case has the same shape, so that only the tracer
# differs: a warm-up VM runs while the tracer starts (vmexit's start-up check needs exits to
# judge the fast path by), it is stopped once the tracer is attached, then the timed guest
# runs, then the tracer is stopped. The guest times itself: "ns" is its vCPU's wall time from
# the first KVM_RUN to the done exit, which excludes the guest's and tracer's start-up.
cat >"$tmp/script.sh" <<'EOF'
G=/vmexit-guest
ARGS="--vcpus 1 --cpuid $CPUID --io $IO --json --name timed"
[ "$WAKE" = 1 ] && ARGS="--vcpus 1 --timer $TIMER --timer-us 50 --json --name timed"
# wait_for FILE PATTERN: up to 10 min of bed time (bpftrace compiles with LLVM under emulation).
wait_for() {
	i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 12000 ] || { echo "NOTE: '$2' never showed in $1"; cat "$1"; return 1; }
		sleep 0.05
	done
}
# The warm-up VM sleeps 2 ms in its VMM per IO exit: enough exits for the check (hooks.h wants
# 100), and the CPU left to the tracer's start-up (a busy VM slows Bochs' clock to a crawl).
warm_start() {
	$G --vcpus 1 --cpuid 20 --io 5 --io-sleep-us 2000 --seconds 1800 --name warm >/dev/null 2>&1 &
	WARM=$!
	sleep 0.5
}
warm_stop() { kill $WARM; wait $WARM 2>/dev/null; }
# REPS timed guests in a row under the same tracer: NS lists their times.
timed() {
	NS=
	k=0
	while [ $k -lt $REPS ]; do
		ns=$($G $ARGS 2>/tmp/g.err | sed -n 's/.*"ns":\([0-9]*\).*/\1/p')
		[ -n "$ns" ] || { echo "NOTE: the timed guest failed: $(cat /tmp/g.err)"; ns=0; }
		NS="$NS $ns"
		k=$((k + 1))
	done
}
# The per-program step (STEP=progs): bpftool's view of every program before and after the timed
# guest, the kernel's run statistics on only around it (a case's own start-up is not counted).
measure() {
	if [ "$STEP" != progs ]; then
		timed
		return
	fi
	echo 1 >/proc/sys/kernel/bpf_stats_enabled || echo "NOTE: cannot enable bpf_stats"
	echo "PROGS $CUR before $(/bpftool -j prog show)"
	timed
	echo "PROGS $CUR after $(/bpftool -j prog show)"
	echo 0 >/proc/sys/kernel/bpf_stats_enabled
}
# bpftrace_case SCRIPT: the timed guests under bpftrace -e SCRIPT, which fills a histogram @h.
bpftrace_case() {
	rm -f /tmp/b.out
	/bpftrace -e "$1" >/tmp/b.out 2>&1 &
	T=$!
	wait_for /tmp/b.out 'Attaching'
	sleep 0.5
	warm_stop; measure
	kill -INT $T; wait $T
	grep -q '^@h:' /tmp/b.out && hooks=tracepoints || { hooks=none; cat /tmp/b.out; }
}
run_case() {
	CUR=$1
	warm_start
	case $1 in
	alone)
		warm_stop; timed; hooks=- ;;
	empty|timing|empty-classic|empty-wake)
		rm -f /tmp/f.err
		case $1 in
		empty) /floor_progs 2>/tmp/f.err & ;;
		timing) /floor_progs --timed 2>/tmp/f.err & ;;
		empty-wake) /floor_progs --wake 2>/tmp/f.err & ;;
		*) /floor_progs --exit classic 2>/tmp/f.err & ;;
		esac
		T=$!
		wait_for /tmp/f.err 'floor: attached' || { warm_stop; kill $T; wait $T; return; }
		warm_stop; measure
		kill -INT $T; wait $T
		hooks=$(sed -n 's/^floor: attached: kvm_exit\/kvm_entry \([a-z]*\),.*KVM_RUN \([a-z-]*\)\(, wake\)\{0,1\}\(, timed\)\{0,1\}$/\1,\2\3\4/p' /tmp/f.err | tr -d ' ') ;;
	fast|fast-task|fast-base|classic|classic-base|keys|keys-base|rip|wake|wake-base)
		rm -f /tmp/v.out /tmp/v.err
		case $1 in
		fast-task) VMEXIT_CPU_SLOT=0 /vmexit stat --json -v >/tmp/v.out 2>/tmp/v.err & ;;
		classic) VMEXIT_TEST_FAST_PATH_SKEW=1 /vmexit stat --json -v >/tmp/v.out 2>/tmp/v.err & ;;
		classic-base) VMEXIT_TEST_FAST_PATH_SKEW=1 /vmexit-base stat --json -v >/tmp/v.out \
			2>/tmp/v.err & ;;
		keys) /vmexit stat --json -v --by key >/tmp/v.out 2>/tmp/v.err & ;;
		keys-base) /vmexit-base stat --json -v --by key >/tmp/v.out 2>/tmp/v.err & ;;
		rip) /vmexit stat --json -v --by rip >/tmp/v.out 2>/tmp/v.err & ;;
		wake) /vmexit stat --json -v --wake >/tmp/v.out 2>/tmp/v.err & ;;
		wake-base) /vmexit-base stat --json -v --wake >/tmp/v.out 2>/tmp/v.err & ;;
		fast-base) /vmexit-base stat --json -v >/tmp/v.out 2>/tmp/v.err & ;;
		*) /vmexit stat --json -v >/tmp/v.out 2>/tmp/v.err & ;;
		esac
		T=$!
		# -v says the hooks once every program is attached (session.c), in any output format,
		# and when the start-up check's programs are gone (a grace period or more after, in a
		# thread): what is timed is vmexit's programs alone, not that transient.
		wait_for /tmp/v.err 'vmexit: hooks: KVM_RUN' || { warm_stop; kill $T; wait $T; return; }
		wait_for /tmp/v.err 'vmexit: hooks: start-up check detached' ||
			{ warm_stop; kill $T; wait $T; return; }
		# --wake's programs load after the exits' (sampler.c): the first timed guest paid
		# for their loading (1.1 s of stat's CPU in the svm bed) and ran partly untraced.
		if [ $1 = wake ] || [ $1 = wake-base ]; then
			wait_for /tmp/v.err 'vmexit: --wake: .* programs attached' ||
				{ warm_stop; kill $T; wait $T; return; }
		fi
		warm_stop; measure
		kill -INT $T; wait $T
		hooks=$(sed -n 's/.*"kvm_exit":"\([^"]*\)".*/\1/p' /tmp/v.out | head -1)
		[ -n "$hooks" ] || { echo "NOTE: no hooks in vmexit's JSON:"; grep -v ^libbpf /tmp/v.err; }
		grep '^vmexit: \(hooks: kvm_exit\|hooks: start-up\|hooks: keys\|warning\)' /tmp/v.err | sed "s/^/HOOKS-$1 /" ;;
	late)
		# No VM while vmexit starts: the check keeps waiting; the warm-up VM's exits then
		# let it judge and switch, and the detach line comes after the switch.
		warm_stop
		rm -f /tmp/v.out /tmp/v.err
		/vmexit stat --json -v >/tmp/v.out 2>/tmp/v.err &
		T=$!
		wait_for /tmp/v.err 'start-up check kept until exits begin' || { kill $T; wait $T; return; }
		warm_start
		wait_for /tmp/v.err 'vmexit: hooks: start-up check detached' ||
			{ warm_stop; kill $T; wait $T; return; }
		warm_stop; timed
		kill -INT $T; wait $T
		# The summary's hooks: an interval line may predate the switch.
		hooks=$(sed -n 's/.*"kvm_exit":"\([^"]*\)".*/\1/p' /tmp/v.out | tail -1)
		grep '^vmexit: \(hooks: kvm_exit\|hooks: start-up\|hooks: keys\|warning\)' /tmp/v.err | sed "s/^/HOOKS-$1 /" ;;
	bpftrace)
		bpftrace_case 'tracepoint:kvm:kvm_exit { @s[tid] = nsecs; }
			tracepoint:kvm:kvm_entry /@s[tid]/ { @h = hist(nsecs - @s[tid]); delete(@s[tid]); }' ;;
	bpftrace-wake)
		# The simplest pairing: pending (kvm_apic_accept_irq, its target's APIC ID, which KVM
		# makes the vCPU id) to that vCPU's next entry; one guest at a time here.
		bpftrace_case 'tracepoint:kvm:kvm_apic_accept_irq { @p[args->apicid] = nsecs; }
			tracepoint:kvm:kvm_entry /@p[args->vcpu_id]/ {
				@h = hist(nsecs - @p[args->vcpu_id]); delete(@p[args->vcpu_id]); }' ;;
	esac
	if [ "$STEP" = progs ]; then
		for ns in $NS; do echo "PROGS-NS $1 $ns"; done
		return
	fi
	for ns in $NS; do echo "CASE $1 $r $ns $hooks"; done
}
echo "INFO kernel $(uname -r), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
# One guest alone first: faults its binary in and says the exit count works at all.
$G --vcpus 1 --cpuid 10 --io 10 >/dev/null 2>&1 || echo "NOTE: the guest fails in this bed"
# The tracers' first start pays for loading their files from the initramfs: not timed.
/vmexit stat --json 1 1 >/dev/null 2>&1
r=1
while [ $r -le $ROUNDS ]; do
	for c in $(echo "$CASES" | tr , ' '); do
		run_case $c
	done
	r=$((r + 1))
done
if [ "$PROGS" = 1 ]; then
	STEP=progs REPS=1
	for c in $(echo "$CASES" | tr , ' '); do
		case $c in
		empty|timing|empty-wake|fast|fast-base|keys|keys-base|wake|wake-base) run_case $c ;;
		esac
	done
fi
EOF

echo "bed_overhead: $BED bed, kernel $KERNEL, $ROUNDS rounds x $REPS runs, guest --vcpus 1 --cpuid $CPUID --io $IO" >&2
timeout=3600
[ "$BED" = vmx ] && timeout=7200
# bpftrace brings libLLVM and libclang (~200 MB unpacked in the initramfs): more memory.
mem=3072
[ "$BED" = vmx ] && mem=1536	# Bochs' "megs"
tests/vm/bed.sh --bed "$BED" --kernel "$KERNEL" --timeout "$timeout" --mem $mem --smp "$SMP" \
	--env CPUID="$CPUID" --env IO="$IO" --env ROUNDS="$ROUNDS" --env REPS="$REPS" \
	--env CASES="$CASES" --env WAKE=$WAKE --env TIMER="$TIMER" --env PROGS=$PROGS \
	"$tmp/script.sh" "$OUT/vmexit" "$OUT/vmexit-guest" "$OUT/bench/floor_progs" ${BPFTRACE:+"$BPFTRACE"} \
	${BPFTOOL:+"$BPFTOOL"} \
	${BASE:+"$tmp/vmexit-base"} \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 77 ]; then
	echo "bed_overhead: SKIP: the bed cannot run here: $(sed -n 's/^bed: SKIP: //p' "$tmp/err" | head -n 1)" >&2
	exit 77
fi
if [ $rc -ne 0 ]; then
	echo "bed_overhead: the bed failed (exit $rc):" >&2
	cat "$tmp/err" "$tmp/out" >&2
	exit 1
fi
grep -v '^CASE ' "$tmp/out" | grep -v '^HOOKS-\|^PROGS' | sed 's/^/bed: /'
grep '^HOOKS-' "$tmp/out" | sort | uniq -c
python3 - "$tmp/out" "$BED" "$KERNEL" "$CPUID" "$IO" "$CASES" "$WAKE" "$TIMER" <<'PY'
import statistics, sys
path, bed, kernel, cpuid, io = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
asked = sys.argv[6].split(',')
wake, timer = sys.argv[7] == '1', int(sys.argv[8])
# The guest's documented kvm_exits per pass: cpuid + io + the done port's out (tools/vmexit-guest.md);
# a few first-touch NPF/EPT exits and host interrupts come on top, the same in every case.
exits = cpuid + io + 1
if wake:
    # Per timer: its arming (an x2APIC wrmsr), the hlt, and the done port's out per run.
    exits = 2 * timer + 1
ns = {}
hooks = {}
for line in open(path):
    f = line.split()
    if len(f) >= 5 and f[0] == 'CASE':
        if int(f[3]) > 0:
            ns.setdefault(f[1], []).append(int(f[3]))
        hooks.setdefault(f[1], set()).add(f[4])
print(f"bed {bed}, kernel {kernel}: emulated latencies (QEMU TCG / Bochs), functional only; "
      "only the ratios within this one boot carry over" +
      (" (Bochs: the bed's clock counts instructions, a constant scale)" if bed == "vmx" else
       " (QEMU TCG: the host's clock, other jobs on the host add noise)"))
if wake:
    print(f"guest: 1 vCPU, {timer} timer interrupts per run (each armed by a wrmsr, waited for "
          f"halted): about {exits} kvm_exits")
else:
    print(f"guest: 1 vCPU, {exits} kvm_exits per run (cpuid {cpuid}, io {io}, done 1), "
          f"{io + 1} of them to userspace")
order = ['alone', 'empty', 'timing', 'empty-classic', 'empty-wake', 'fast', 'fast-base', 'fast-task', 'classic',
         'classic-base', 'wake',
         'wake-base',
         'bpftrace',
         'bpftrace-wake', 'keys', 'keys-base', 'rip', 'late']
need = [c for c in order if c in asked]
# timing: floor_progs --timed has programs for the BTF-enabled hooks only; without them the
# case is said and left out, not a failed run.
if 'timing' in need and not ns.get('timing'):
    print("no figures for timing (floor_progs --timed refused this bed's hooks): left out")
    need.remove('timing')
missing = [c for c in need if not ns.get(c)]
if missing:
    print("no figures for: " + ", ".join(missing))
    sys.exit(1)
med = {c: statistics.median(ns[c]) for c in need}
low = {c: min(ns[c]) for c in need}
print(f"{'case':13} {'runs':>4} {'least ms':>9} {'ns/exit':>8} {'over alone':>10}   "
      f"{'median ms':>9} {'over alone':>10}  hook")
for c in need:
    print(f"{c:13} {len(ns[c]):4} {low[c] / 1e6:9.2f} {low[c] / exits:8.0f} "
          f"{(low[c] - low['alone']) / exits:10.0f}   {med[c] / 1e6:9.2f} "
          f"{(med[c] - med['alone']) / exits:10.0f}  {','.join(sorted(hooks[c]))}")
print("(over alone: ns per exit; the least times are the estimate, the medians show the noise)")
for c in need:
    print(f"{c:13} runs ms: " + " ".join(f"{v / 1e6:.4g}" for v in ns[c]))
o = {c: (low[c] - low['alone']) / exits for c in need}
ok = True
want_hooks = {'fast': ({'tp_btf/kvm_exit'}, 'the fast path'),
              'fast-task': ({'tp_btf/kvm_exit'}, 'the fast path'),
              'fast-base': ({'tp_btf/kvm_exit'}, 'the fast path'),
              'wake': ({'tp_btf/kvm_exit'}, 'the fast path'),
              'wake-base': ({'tp_btf/kvm_exit'}, 'the fast path'),
              'late': ({'tp_btf/kvm_exit'}, 'the fast path once exits began'),
              'classic': ({'kvm:kvm_exit'}, 'the classic tracepoints'),
              'classic-base': ({'kvm:kvm_exit'}, 'the classic tracepoints')}
for c, (want, what) in want_hooks.items():
    if c in o and hooks[c] != want:
        print(f"the {c} case did not run {what} in every round: " + ",".join(hooks[c]))
        ok = False
for c, prefix in (('empty', 'fast,'), ('timing', 'fast,'), ('empty-classic', 'classic,'),
                  ('empty-wake', 'fast,')):
    if c in o and (len(hooks[c]) != 1 or not next(iter(hooks[c])).startswith(prefix)):
        print(f"the {c} programs were not on the hooks asked in every round: " +
              ",".join(hooks[c]))
        ok = False
def ratio(a, b):
    if a not in o or b not in o or o[a] <= 0 or o[b] <= 0:
        return float('nan')
    return o[a] / o[b]
def verdict(r, target):
    return 'met' if r == r and r <= target else 'NOT met'
print("overheads over alone, from the least times, ns per exit: " +
      ", ".join(f"{c} {o[c]:.0f}" for c in need[1:]))
# The floor: what any BPF program on these hooks costs (dispatch, a cold program), the same
# programs vmexit attaches, empty. Targets for the VMX bed: issue 33's for the fast path (3.5x:
# issue 18's 1.5x is below what the clock and one task-storage lookup cost, docs/design.md),
# issue 18's for the rest. The classic path's own floor (empty-classic) also pays the trace
# record its tracepoints build.
lines = [('fast', 'empty', 'vmexit(fast)/empty programs', 3.5),
         # timing: a clock read at both ends and the start per CPU, summed, and nothing else:
         # what any program timing the exits costs before it counts anything.
         ('timing', 'empty', 'timing alone/empty programs', None),
         ('fast', 'timing', 'vmexit(fast)/timing alone', None),
         # The fast path with every exit ended through task storage, no per-CPU slot.
         ('fast-task', 'empty', 'vmexit(fast, no per-CPU slot)/empty programs', None),
         ('fast', 'fast-task', 'fast/fast without the per-CPU slot', None),
         # --base: the baseline build's plain stat in the same boot.
         ('fast-base', 'empty', 'vmexit(fast, baseline build)/empty programs', None),
         ('fast', 'fast-base', 'fast/fast of the baseline build', None),
         ('classic', 'empty', 'vmexit(classic)/empty programs', 2.5),
         ('classic', 'classic-base', 'classic/classic of the baseline build', None),
         ('classic', 'empty-classic', 'vmexit(classic)/empty classic programs', None),
         ('empty-classic', 'empty', 'empty classic/empty programs', None),
         ('bpftrace', 'empty', 'bpftrace/empty programs', None),
         ('fast', 'bpftrace', 'vmexit(fast)/bpftrace', 0.5),
         ('classic', 'bpftrace', 'vmexit(classic)/bpftrace', None),
         ('fast', 'classic', 'fast/classic', 1.0),
         # What asking "which device" / "which guest code" adds to plain stat: keys take the
         # fast path (on VMX the vectors from KVM's cache, bpf/vmx_vector.bpf.h); RIPs on VMX
         # ride the classic tracepoint, so classic is their peer there.
         ('keys', 'fast', 'stat --by key/stat', 1.3),
         ('keys', 'classic', 'stat --by key/stat (classic)', None),
         ('keys', 'keys-base', 'stat --by key/stat --by key of the baseline build', None),
         ('keys-base', 'fast-base', 'stat --by key/stat, both of the baseline build', None),
         ('rip', 'fast', 'stat --by rip/stat', None),
         ('rip', 'classic', 'stat --by rip/stat (classic)', None),
         # Started before the VMs (issue 33): the fast path once they run, as if started beside one.
         ('late', 'fast', 'stat started idle/stat started beside a VM', None)]
if wake:
    # Per delivery: what --wake adds to plain stat, against what its hooks cost empty and what
    # bpftrace's pairing costs alone (issue 31's targets).
    per = lambda a, b: (low[a] - low[b]) / timer if a in low and b in low else float('nan')
    dw, de, db = per('wake', 'fast'), per('empty-wake', 'empty'), per('bpftrace-wake', 'alone')
    print(f"per delivery, ns over its peer: stat --wake over stat {dw:.0f}, empty wake hooks "
          f"over empty exit hooks {de:.0f}, bpftrace's pairing over alone {db:.0f}")
    lines = [(dw, de, 'stat --wake/empty wake programs, per delivery', 2.0),
             (dw, db, 'stat --wake/bpftrace pairing, per delivery', 0.5)]
    if 'wake-base' in low:
        bw = per('wake-base', 'fast')
        print(f"per delivery, the baseline's stat --wake over stat {bw:.0f} (this build's "
              f"{dw:.0f}: {dw / bw if bw > 0 else float('nan'):.2f}x)")
        lines += [(bw, de, 'baseline stat --wake/empty wake programs, per delivery', 2.0),
                  (bw, db, 'baseline stat --wake/bpftrace pairing, per delivery', 0.5)]
    for a, b, what, target in lines:
        r = a / b if a == a and b == b and a > 0 and b > 0 else float('nan')
        # Three decimals: at two, 0.504 reads 0.50 beside "NOT met".
        print(f"{what}: {r:.3f}   target <= {target}: {verdict(r, target)}")
    lines = []
for a, b, what, target in lines:
    if a in o and b in o:
        r = ratio(a, b)
        print(f"{what} overhead: {r:.2f}" +
              (f"   target <= {target}: {verdict(r, target)}" if target else ""))
# The per-program step: each program's growth in run_cnt and run_time_ns over one timed guest
# (bpftool names a program by its first 15 characters).
import json
snaps, stat_ns = {}, {}
for line in open(path):
    f = line.split(' ', 3)
    if f[0] == 'PROGS' and len(f) == 4:
        try:
            snaps.setdefault(f[1], {})[f[2]] = json.loads(f[3])
        except ValueError:
            print(f"per program, {f[1]}: bpftool's {f[2]} output is not JSON: {f[3][:200]}")
    elif f[0] == 'PROGS-NS' and len(f) >= 3:
        stat_ns[f[1]] = int(f[2])
unit, per_what = (timer, 'delivery') if wake else (exits, 'exit')
for c in [c for c in order if c in snaps]:
    s = snaps[c]
    if 'before' not in s or 'after' not in s:
        print(f"per program, {c}: no bpftool snapshot around the guest")
        ok = False
        continue
    before = {p['id']: p for p in s['before']}
    rows = []
    for p in s['after']:
        b = before.get(p['id'], {})
        runs = p.get('run_cnt', 0) - b.get('run_cnt', 0)
        ns_ = p.get('run_time_ns', 0) - b.get('run_time_ns', 0)
        if runs > 0:
            rows.append((ns_, runs, p.get('name', '?')))
    if not rows:
        print(f"per program, {c}: no program ran during the guest (bpf_stats not on?)")
        ok = False
        continue
    rows.sort(reverse=True)
    g = stat_ns.get(c, 0)
    print(f"per program, {c} (one guest of {g / 1e6:.2f} ms with the statistics on; "
          f"per {per_what}: over {unit}):")
    print(f"  {'program':16} {'runs':>7} {'per ' + per_what:>12} {'ns/run':>7} "
          f"{'ns per ' + per_what:>15}")
    for ns_, runs, name in rows:
        print(f"  {name:16} {runs:7} {runs / unit:12.2f} {ns_ / runs:7.0f} {ns_ / unit:15.0f}")
    tot_ns, tot_runs = sum(r[0] for r in rows), sum(r[1] for r in rows)
    print(f"  {'all':16} {tot_runs:7} {tot_runs / unit:12.2f} {tot_ns / tot_runs:7.0f} "
          f"{tot_ns / unit:15.0f}")
if any(o[c] <= 0 for c in need[1:]):
    print("note: an overhead at or below zero: the bed's noise exceeds what is measured; "
          "more rounds or exits (--rounds, --cpuid)")
sys.exit(0 if ok else 1)
PY
