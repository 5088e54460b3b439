# Shared helpers for the host tests: sourced, not run.
# A skip (exit 77) means this machine cannot run the test (no root, no KVM, no BTF): never a
# missing package, which tools/install-deps.sh installs (need_cmd fails instead).
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
need_cmd() {	# need_cmd CMD PACKAGE
	command -v "$1" >/dev/null || fail "$1 not installed (apt-get install $2; tools/install-deps.sh)"
}
# What every test that loads vmexit's BPF programs and runs the bundled guest needs.
need_kvm_bpf() {
	[ "$(id -u)" = 0 ] || skip "needs root to load BPF programs (run as root)"
	[ -r /sys/kernel/btf/vmlinux ] ||
		skip "kernel has no BTF (/sys/kernel/btf/vmlinux): BPF CO-RE unavailable"
	[ -c /dev/kvm ] || skip "/dev/kvm does not exist: no KVM on this host (load kvm)"
	# In braces: a bare exec with 2>/dev/null would send the rest of the test's stderr there.
	{ exec 9<>/dev/kvm; } 2>/dev/null || skip "/dev/kvm cannot be opened read-write"
	exec 9>&-
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -d /sys/kernel/tracing/events/kvm ] || skip "no kvm tracepoints (load the kvm module)"
}

# The helpers below expect $TMP (a scratch directory) and $VMEXIT (the binary under test).
# chk CMD...: runs CMD with a timeout and keeps a copy of its stderr, which sanitizer_reports
# scans at the end (OUTDIR from `make SAN=1`): a report from a run whose exit status or stderr
# is not otherwise looked at still fails the test.
chk() {
	local e rc
	e=$(mktemp "$TMP/stderr.XXXXXX")
	timeout 120 "$@" 2>"$e"
	rc=$?
	cat "$e" >&2
	cat "$e" >>"$TMP/all-stderr"
	rm -f "$e"
	return $rc
}

# expect_usage WANT CMD ARGS...: CMD ARGS must be refused as a usage error (status 2) with WANT
# in what it says; its output in $TMP/out and $TMP/err.
expect_usage() {
	local want=$1 rc
	shift
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc = 2 ] && grep -q -- "$want" "$TMP/err" ||
		fail "$*: status $rc (want 2), said: $(cat "$TMP/err")"
}

# need_stream ARGS...: can `vmexit stream ARGS -- true` load here? Only vmexit's own "this host
# lacks X" messages skip; a program that fails to load or attach, a crash or a sanitizer report
# fails the test.
need_stream() {
	local probe
	probe=$(chk "$VMEXIT" stream --json "$@" -- true 2>&1 >/dev/null) && return 0
	case $probe in
	*"needs root"*|*"has no BTF"*|*tracefs*|*"no kvm tracepoints"*|*"no kvm_exit"*)
		skip "BPF tracing unavailable on this host: $probe" ;;
	*)
		echo "FAIL: vmexit stream $* -- true: $probe"; exit 1 ;;
	esac
}

# sanitizer_reports: prints the reports chk collected; true when there were some.
sanitizer_reports() {
	grep -E -A12 "runtime error|ERROR: (Address|Leak)Sanitizer" "$TMP/all-stderr" 2>/dev/null
}

# kvm_exit_fires GUEST: true when kvm:kvm_exit fires on this host (hardware KVM, the nested bed),
# false on a software backend. Measured once, with a private tracefs instance (other tracers
# are not disturbed) around a short run of GUEST, not with vmexit: tests derive the kernel rows
# they expect from it (each guest `out` is one kernel IO exit where kvm_exit fires).
kvm_exit_fires() {
	local inst=/sys/kernel/tracing/instances/vmexit-probe-$$ n
	if [ -z "${KVM_EXIT_FIRES:-}" ]; then
		mkdir "$inst" || fail "cannot create the tracefs instance $inst"
		echo 1 >"$inst/events/kvm/kvm_exit/enable"
		"$1" --io 3 >/dev/null 2>&1
		echo 0 >"$inst/events/kvm/kvm_exit/enable"
		n=$(grep -c ' kvm_exit: ' "$inst/trace")
		rmdir "$inst"
		KVM_EXIT_FIRES=0
		[ "$n" -gt 0 ] && KVM_EXIT_FIRES=1
		echo "note: kvm:kvm_exit fires here: $([ $KVM_EXIT_FIRES = 1 ] && echo yes || echo no)"
	fi
	[ "$KVM_EXIT_FIRES" = 1 ]
}

# kvm_tp_btf NAME: whether the kernel's BTF describes the kvm tracepoint NAME's raw form
# (btf_trace_NAME, in kvm's module BTF or vmlinux's with KVM built in): where it does, vmexit
# takes the BTF-enabled tracepoint (tp_btf) rather than the classic one.
kvm_tp_btf() {
	local b
	for b in /sys/kernel/btf/kvm /sys/kernel/btf/vmlinux; do
		[ -e "$b" ] && bpftool btf dump file "$b" 2>/dev/null |
			grep -q "TYPEDEF 'btf_trace_$1'" && return 0
	done
	return 1
}

# The raw kvm_exit program this kernel takes (bpf/vmexit.bpf.c): kvm_exit_direct where vmlinux's
# BTF has the kfunc bpf_rdonly_cast (Linux 6.2), else kvm_exit_fast.
exit_fast_prog() {
	if bpftool btf dump file /sys/kernel/btf/vmlinux 2>/dev/null |
		grep -q "FUNC 'bpf_rdonly_cast'"; then
		echo kvm_exit_direct
	else
		echo kvm_exit_fast
	fi
}

# The kernel exit reasons the bundled guest's instructions cause, as (isa, code) in python
# syntax for the JSON checks: `out` is VMX 30 IO_INSTRUCTION / SVM 0x7b io, `hlt` VMX 12 / SVM
# 0x78.
export PY_KERNEL_REASONS='KIO = {("vmx", 30), ("svm", 0x7b)}; KHLT = {("vmx", 12), ("svm", 0x78)}'

# wait_tracing PID...: waits until each vmexit PID is tracing: it catches SIGTERM from then on
# (sampler_start() installs its handlers once counting starts (session_start_counting());
# live_run() once the programs are attached: an exit made from then on is counted), so a
# slow machine (the nested bed under TCG) is waited for, not guessed at. Fails after 120 s or
# when a PID is gone.
wait_tracing() {
	local p mask i
	for p in "$@"; do
		for i in $(seq 1200); do
			mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$p/status" 2>/dev/null) ||
				fail "vmexit (pid $p) ended before it was tracing"
			[ -n "$mask" ] || fail "vmexit (pid $p) ended before it was tracing"
			(( 16#$mask & 0x4000 )) && break
			sleep 0.1
		done
		(( 16#$mask & 0x4000 )) || fail "vmexit (pid $p) not tracing after 120 s"
	done
}

# wait_line FILE PATTERN PID: waits (up to 60 s: the nested bed is slow) until FILE has a line
# matching PATTERN (grep -E), while PID lives; false if it never came.
wait_line() {
	local i
	for i in $(seq 600); do
		grep -qE "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || break
		sleep 0.1
	done
	grep -qE "$2" "$1" 2>/dev/null
}

# stopped_guest ARGS...: starts vmexit-guest ARGS stopped (SIGSTOP, before its exec: the pid is
# the VMM's), so that tracers attach before its first exit; its pid in $gpid. kill -CONT runs it.
stopped_guest() {
	sh -c 'kill -STOP $$; exec "$@"' sh "$OUT/vmexit-guest" "$@" >/dev/null 2>&1 &
	gpid=$!
	local i
	for i in $(seq 600); do
		[ "$(awk '/^State:/ { print $2 }' "/proc/$gpid/status" 2>/dev/null)" = T ] && return 0
		sleep 0.1
	done
	fail "vmexit-guest $* did not stop before its start"
}

# wait_said FILE PATTERN PID: waits up to 30 s (an ASan build on a loaded host may start that
# slowly) for PID to write PATTERN to FILE (its stderr), less if PID ends first.
wait_said() {
	for _ in $(seq 300); do
		grep -q "$2" "$1" && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# serve_test_init: $TMP, $VMEXIT, and a trap that stops the serve_bg server left running.
serve_test_init() {
	TMP=$(mktemp -d)
	VMEXIT=$OUT/vmexit
	SPID=
	trap '[ -n "$SPID" ] && kill "$SPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT
}
# serve_bg CMD...: runs CMD (vmexit serve --listen 127.0.0.1:0 ..., perhaps under setpriv) in the
# background, its stderr in $TMP/serve.err; sets SPID, and URL once it listens. 1 if it did not
# start.
serve_bg() {
	"$@" 2>"$TMP/serve.err" &
	SPID=$!
	wait_said "$TMP/serve.err" "listening on" $SPID
	URL=$(grep -o 'http://[^ ]*/metrics' "$TMP/serve.err")
}
# signal_ends SIGNAL PID SECONDS WHAT: sends SIGNAL to PID, which must end within SECONDS (else
# fail, naming WHAT); its exit status in $rc.
signal_ends() {
	kill -"$1" "$2"
	for _ in $(seq $(($3 * 10))); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$2" 2>/dev/null && fail "$4 still running $3 s after SIG$1"
	wait "$2"
	rc=$?
}
# ends_within SECONDS PID WHAT ERRFILE: waits for PID (a child) to end; its exit status. Past
# SECONDS it fails, naming WHAT, with ERRFILE and the kernel stack of each of its threads.
ends_within() {
	local t
	for _ in $(seq $(($1 * 10))); do kill -0 "$2" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$2" 2>/dev/null; then
		cat "$4"
		for t in /proc/$2/task/*; do
			echo "--- thread ${t##*/} $(cat "$t/comm" 2>/dev/null):"
			cat "$t/stack" 2>/dev/null
		done
		kill -9 "$2"
		fail "$3 still running after $1 s"
	fi
	wait "$2"
}
# serve_end: SIGTERM to SPID, its stderr kept for sanitizer_reports; its exit status.
serve_end() {
	local rc
	kill -TERM $SPID
	wait $SPID
	rc=$?
	SPID=
	cat "$TMP/serve.err" >>"$TMP/all-stderr"
	return $rc
}

# host_binaries OUTDIR: OUT (made absolute), VMEXIT and GUEST, the binaries under test; fails
# when either is missing.
host_binaries() {
	OUT=$(cd "$1" && pwd) || fail "no directory $1"
	VMEXIT=$OUT/vmexit
	GUEST=$OUT/vmexit-guest
	[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || fail "no $VMEXIT or $GUEST"
}

# named_guest NAME ERRFILE ARGS...: starts `vmexit-guest --name NAME ARGS` in the background,
# its stderr to ERRFILE, its pid in $gpid, and waits until its command line names it (5 s).
named_guest() {
	local name=$1 err=$2; shift 2
	"$OUT/vmexit-guest" --name "$name" "$@" >/dev/null 2>"$err" &
	gpid=$!
	for _ in $(seq 50); do
		tr '\0' ' ' <"/proc/$gpid/cmdline" 2>/dev/null | grep -q "guest=$name" && break
		sleep 0.1
	done
	kill -0 "$gpid" 2>/dev/null || { cat "$err"; fail "vmexit-guest did not start"; }
}

# guest_test_start OUTDIR: the start of a host test that runs the bundled guest under vmexit:
# root, BTF, KVM and tracefs (or a skip), python3; OUT and VMEXIT; a scratch $TMP removed at
# exit (a test that leaves more behind sets its own trap, with rm -rf "$TMP" in it); kfires=1
# where kvm:kvm_exit fires (hardware KVM: kernel rows expected beside the user ones), else 0.
guest_test_start() {
	OUT=$1
	VMEXIT=$OUT/vmexit
	need_kvm_bpf
	need_cmd python3 python3
	TMP=$(mktemp -d)
	trap 'rm -rf "$TMP"' EXIT
	kfires=0
	kvm_exit_fires "$OUT/vmexit-guest" && kfires=1
}

# stream_test_start NAME: the start of a host test of stream that reports every mismatch: needs
# $OUT/vmexit and $OUT/vmexit-guest (host_binaries), KVM and BPF, python3 and a guest
# that runs; pass/fail print and count in $fails; a scratch $TMP, removed at exit.
stream_test_start() {
	host_binaries "$OUT"
	need_kvm_bpf
	need_cmd python3 python3
	TMP=$(mktemp -d "/tmp/vmexit-test-$1.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
	chmod 755 "$TMP"
	need_stream
	# need_kvm_bpf showed /dev/kvm opens: a guest that cannot run now is a failure.
	"$GUEST" --io 1 >/dev/null 2>&1 || fail "$GUEST --io 1 failed although /dev/kvm opens"
	fails=0
	pass() { echo "ok: $*"; }
	fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
}

# capture_test_start NAME OUTDIR: a test of another tool's captures (trace-cmd, perf) of the
# bundled guest: root, KVM and trace-cmd; $TMP a scratch directory, $INST / $ITD the name and
# directory of a private tracefs instance, both removed at exit.
capture_test_start() {
	host_binaries "$2"
	need_kvm_bpf
	need_cmd trace-cmd trace-cmd
	TMP=$(mktemp -d "/tmp/vmexit-test-$1.XXXXXX")
	INST=vmexit-$1-$$
	ITD=/sys/kernel/tracing/instances/$INST
	trap '[ -d "$ITD" ] && rmdir "$ITD"; rm -rf "$TMP"' EXIT
	chmod 755 "$TMP"
}

# held_map_id PID NAME: the id of the BPF map named NAME that PID holds open (nothing: none).
# One file at a time: busybox awk (the beds') stops at the first file it cannot open, and the
# process opens and closes fds of its own (/proc reads) while the glob is read.
held_map_id() {
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		sed -n 's/^map_id:[[:space:]]*//p' "$f" 2>/dev/null
	done | sort -un | while read -r id; do
		bpftool -j map show id "$id" 2>/dev/null | grep -q "\"name\":\"$2\"" && echo "$id"
	done | head -n 1
}

# held_prog_names PID: the names of the BPF programs PID holds, one a line (the prog_id of each
# program and link fd it has open). A test judges the programs of its own vmexit so: the host
# may run others (the shipped `vmexit serve` unit), with the same program names.
held_prog_names() {
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		sed -n 's/^prog_id:[[:space:]]*//p' "$f" 2>/dev/null
	done | sort -un | while read -r id; do
		bpftool prog show id "$id" 2>/dev/null | sed -n 's/^[0-9]*: [a-z_]* *name \([^ ]*\) .*/\1/p'
	done
}

# wake_untimed_only TEST: for the --wake tests on a KVM that fires no kvm_entry (kvm_exit_fires
# says no: the two come together; the software backend kvm_pvm), where no delivery or halt can be
# timed: what fires there is checked instead, then the test passes with a note. Guest A (timer
# and MSI interrupts on 2 vCPUs: 2 x (30 + 20) it handles and tallies), held until stat --wake
# --json -p, stream --wake --json -p, record --wake -p and serve --wake -p trace it, while guest
# B, not traced, takes interrupts beside it: no delivery row, and "untimed" = the interrupts A
# handled (its own tally), none of B's, in every front end: stat's total, stream's
# wake_untimed events (per vCPU 50, of them 20 from the VMM's MSIs, which KVM notes as such),
# the recording's (report's total and its --events), serve's vmexit_wake_untimed_total; and
# stat's text output says so in its "untimed:" line.
wake_untimed_only() {
	local dir bp ap sp mp rp n want
	dir=$(mktemp -d /tmp/vmexit-test-untimed.XXXXXX)
	"$GUEST" --name untimedB$$ --vcpus 1 --timer 3000 --timer-us 500 >/dev/null 2>&1 &
	bp=$!
	"$GUEST" --name untimedA$$ --vcpus 2 --timer 30 --msi 20 --hold-until "$dir/go" --json \
		>"$dir/guest.out" 2>"$dir/guest.err" &
	ap=$!
	wait_line "$dir/guest.err" "held until" $ap ||
		{ cat "$dir/guest.err"; fail "$1: guest A was never held"; }
	"$VMEXIT" stat --wake --json -p $ap >"$dir/stat.json" 2>"$dir/stat.err" &
	sp=$!
	"$VMEXIT" stream --wake --json -p $ap >"$dir/stream.json" 2>"$dir/stream.err" &
	mp=$!
	"$VMEXIT" record --wake -p $ap -o "$dir/rec.vmexit" 2>"$dir/record.err" &
	rp=$!
	local TMP=$dir SPID URL
	serve_bg "$VMEXIT" serve --wake -p $ap --listen 127.0.0.1:0
	[ -n "$URL" ] || { cat "$dir/serve.err"; fail "$1: serve --wake -p did not start"; }
	wait_tracing $sp $mp $rp $SPID
	touch "$dir/go"
	wait $ap || { cat "$dir/guest.err"; fail "$1: guest A failed"; }
	curl -sf "$URL" >"$dir/metrics" || fail "$1: scraping serve --wake failed"
	kill -INT $sp $mp $rp $SPID
	wait $sp || { cat "$dir/stat.err"; fail "$1: stat --wake -p failed"; }
	wait $mp || { cat "$dir/stream.err"; fail "$1: stream --wake -p failed"; }
	wait $rp || { cat "$dir/record.err"; fail "$1: record --wake -p failed"; }
	wait $SPID || { cat "$dir/serve.err"; fail "$1: serve --wake -p failed"; }
	"$VMEXIT" report -i "$dir/rec.vmexit" --wake --json >"$dir/report.json" 2>"$dir/report.err" ||
		{ cat "$dir/report.err"; fail "$1: report --wake failed"; }
	"$VMEXIT" report -i "$dir/rec.vmexit" --events --json >"$dir/events.json" \
		2>>"$dir/report.err" || { cat "$dir/report.err"; fail "$1: report --events failed"; }
	"$VMEXIT" stat --wake -- "$GUEST" --vcpus 1 --timer 5 >"$dir/text" 2>&1 ||
		{ cat "$dir/text"; fail "$1: stat --wake (text) failed"; }
	wait $bp || fail "$1: the untraced guest B failed"
	read -r n want < <(python3 - "$dir" $ap <<'PY'
import json, os, re, sys
d, ap = sys.argv[1], int(sys.argv[2])
def lines(f):
    return [json.loads(l) for l in open(os.path.join(d, f)) if l.strip()]
g = lines("guest.out")[0]
tally = sum(v["tally"]["irq"] for v in g["vcpus"])
w = [l for l in lines("stat.json") if "wake" in l][0]
assert not w["wake"] and not w["hlt"], "delivery or halt rows without kvm_entry: %s" % w
bad = []
if w["untimed"] != tally:
    bad.append("stat: untimed %d" % w["untimed"])
for f in ("stream.json", "events.json"):
    ev = [e for e in lines(f) if e.get("type") == "wake_untimed"]
    if len(ev) != tally or any(e["pid"] != ap or e["latency_ns"] for e in ev):
        bad.append("%s: %d wake_untimed events, pids %s" % (f, len(ev), sorted({e["pid"] for e in ev})))
    for v in (0, 1):
        mine = [e for e in ev if e["vcpu"] == v]
        msi = [e for e in mine if e["source"] == "msi"]
        if len(mine) != 50 or len(msi) != 20 or any(e["vector"] != 0x41 for e in msi):
            bad.append("%s: vCPU %d: %d events, %d from MSIs" % (f, v, len(mine), len(msi)))
r = [l for l in lines("report.json") if "wake" in l][0]
if r.get("untimed") != tally:
    bad.append("report: untimed %s" % r.get("untimed"))
m = re.search(r"^vmexit_wake_untimed_total (\d+)$", open(os.path.join(d, "metrics")).read(), re.M)
if not m or int(m.group(1)) != tally:
    bad.append("serve: vmexit_wake_untimed_total %s" % (m and m.group(1)))
if bad:
    sys.exit("guest A handled %d interrupts; " % tally + "; ".join(bad))
print(w["untimed"], tally)
PY
) || fail "$1: untimed interrupts (above)"
	[ "$n" = "$want" ] && [ "$want" = 100 ] ||
		fail "$1: untimed $n, guest A handled $want interrupts (want 100: 2 vCPUs x (30 + 20))"
	grep -q "^untimed: 5 interrupts made pending (kvm_apic_accept_irq) for vCPUs never seen" \
		"$dir/text" || { cat "$dir/text"; fail "$1: the text output does not say the 5 untimed"; }
	rm -rf "$dir"
	echo "note: kvm:kvm_entry does not fire here: no delivery can be timed; stat, stream," \
		"record/report and serve --wake counted the $n interrupts guest A handled as untimed," \
		"none of guest B's; the rest of $1 runs where kvm_entry fires (the nested beds:" \
		"tests/vm/test_nested_host.sh)"
	echo "PASS: $1"
	exit 0
}
