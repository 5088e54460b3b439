#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The drill-downs against real kvm:kvm_exit, checked exactly: keys (--by key, record --keys +
# report --by key), guest RIPs (--by rip with the guest's own symbol file) and the exact
# guest-trace merge (report --perfetto --guest-trace). One boot of the nested bed
# (tests/vm/bed.sh); inside it, with tracefs recording the same run:
#
#   "keys":  vmexit stat --json --by key -- vmexit stat --json --by rip --top 1000 (each RIP its
#            own row: the guest's code is under 1 KiB) --guest-symbols ... --
#            vmexit record --keys -o R -- vmexit-guest ARGS
#            tracefs: kvm_exit, kvm_entry and the key events kvm_pio, kvm_mmio, kvm_msr,
#            kvm_cpuid, kvm_hypercall, kvm_page_fault. The three tracers are nested, each
#            attached before its command starts (see test_nested_stream.sh), so all three and
#            tracefs see exactly the same exits. stat runs with VMEXIT_TEST_FAST_PATH_SKEW=1, so
#            that the check refuses the fast path once the guest's exits begin and the classic
#            kvm_exit tracepoint stays (on VMX, --by rip always takes it: src/kernel/session.c
#            classic_needed(); the test checks that it says why).
#   "fast":  stat --json --by key (-- stat --json --by rip on SVM) ... started while a busy VM
#            runs, so that the check judges real exits and chooses the fast path (tp_btf; it
#            compares the RIPs too with --by rip, the interrupt vectors with --by key); the
#            command stops the busy VM, turns tracing on and runs vmexit-guest ARGS. On VMX
#            the vectors (the timer's) come from KVM's cached exit_intr_info
#            (bpf/vmx_vector.bpf.h); --by rip stays classic there (checked in "keys").
#   "merge": vmexit-guest --vcpus 2 --io N --guest-trace-out F --tsc-offset 0x4000000000000
#            --hold-until GO is created first (its TSC offsets written, as a production
#            guest's were long ago), then vmexit record -g gt -o G starts, lets it run and is
#            stopped with SIGINT at its end: record takes the offsets from debugfs. The recording and F go to the host, where
#            report --perfetto (JSON and protobuf) --guest-trace merges them and
#            tests/host/guest_trace_check.py checks that every guest stretch lies between the
#            exit before it and the one after it (as tests/host/test_guest_trace_host.sh does).
#
# Every expectation comes from the guest's arguments (tools/vmexit-guest.c) and from tracefs,
# never from vmexit's output. From tracefs, per thread: each kvm_exit opens an exit (keyed by
# its vector if it is an external interrupt or NMI; SVM's INTR exit has none), the first key
# event before the next kvm_entry keys it (an MMIO access replaces the stage-2 fault that led to
# it), kvm_entry ends it; the last exit of each vCPU (the done port) never ends and is counted
# as vmexit counts it. Per (reason, key) those counts must equal stat's and report's rows; per
# (reason, RIP) of kvm_exit, stat --by rip's rows, named with the symbol at that address. The
# IO, MMIO, MSR, CPUID and hypercall keys the guest makes, and its exits to the VMM per key and
# per RIP (guest_out, guest_in, guest_done, guest_mmio), must also equal its arguments times
# its vCPUs.
#
#   tests/vm/test_nested_drill.sh OUTDIR     (OUTDIR holds vmexit and vmexit-guest)
#
# beds: svm vmx
#
# The bed is VMEXIT_BED (svm, the default, or vmx), the kernel VMEXIT_BED_KERNEL (6.1 or 6.12).
# Exit: 0 pass, 1 fail, 77 skip (the bed cannot run here: bed.sh says why).
# Env: VMEXIT_TEST_KEEP=DIR keeps the bed's output and the decoded files; VMEXIT_BED_LOG=FILE
# keeps the serial log; VMEXIT_BED_TIMEOUT (default 300 s, vmx 1500 s).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TEST=test_nested_drill SVM_TIMEOUT=300 VMX_TIMEOUT=1500
. "$HERE/lib/x86_test.sh"	# OUT, VMEXIT, GUEST, TNAME, fail, skip, TIMEOUT, WORK
command -v protoc >/dev/null || fail "protoc not installed (apt-get install protobuf-compiler; tools/install-deps.sh)"

# Two vCPUs; each key kind a different count, so that a key charged to another is seen. --timer
# (in-kernel APIC: its timer interrupts are the vector keys on VMX) excludes --hlt. Bochs' UART
# carries ~6 KB/s: fewer exits on vmx.
ARGS="--vcpus 2 --io 30 --in 14 --mmio 18 --cpuid 26 --msr 22 --wrmsr 12 --vmcall 10 --timer 8 --touch 6"
N=200
if [ "$BED_NAME" = vmx ]; then
	ARGS="--vcpus 2 --io 15 --in 7 --mmio 9 --cpuid 13 --msr 11 --wrmsr 6 --vmcall 5 --timer 4 --touch 3"
	N=40
fi
ARGS="$ARGS --name drill --json"

"$GUEST" --symbols "$WORK/guest.map" || fail "vmexit-guest --symbols exited with $?"

# ------------------------------------------------------------------ the script run inside the bed
printf "ARGS='%s'\nN=%s\n" "$ARGS" "$N" >"$WORK/inbed.sh"
cat "$HERE/lib/inbed.sh" >>"$WORK/inbed.sh"	# die, send, /tmp/run.sh
cat >>"$WORK/inbed.sh" <<'EOF'
T=/sys/kernel/tracing
[ "$BED_BTF" = 1 ] || die "kernel or kvm module BTF missing in the bed: vmexit cannot load its BPF programs"
PT=120
[ "$BED" = vmx ] && PT=600	# Bochs: seconds per vmexit start
echo 0 >$T/tracing_on
echo 8192 >$T/buffer_size_kb || die "cannot size the trace buffer"
for e in kvm_exit kvm_entry kvm_pio kvm_mmio kvm_msr kvm_cpuid kvm_hypercall kvm_page_fault; do
	echo 1 >$T/events/kvm/$e/enable || die "cannot enable kvm:$e"
done
start() {
	echo "T_PHASE $1"
	rm -f /tmp/*.out /tmp/*.err /tmp/*.rc
	echo >$T/trace
}
# The trace leaves the bed as "TID EVENT: FIELDS" lines (repetitive: gzip shrinks them ~20x),
# after a check that the ring buffer lost nothing.
stop() {
	echo 0 >$T/tracing_on
	echo "T_OVERRUN $(cat $T/per_cpu/cpu*/stats | awk '/^overrun:/{s+=$2} END{print s+0}')"
	sed -n 's/^.*-\([0-9][0-9]*\) *\[[0-9]*\] [^:]*: \(kvm_[a-z_0-9]*\): /\1 \2: /p' $T/trace >/tmp/trace.txt
	send trace /tmp/trace.txt
	for f in /tmp/*.out /tmp/*.err /tmp/*.rc; do
		[ -f "$f" ] && send "$(basename "$f")" "$f"
	done
	return 0
}

start keys
echo 1 >$T/tracing_on
# The classic phase: started on a quiet host, stat would move to the fast path once the
# guest's exits begin (src/kernel/fast_switch.h); the skewed fast path keeps it classic.
VMEXIT_TEST_FAST_PATH_SKEW=1 timeout $PT sh /tmp/run.sh stat /vmexit stat --json --by key -- \
	sh /tmp/run.sh rip /vmexit stat --json --by rip --top 1000 --guest-symbols drill=/guest.map -- \
	sh /tmp/run.sh record /vmexit record --keys -o /tmp/keys.vmexit -- \
	sh /tmp/run.sh guest /vmexit-guest $ARGS
echo "T_RC $?"
stop
send keys.vmexit /tmp/keys.vmexit

start fast
# tracefs' kvm_exit is enabled after vmexit attached: its record's get_exit_info() caches VMX's
# interruption info, and had it run first at every kvm_exit, the fast path would never need its
# late read of the vector (bpf/vmx_vector.bpf.h), which this phase is to check.
echo 0 >$T/events/kvm/kvm_exit/enable
cat >/tmp/guest.sh <<G
echo 1 >$T/events/kvm/kvm_exit/enable
exec sh /tmp/run.sh guest /vmexit-guest $ARGS
G
busy_start
if [ "$BED" = svm ]; then
	timeout $PT sh /tmp/run.sh stat /vmexit stat -v --json --by key -- \
		sh /tmp/run.sh rip /vmexit stat --json --by rip --top 1000 \
		--guest-symbols drill=/guest.map -- sh /tmp/quiet.sh $BUSY sh /tmp/guest.sh
else
	# Bochs: one more load, not two (minutes each); --by rip is classic on VMX.
	timeout $PT sh /tmp/run.sh stat /vmexit stat -v --json --by key -- \
		sh /tmp/quiet.sh $BUSY sh /tmp/guest.sh
fi
echo "T_RC $?"
busy_stop
stop

# The guest is created (vCPUs, TSC offsets written) before record starts, as a production
# guest is: record (-g, no command: it would trace only the command's children) must take
# its offsets from debugfs. Once record traces (it catches SIGINT), the guest runs; at its end
# (run.sh writes guest.rc) record is stopped.
start merge
rm -f /tmp/go
sh /tmp/run.sh guest /vmexit-guest --name gt --vcpus 2 --io $N --guest-trace-out /tmp/g.json \
	--tsc-offset 0x4000000000000 --hold-until /tmp/go &
tracing() {
	m=$(awk '/^SigCgt:/ { print $2 }' /proc/$1/status 2>/dev/null)
	[ -n "$m" ] && [ $((0x$m & 0x4000)) != 0 ]
}
i=0
until grep -q "held until" /tmp/guest.err 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt $((PT * 20)) ] || die "merge: the guest never got held"
	sleep 0.05
done
/vmexit record -g gt -o /tmp/gt.vmexit 2>/tmp/record.err &
RPID=$!
i=0
until tracing $RPID; do
	i=$((i + 1))
	[ $i -lt $((PT * 20)) ] || { touch /tmp/go; die "merge: record never started tracing"; }
	sleep 0.05
done
touch /tmp/go
i=0
until [ -f /tmp/guest.rc ]; do
	i=$((i + 1))
	[ $i -lt $((PT * 20)) ] || break
	sleep 0.05
done
kill -INT $RPID
wait $RPID
echo "T_RC $?"
wait
for f in record.err guest.err guest.rc gt.vmexit g.json; do send $f /tmp/$f; done
exit 0
EOF

# ------------------------------------------------------------------ run the bed
echo "$TNAME: booting the bed"
BED_OPTS=()
[ "$BED_NAME" = svm ] && BED_OPTS=(--smp 1 --mem 1024)
t0=$(date +%s)
set +e
"$HERE/bed.sh" --bed "$BED_NAME" --kernel "$KSERIES" --timeout "$TIMEOUT" "${BED_OPTS[@]}" \
	${VMEXIT_BED_LOG:+--log "$VMEXIT_BED_LOG"} "$WORK/inbed.sh" "$GUEST:/vmexit-guest" \
	"$VMEXIT:/vmexit" "$WORK/guest.map:/guest.map" >"$WORK/bed.out" 2>"$WORK/bed.err"
brc=$?
set -e
echo "$TNAME: the bed took $(($(date +%s) - t0)) s"
[ $brc = 77 ] && skip "the nested bed cannot run here: $(sed -n 's/^bed: SKIP: //p' "$WORK/bed.err" | head -n 1)"
[ $brc = 0 ] || { cat "$WORK/bed.err"; grep -v '^[A-Za-z0-9+/=]*$' "$WORK/bed.out" | tail -n 40;
	fail "the bed failed (exit $brc)"; }

# ------------------------------------------------------------------ the files, decoded
PYTHONPATH="$HERE/lib" python3 - "$WORK" <<'PY' || fail "the bed's output is damaged or incomplete (above)"
import os, sys
import bedout
work = sys.argv[1]
bad = []
def check(ok, msg):
    if not ok:
        print(msg); bad.append(msg)
    return ok
def save(phase, name):
    os.makedirs(f"{work}/{phase}", exist_ok=True)
    return f"{work}/{phase}/{name}"
top, phases, order = bedout.read(f"{work}/bed.out", check, save=save)
# The shell's checks below read each phase's status and overrun as files.
for name, p in phases.items():
    for key in ("rc", "overrun"):
        if key in p:
            open(f"{work}/{name}.{key}", "w").write(f"{p[key]}\n")
sys.exit(1 if bad else 0)
PY

for p in keys merge fast; do
	[ -f "$WORK/$p.rc" ] || fail "phase $p did not run in the bed"
	[ "$(cat "$WORK/$p.rc")" = 0 ] ||
		{ cat "$WORK/$p"/*.err; fail "phase $p: exit status $(cat "$WORK/$p.rc") in the bed"; }
	[ ! -f "$WORK/$p.overrun" ] || [ "$(cat "$WORK/$p.overrun")" = 0 ] ||
		fail "phase $p: the trace buffer overran: tracefs lost events"
done

# Phase "keys": the recording's keys, on the host.
"$VMEXIT" report -i "$WORK/keys/keys.vmexit" --by key --json >"$WORK/keys/report.out" \
	2>"$WORK/keys/report.err" || { cat "$WORK/keys/report.err"; fail "report --by key failed"; }

python3 - "$WORK" "$BED_NAME" "$ARGS" "$TNAME" <<'PY' || fail "drill-downs differ from tracefs (above)"
import json, re, sys
from collections import Counter
work, bed, args, tname = sys.argv[1:5]
A = dict(zip(args.split()[0::2], args.split()[1::2]))
V = int(A["--vcpus"])
n = lambda k: V * int(A[k])
bad = []

def check(what, got, want):
    if got != want:
        bad.append(what)
        print(f"{tname}: {what}: got {got}, expected {want}")

# tracefs, per thread: "TID EVENT: FIELDS".
EXIT = re.compile(r"reason (\S+) rip 0x([0-9a-f]+) info1 \S+ info2 \S+ intr_info 0x([0-9a-f]+)")
KEYS = {
    "kvm_pio": (r"pio_(read|write) at 0x([0-9a-f]+)",
                lambda m: ("port", int(m[2], 16), "in" if m[1] == "read" else "out")),
    "kvm_mmio": (r"mmio (\S+) len \d+ gpa 0x([0-9a-f]+)",
                 lambda m: ("mmio", int(m[2], 16), "write" if m[1] == "write" else "read")),
    "kvm_msr": (r"msr_(read|write) ([0-9a-f]+)", lambda m: ("msr", int(m[2], 16), m[1])),
    "kvm_cpuid": (r"func ([0-9a-f]+)", lambda m: ("cpuid", int(m[1], 16), "")),
    "kvm_hypercall": (r"nr 0x([0-9a-f]+)", lambda m: ("hypercall", int(m[1], 16), "")),
    "kvm_page_fault": (r"address 0x([0-9a-f]+) error_code 0x([0-9a-f]+)",
                       lambda m: ("gpa", int(m[1], 16) & ~0xfff,
                                  "write" if int(m[2], 16) & 2 else "read")),
}

def vector(reason, intr):
    """include/key_rules.h, by the SDM and APM: an interrupt's or NMI's vector, else None."""
    if bed == "svm":
        return 2 if reason == "nmi" else None
    if not intr >> 31:
        return None
    if reason == "EXTERNAL_INTERRUPT" or (reason == "EXCEPTION_NMI" and (intr >> 8) & 7 == 2):
        return intr & 0xff
    return None

def tracefs(phase):
    """Per (reason, key) and per (reason, RIP): the exits tracefs saw; their threads."""
    keys, rips, open_ = Counter(), Counter(), {}
    def close(tid):
        reason, rip, key = open_.pop(tid)
        keys[(reason, key)] += 1
        rips[(reason, rip)] += 1
    for line in open(f"{work}/{phase}/trace"):
        tid, ev, rest = line.split(" ", 2)
        ev = ev.rstrip(":")
        if ev == "kvm_exit":
            if tid in open_:
                bad.append(f"{phase}: thread {tid}: kvm_exit without kvm_entry")
                close(tid)
            m = EXIT.search(rest)
            v = vector(m[1], int(m[3], 16))
            open_[tid] = [m[1], int(m[2], 16), ("vector", v, "") if v is not None else None]
        elif ev == "kvm_entry":
            if tid in open_:
                close(tid)
        elif ev in KEYS and tid in open_:
            m = re.search(KEYS[ev][0], rest)
            k, cur = KEYS[ev][1](m), open_[tid][2]
            if cur is None or (cur[0] == "gpa" and k[0] == "mmio"):
                open_[tid][2] = k
    for tid in list(open_):		# the done exits: never entered again
        close(tid)
    return keys, rips

def rows(phase, name, kind="kernel"):
    last = [json.loads(l) for l in open(f"{work}/{phase}/{name}") if l.startswith('{"interval_s"')]
    if not last:
        bad.append(f"{phase}/{name}: no JSON")
        return [], {}
    return [r for r in last[-1]["rows"] if r["guest"] == "drill" and r["kind"] == kind], last[-1]

def by_key(rs):
    c = Counter()
    for r in rs:
        k = None if r["key_kind"] == "none" else (r["key_kind"], r["key"], r["key_dir"])
        c[(r["reason_name"], k)] += r["count"]
    return c

def diff(a, b):
    return {k: (a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b) if a.get(k, 0) != b.get(k, 0)}

def per_key(c):
    out = Counter()
    for (_, k), v in c.items():
        out[k] += v
    return out

# What the guest does, per its arguments (tools/vmexit-guest.c): guest exits and exits to the VMM.
GUEST_KEYS = {("port", 0xe9, "out"): n("--io"), ("port", 0xe8, "in"): n("--in"),
              ("port", 0xea, "out"): V, ("mmio", 0x10000000, "write"): n("--mmio"),
              ("msr", 0x8b, "read"): n("--msr"), ("msr", 0x8b, "write"): n("--wrmsr"),
              ("cpuid", 0, ""): V * (int(A["--cpuid"]) // 2),
              ("cpuid", 0x80000001, ""): V * ((int(A["--cpuid"]) + 1) // 2),
              ("hypercall", 0x7fff, ""): n("--vmcall")}
USER = {("IO", k): v for k, v in GUEST_KEYS.items() if k[0] == "port"}
USER[("MMIO", ("mmio", 0x10000000, "write"))] = n("--mmio")

def check_keys(phase, what, rs, want):
    got = by_key(rs)
    check(f"{phase}: {what}: exits per (reason, key) != tracefs' {{key: (got, tracefs)}}",
          diff(got, want), {})
    pk = per_key(want)
    check(f"{phase}: tracefs' exits of the guest's keys != its arguments",
          {k: pk.get(k, 0) for k in GUEST_KEYS}, GUEST_KEYS)
    kinds = Counter(k[0] for k in pk.elements() if k)
    print(f"{tname}: {phase}: {what}: {sum(got.values())} exits in {len(got)} (reason, key) "
          f"rows == tracefs; keyed by kind {dict(kinds)}")

def check_user(phase, what, rs):
    got = Counter()
    for r in rs:
        got[(r["reason_name"], (r["key_kind"], r["key"], r["key_dir"]))] += r["count"]
    check(f"{phase}: {what}: exits to the VMM per key != the guest's", dict(got), USER)

# Phase keys: stat --by key (classic), report --by key of record --keys, stat --by rip.
tkeys, trips = tracefs("keys")
rs, st = rows("keys", "stat.out")
check_keys("keys", "stat --by key", rs, tkeys)
check_user("keys", "stat --by key", rows("keys", "stat.out", "user")[0])
h = st.get("hooks", {})
check("keys: stat --by key's kvm_exit hook", h.get("kvm_exit"), "kvm:kvm_exit")
print(f"{tname}: keys: stat's hooks: {h.get('kvm_exit')} ({h.get('note')})")
rep = rows("keys", "report.out")[0]
check_keys("keys", "report --by key of record --keys", rep, tkeys)
check_user("keys", "report --by key", rows("keys", "report.out", "user")[0])
if bed == "vmx":
    check("keys: vector keys on VMX (the timer's)", any(k and k[0] == "vector" for _, k in tkeys), True)

sym = {int(l.split()[0], 16): l.split()[2] for l in open(f"{work}/guest.map")}
def name_of(rip):
    """The label at or below rip, plus the offset (src/lib/symbol_map.c; guest code is < 1 MiB)."""
    below = [a for a in sym if a <= rip]
    if not below or rip - max(below) >= 1 << 20:
        return hex(rip)
    a = max(below)
    return sym[a] if a == rip else f"{sym[a]}+{rip - a:#x}"
rr, st = rows("keys", "rip.out")
check("keys: stat --by rip's kvm_exit hook", st.get("hooks", {}).get("kvm_exit"), "kvm:kvm_exit")
if bed == "vmx":
    check("keys: why --by rip is classic on VMX", st.get("hooks", {}).get("note"),
          "--by rip on VMX needs the classic record's RIP: KVM reads it lazily (a VMREAD) and "
          "has it cached at kvm_exit for no exit reason")
got = Counter()
for r in rr:
    check(f"keys: rip {r['rip']}: symbol", r["symbol"], name_of(int(r["rip"], 16)) if r["rip"] else None)
    got[(r["reason_name"], int(r["rip"], 16) if r["rip"] else None)] += r["count"]
check("keys: stat --by rip: exits per (reason, RIP) != tracefs' kvm_exit rip {key: (got, tracefs)}",
      diff(got, trips), {})
addr = {s: a for a, s in sym.items()}
R = {"svm": dict(io="io", cpuid="cpuid", msr="msr", vmcall="hypercall"),
     "vmx": dict(io="IO_INSTRUCTION", cpuid="CPUID", msr="MSR_READ", wrmsr="MSR_WRITE",
                 vmcall="VMCALL")}[bed]
named = {("guest_out", R["io"]): n("--io"), ("guest_in", R["io"]): n("--in"),
         ("guest_done", R["io"]): V, ("guest_cpuid", R["cpuid"]): n("--cpuid"),
         ("guest_rdmsr", R["msr"]): n("--msr"), ("guest_wrmsr", R.get("wrmsr", R["msr"])): n("--wrmsr"),
         ("guest_vmcall", R["vmcall"]): n("--vmcall")}
check("keys: stat --by rip at the guest's labels != its arguments",
      {k: got.get((k[1], addr[k[0]]), 0) for k in named}, named)
ur = Counter()
for r in rows("keys", "rip.out", "user")[0]:
    ur[(r["reason_name"], r["symbol"])] += r["count"]
check("keys: stat --by rip: exits to the VMM per RIP != the guest's", dict(ur),
      {("IO", "guest_out"): n("--io"), ("IO", "guest_in"): n("--in"), ("IO", "guest_done"): V,
       ("MMIO", "guest_mmio"): n("--mmio")})
print(f"{tname}: keys: stat --by rip: {sum(got.values())} exits at {len(set(k[1] for k in got))} "
      f"RIPs == tracefs' kvm_exit rip; at the labels {named}")

fkeys, frips = tracefs("fast")
rs, st = rows("fast", "stat.out")
h = st.get("hooks", {})
check("fast: the fast path chosen with a VM running", (h.get("kvm_exit"), h.get("kvm_entry")),
      ("tp_btf/kvm_exit", "tp_btf/kvm_entry"))
check_keys("fast", "stat --by key (fast path)", rs, fkeys)
check_user("fast", "stat --by key (fast path)", rows("fast", "stat.out", "user")[0])
check("fast: stat --by key: interrupt vectors unread (lost key_vector)",
      st.get("lost", {}).get("key_vector"), 0)
if bed == "vmx":
    check("fast: vector keys on VMX (the timer's)", any(k and k[0] == "vector" for _, k in fkeys), True)
# The fast path keys CPUID exits by the guest's RAX at kvm_exit, kvm_cpuid's program left out
# (bpf/keys.bpf.h, key_exit_leaf()): the leaves above are its own, not that program's.
check("fast: CPUID leaves from RAX, no program on kvm_cpuid (stat -v)",
      "leaf from the guest's RAX at kvm_exit (no program on kvm_cpuid)" in
      open(f"{work}/fast/stat.err").read(), True)
print(f"{tname}: fast: stat --by key on the fast path ({h.get('note')})")
if bed == "svm":
    # --by rip on SVM reads the RIP from the VMCB (bpf/exit_read.bpf.h): the fast path too.
    rr, st = rows("fast", "rip.out")
    h = st.get("hooks", {})
    check("fast: stat --by rip on the fast path", (h.get("kvm_exit"), h.get("kvm_entry")),
          ("tp_btf/kvm_exit", "tp_btf/kvm_entry"))
    got = Counter()
    for r in rr:
        got[(r["reason_name"], int(r["rip"], 16) if r["rip"] else None)] += r["count"]
    check("fast: stat --by rip (fast path): exits per (reason, RIP) != tracefs' kvm_exit rip "
          "{key: (got, tracefs)}", diff(got, frips), {})
    print(f"{tname}: fast: stat --by rip: {sum(got.values())} exits at {len(set(k[1] for k in got))} "
          f"RIPs == tracefs' kvm_exit rip ({h.get('note')})")
sys.exit(1 if bad else 0)
PY

# Phase "merge": the exact guest-trace merge of a guest that ran before the recording began
# (tests/host/test_guest_trace_host.sh does it on the host): its offsets from debugfs.
M=$WORK/merge
[ "$(cat "$M/guest.rc" 2>/dev/null)" = 0 ] || { cat "$M/guest.err"; fail "merge: the guest failed"; }
applied=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["metadata"]["tsc_offset_applied"])' "$M/g.json")
[ "$applied" = yes ] || fail "merge: the bed's KVM did not apply the TSC offset (tsc_offset_applied: $applied)"
! grep -q "debugfs" "$M/record.err" || { cat "$M/record.err"; fail "merge: record could not read debugfs"; }
python3 "$HERE/../host/guest_trace_check.py" "$VMEXIT" "$M/gt.vmexit" gt="$M/g.json" $N \
	0x4000000000000 "$M" debugfs >"$M/check" || { cat "$M/check"; fail "merge: the merge is not exact (above)"; }
while IFS= read -r l; do echo "$TNAME: merge: $l"; done <"$M/check"
echo "PASS: $TNAME"
