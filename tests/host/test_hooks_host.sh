#!/bin/bash
# Real kernel, this host: vmexit must not tax the whole host. Where the kernel offers a KVM hook
# for the start of KVM_RUN (a trampoline, or the kvm_fpu tracepoint on x86), no syscall
# tracepoint may be attached; -v says which hook ends a userspace exit, and it is the one the
# kernel shows attached to vmexit's process.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd bpftool bpftool
need_cmd python3 python3
TMP=$(mktemp -d)
VMEXIT=$OUT/vmexit
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$TMP"' EXIT

"$VMEXIT" stat -v 3600 >/dev/null 2>"$TMP/err" &
pid=$!
stat_pid=$pid
wait_said "$TMP/err" "Hit Ctrl-C" $pid
grep -q "Hit Ctrl-C" "$TMP/err" || { grep -v '^libbpf' "$TMP/err"; fail "vmexit stat did not start"; }
bpftool perf show -j >"$TMP/perf.json" || fail "bpftool perf show failed"
bpftool link show -j >"$TMP/link.json" || fail "bpftool link show failed"
# The links this vmexit holds: others on the host (a `vmexit serve` unit) are not ours to judge.
held_links=$(for f in /proc/$pid/fdinfo/*; do sed -n 's/^link_id:[[:space:]]*//p' "$f"; done |
	tr '\n' ' ')
kill -INT $pid
wait $pid || fail "vmexit stat exited with $?"
pid=
hook=$(sed -n 's/^vmexit: hooks: KVM_RUN \([^ ]*\).*/\1/p' "$TMP/err")
echo "KVM_RUN hook: $(grep '^vmexit: hooks: KVM_RUN' "$TMP/err")"
[ -n "$hook" ] || fail "-v does not say which hook ends a userspace exit"
# Only x86's KVM_RUN fires kvm_fpu (other architectures list it in tracefs all the same).
kvm_fpu=0
case $(uname -m) in x86_64|i?86) [ -d /sys/kernel/tracing/events/kvm/kvm_fpu ] && kvm_fpu=1 ;; esac

python3 - "$TMP/perf.json" "$TMP/link.json" "$hook" $kvm_fpu \
	"$(sed -n 's/^vmexit: hooks: KVM_RUN [^ ]* (\(.*\))$/\1/p' "$TMP/err")" $stat_pid \
	"$held_links" <<'PY'
import json, sys
perf, links, hook, kvm_fpu, note, pid, held = sys.argv[1:8]
perf = json.load(open(perf))
# Every tracepoint this test's vmexit attached (its pid: other processes on the host, another
# vmexit among them, are not its doing), classic or BTF-enabled (bpftool says raw_tracepoint),
# must not include a syscall.
tps = {p.get("tracepoint") for p in perf
       if p.get("fd_type") in ("tracepoint", "raw_tracepoint") and p.get("pid") == int(pid)}
if not tps:
    print(f"no tracepoint attached by vmexit stat (pid {pid}) in bpftool perf show: FAILED")
    sys.exit(1)
bad = []
def check(what, ok):
    print(f"{what}: {'ok' if ok else 'FAILED'}")
    if not ok:
        bad.append(what)
sys_tps = [t for t in tps if t and t.startswith("sys_enter_ioctl")]
if int(kvm_fpu) or hook.startswith("fentry"):
    check(f"a KVM hook exists: the hook is not the syscall tracepoint ({hook})",
          hook != "syscalls:sys_enter_ioctl")
    check(f"no sys_enter_ioctl tracepoint attached (attached: {sorted(t for t in tps if t)})",
          not sys_tps)
if hook in ("kvm:kvm_fpu", "tp_btf/kvm_fpu"):
    check("kvm_fpu is attached", "kvm_fpu" in tps)
    # kvm_fpu is only second best: the note must say why the trampoline was not taken.
    check(f"-v says why fentry was not used ({note})", note.startswith("fentry refused"))
if hook.startswith("fentry"):
    ls = [l for l in json.load(open(links)) if str(l.get("id")) in held.split()]
    check("a tracing link on kvm_arch_vcpu_ioctl_run, held by vmexit stat",
          any(l.get("type") == "tracing" for l in ls))
sys.exit(1 if bad else 0)
PY
rc=$?
[ $rc -eq 0 ] || fail "hooks"

# -v says when the start-up check's programs (the check pair and the kvm_exit watch, attached
# before tracing began) are gone: benches time exits from then on (bench/bed_overhead.sh). By
# then the process holds none of them, and still holds its own. On a host whose start-up saw
# too few exits (this one: no VM, or a KVM without kvm_exit) -v says instead that the check is
# kept until exits begin (src/kernel/fast_switch.h): the process then holds the check, the
# watch and the fast pair's programs, loaded for the switch.
held_progs() {	# held_progs ERRFILE [VAR=VALUE...]: stat -v's programs once started, in $progs
	local err=$1
	shift
	env "$@" "$VMEXIT" stat -v 3600 >/dev/null 2>"$err" &
	pid=$!
	wait_said "$err" "start-up check \(detached\|kept until exits begin\)" $pid ||
		{ grep -v '^libbpf' "$err"; fail "-v does not say what became of the start-up check"; }
	progs=
	for f in /proc/$pid/fdinfo/*; do
		id=$(sed -n 's/^prog_id:\s*//p' "$f" 2>/dev/null)
		[ -n "$id" ] &&
			progs="$progs $(bpftool prog show id "$id" | sed -n 's/.* name \([^ ]*\) .*/\1/p')"
	done
	kill -INT $pid
	wait $pid || fail "vmexit stat exited with $?"
	pid=
}
# The raw kvm_exit's program is the one of this kernel (kvm_exit_direct where vmlinux's BTF has
# bpf_rdonly_cast, kvm_exit_fast before 6.2), never both; -v says how it reads the vCPU when it
# runs. VMEXIT_TEST_HOOKS=no-direct takes kvm_exit_fast on any kernel.
raw_prog_check() {	# raw_prog_check WANT ERRFILE
	local other=kvm_exit_direct
	[ "$1" = kvm_exit_direct ] && other=kvm_exit_fast
	case " $progs " in *" $other "*) fail "$other held where $1 is this run's:$progs" ;; esac
	# Kept for a switch once exits begin, or running: the program is held either way.
	if grep -q "start-up check kept until exits begin" "$2"; then
		case " $progs " in *" $1 "*) ;; *) fail "the check is kept without $1:$progs" ;; esac
	fi
	if grep -q "hooks: kvm_exit tp_btf/kvm_exit" "$2"; then
		case " $progs " in *" $1 "*) ;; *) fail "the fast path runs without $1:$progs" ;; esac
		grep -q "hooks: kvm_exit reads its vCPU .*($1)" "$2" ||
			fail "-v does not say the fast path reads the vCPU through $1"
	fi
	echo "ok: the raw kvm_exit's program is $1 (not $other)"
}
held_progs "$TMP/nd.err" VMEXIT_TEST_HOOKS=no-direct
raw_prog_check kvm_exit_fast "$TMP/nd.err"
held_progs "$TMP/det.err"
raw_prog_check "$(exit_fast_prog)" "$TMP/det.err"
det_progs=$progs
# A refused program (VMEXIT_TEST_REFUSE has the kernel refuse it) takes down what depends on it
# and nothing else: libbpf names it (session.c's refused_prog), where the programs' fds cannot.
if [ "$(exit_fast_prog)" = kvm_exit_direct ]; then
	held_progs "$TMP/rd.err" VMEXIT_TEST_REFUSE=kvm_exit_direct
	grep -q "warning: kvm_exit_direct does not load .*(kvm_exit_fast)" "$TMP/rd.err" ||
		fail "kvm_exit_direct refused: no warning that the helper calls' kvm_exit_fast follows"
	raw_prog_check kvm_exit_fast "$TMP/rd.err"
else
	echo "kvm_exit_direct refused: not here (this kernel takes kvm_exit_fast)"
fi
held_progs "$TMP/re.err" VMEXIT_TEST_REFUSE=kvm_entry_fast
grep -q "hooks: kvm_exit kvm:kvm_exit, kvm_entry kvm:kvm_entry (the fast path does not load" \
	"$TMP/re.err" || fail "kvm_entry_fast refused: the classic pair is not said to be used"
case " $progs " in *" kvm_exit_fast "*|*" kvm_exit_direct "*|*" kvm_entry_fast "*)
	fail "kvm_entry_fast refused, yet a fast program is held:$progs" ;;
esac
echo "ok: kvm_entry_fast refused: the classic pair alone"
# kvm_run's keys (stat --by key where kvm_exit is not to come: -v says so) refused: the key
# programs take over, the fast path stays.
"$VMEXIT" stat --by key -v 0.1 1 >/dev/null 2>"$TMP/rk0.err" ||
	fail "vmexit stat --by key exited with $?"
if grep -q "hooks: keys of exits to the VMM from kvm_run" "$TMP/rk0.err"; then
	VMEXIT_TEST_REFUSE=kvm_run_fpu_keyed "$VMEXIT" stat --by key -v 0.1 1 >/dev/null \
		2>"$TMP/rk.err" || fail "vmexit stat --by key (kvm_run's keys refused) exited with $?"
	grep -q "warning: keys from kvm_run do not load" "$TMP/rk.err" ||
		fail "kvm_run_fpu_keyed refused: no warning that the key programs take over"
	if grep -q "does not load" <(grep -v "keys from kvm_run do not load" "$TMP/rk.err"); then
		grep "does not load" "$TMP/rk.err"
		fail "kvm_run_fpu_keyed refused: the fast path was blamed too"
	fi
	echo "ok: kvm_run_fpu_keyed refused: the key programs, the fast path untouched"
else
	echo "kvm_run_fpu_keyed refused: not here (keys come from the key programs on this host)"
fi
progs=$det_progs
said=$(grep 'start-up check' "$TMP/det.err")
echo "$said; programs held then:$progs"
# A userspace exit on the BTF-enabled tracepoint wherever the kernel's BTF describes it (kvm's
# module BTF, or vmlinux's with KVM built in): no perf record, no grace period at detach.
user_want="kvm:kvm_userspace_exit kvm_userspace_exit"
kvm_tp_btf kvm_userspace_exit && user_want="tp_btf/kvm_userspace_exit kvm_userspace_exit_btf"
user_said=$(sed -n 's/^vmexit: hooks: userspace exit //p' "$TMP/det.err")
[ "$user_said" = "${user_want% *}" ] ||
	fail "-v says userspace exits on '$user_said', the kernel's BTF offers ${user_want% *}"
case " $progs " in *" ${user_want#* } "*) ;; *) fail "no ${user_want#* } among$progs" ;; esac
echo "ok: userspace exits on $user_said"
case "$said" in
*detached*)
	case " $progs " in *" check_"*|*" watch_exit "*)
		fail "the start-up check's programs are still held when -v says they are detached" ;;
	esac ;;
*)
	grep -q 'hooks: kvm_exit kvm:kvm_exit.*checked once exits begin' "$TMP/det.err" ||
		fail "-v keeps the check but its hooks line does not say so"
	for p in check_exit_raw watch_exit $(exit_fast_prog) kvm_entry_fast kvm_exit; do
		case " $progs " in *" $p "*) ;; *) fail "the check is kept but $p is not held:$progs" ;; esac
	done
	# Where the kernel's BTF has kvm_entry, the classic kvm_exit's entry is the BTF-enabled
	# one, and the check leaves its classic entry out too: kvm_exit is the one classic
	# tracepoint held (one grace period at the end).
	if kvm_tp_btf kvm_entry; then
		for p in kvm_entry check_entry_classic; do
			case " $progs " in *" $p "*)
				fail "the kernel's BTF has kvm_entry, yet $p (classic) is held:$progs" ;;
			esac
		done
		grep -q "hooks: kvm_exit kvm:kvm_exit, kvm_entry tp_btf/kvm_entry " "$TMP/det.err" ||
			fail "-v does not name the BTF-enabled kvm_entry beside the classic kvm_exit"
		echo "ok: the classic kvm_exit with the BTF-enabled kvm_entry, no classic entry held"
	fi ;;
esac

# The kvm_exit fast path's start-up check must load and attach wherever the kernel's BTF has the
# raw prototype (whether exits then come is up to the host): a program that does not load is a
# failure, not a fallback to hide.
chk "$VMEXIT" stat --json 0.1 1 >"$TMP/json" || fail "vmexit stat --json 0.1 1 exited with $?"
python3 - "$TMP/json" <<'PY' || fail "fast path check"
import json, sys
h = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1].get("hooks", {})
print(f"kvm_exit hook {h.get('kvm_exit')}: {h.get('note')}; check {h.get('fast_path_check')}")
note = h.get("note", "")
ok = not note.startswith("the fast path does not load") and \
    (h.get("fast_path_check") is not None or note.startswith("no known raw kvm_exit prototype"))
print(f"the fast path check loaded and ran: {'ok' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
PY
# --check-hooks asks a question: its verdict (checked, not checked and why, refused and why) is
# said without -v, on one line, whatever the host's exits; the JSON's note is the same verdict.
chk "$VMEXIT" stat --check-hooks --json 0.1 1 >"$TMP/ch.json" 2>"$TMP/ch.err" ||
	fail "vmexit stat --check-hooks exited with $?"
note=$(python3 -c 'import json, sys
print([json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]["hooks"]["note"])' \
	"$TMP/ch.json") || fail "stat --check-hooks --json: no hooks note"
verdict=$(grep "^vmexit: hooks: kvm_exit " "$TMP/ch.err")
if [ -n "$note" ] && [ "${verdict##* (}" = "$note)" ]; then
	echo "ok: --check-hooks without -v: $verdict"
else
	grep -v '^libbpf' "$TMP/ch.err"
	fail "--check-hooks without -v does not print its verdict '$note'"
fi
echo "PASS: test_hooks_host"
