#!/bin/bash
# Real kernel, this host: `vmexit serve` under exactly the capabilities the shipped unit
# (contrib/vmexit.service) grants, read from the unit so that the two cannot disagree: the
# kvm_exit fast path loads (serve holds its tp_btf programs) and is chosen where kvm:kvm_exit
# fires (this host's software KVM fires none: the check says "not checked", and so does the
# test); the kernel's BPF run-time statistics are on (vmexit_bpf_run_seconds_total and
# _runs_total counting the bundled guest's exits); serve holds no capability once started.
# Each capability in the unit is needed: without it, serve loses one of those.
# $1: the build directory.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd setpriv util-linux
need_cmd capsh libcap2-bin
need_cmd bpftool bpftool
need_cmd curl curl
UNIT=$(dirname "$0")/../../contrib/vmexit.service
serve_test_init

# --- what the unit grants: its one bounding set, the same ambient set, root's uid, no new
# privileges
unit() { sed -n "s/^$1=//p" "$UNIT"; }
CAPS=$(unit CapabilityBoundingSet)
[ -n "$CAPS" ] || fail "the unit has no CapabilityBoundingSet"
[ "$(unit AmbientCapabilities)" = "$CAPS" ] ||
	fail "the unit's AmbientCapabilities ($(unit AmbientCapabilities)) differ from its bounding set ($CAPS)"
[ -z "$(unit User)" ] || fail "the unit sets User=: this test runs serve as root's uid"
[ "$(unit NoNewPrivileges)" = yes ] || fail "the unit lacks NoNewPrivileges=yes"
# The capabilities this shell may grant: one the unit names that this shell lacks is left out
# (said below), which only makes the runs stricter than the unit's.
GRANT=()
for c in $CAPS; do
	if capsh --has-b="${c,,}" 2>/dev/null; then
		GRANT+=("$c")
	else
		echo "note: this shell lacks $c: serve runs without it (fewer than the unit grants)"
	fi
done
echo "the unit grants: $CAPS; granted here: ${GRANT[*]:-none}"
# The unit's locked-memory limit where this shell may raise it (on kernels since 5.11 BPF
# maps are charged to the memory cgroup instead).
case $(unit LimitMEMLOCK) in
infinity) ulimit -l unlimited 2>/dev/null || echo "note: cannot raise RLIMIT_MEMLOCK here ($(ulimit -l) KB)" ;;
esac

# serve_caps CAP...: serve -v on a free loopback port with root's uid and only these
# capabilities, as systemd starts it (bounding set; root's exec makes them its permitted and
# effective sets); sets SPID and URL, or returns 1 if it did not start.
serve_caps() {
	local keep=-all c
	for c in "$@"; do keep+=",+$(echo "${c#CAP_}" | tr A-Z a-z)"; done
	serve_bg setpriv --bounding-set="$keep" --no-new-privs "$VMEXIT" serve -v \
		--listen 127.0.0.1:0
	grep -v '^libbpf' "$TMP/serve.err" | grep -v '^$' >"$TMP/said"
	[ -n "$URL" ]
}
# degraded: what serve said it lost (the fast path, the run-time statistics), if anything.
degraded() {
	grep -E "fast path does not load|run-time statistics unavailable|cannot load|cannot attach" "$TMP/said"
}

# --- under the unit's capabilities
# Where kvm_exit fires, the fast path is chosen only after exits were read alike at start-up:
# a guest makes them meanwhile.
busy=
if kvm_exit_fires "$OUT/vmexit-guest"; then
	"$OUT/vmexit-guest" --hlt 50 --io 50 --seconds 60 >/dev/null 2>&1 &
	busy=$!
fi
serve_caps "${GRANT[@]}" || { cat "$TMP/said"; fail "serve did not start under the unit's capabilities"; }
[ -n "$busy" ] && { kill "$busy"; wait "$busy" 2>/dev/null; }
cat "$TMP/said"
! degraded >/dev/null || fail "serve runs degraded under the unit's capabilities: $(degraded)"
hooks=$(grep "hooks: kvm_exit" "$TMP/said") || fail "serve -v did not name its kvm_exit hook"
if kvm_exit_fires "$OUT/vmexit-guest"; then
	[[ $hooks == *"kvm_exit tp_btf/kvm_exit"* ]] ||
		fail "kvm_exit fires here but the fast path was not chosen: $hooks"
else
	# The fast path loaded (its failure to load is said above and failed the test); whether it
	# reads the same exits as the classic tracepoint cannot be checked without a kvm_exit.
	[[ $hooks == *"not checked: no kvm_exit"* ]] || fail "unexpected hooks line: $hooks"
	echo "fast path: loaded; chosen: not checked (kvm:kvm_exit does not fire on this host)"
fi
# The fast path's programs are loaded, whichever was chosen: serve holds them (its fds' fdinfo
# names the programs' ids).
held=$(for f in /proc/$SPID/fdinfo/*; do sed -n 's/^prog_id:\t*//p' "$f"; done |
	while read -r id; do bpftool prog show id "$id" | sed -n 's/^[0-9]*: \([a-z_]*\) *name \([a-z_]*\) .*/\1:\2/p'; done)
echo "programs serve holds: $(echo $held)"
for p in tracing:$(exit_fast_prog) tracing:kvm_entry_fast; do
	grep -qx "$p" <<<"$held" || fail "serve does not hold the fast path's ${p#*:} (tp_btf)"
done
caps=$(sed -n 's/^CapEff:\t//p' /proc/$SPID/status)
echo "serve's effective capabilities once started: $caps"
[ "$((16#$caps))" = 0 ] || fail "serve still holds capabilities once started: $(capsh --decode=$caps)"
# The guest's 11 IO exits (10 and the done one) run the userspace exit's program 11 times at
# least (other VMs on the host add theirs): the statistics are on. Its name follows the hook -v
# named: kvm_userspace_exit_btf on the BTF-enabled tracepoint, kvm_userspace_exit on the classic.
uprog=kvm_userspace_exit
grep -q "hooks: userspace exit tp_btf/" "$TMP/said" && uprog=kvm_userspace_exit_btf
"$OUT/vmexit-guest" --io 10 >/dev/null 2>&1 || fail "the bundled guest failed"
curl -sf "$URL" >"$TMP/metrics.txt" || fail "scrape failed"
grep -E '^vmexit_bpf_run' "$TMP/metrics.txt"
runs=$(sed -n "s/^vmexit_bpf_runs_total{program=\"$uprog\"} //p" "$TMP/metrics.txt")
[ -n "$runs" ] && [ "$runs" -ge 11 ] ||
	fail "vmexit_bpf_runs_total{program=\"$uprog\"} is '${runs}', want >= 11"
grep -q "^vmexit_bpf_run_seconds_total{program=\"$uprog\"} " "$TMP/metrics.txt" ||
	fail "no vmexit_bpf_run_seconds_total{program=\"$uprog\"}"
serve_end || fail "serve under the unit's capabilities exited with an error"

# --- each capability is needed: without it serve loses the fast path or the statistics, or
# does not start
for c in "${GRANT[@]}"; do
	less=()
	for d in "${GRANT[@]}"; do [ "$d" = "$c" ] || less+=("$d"); done
	if serve_caps "${less[@]}"; then
		lost=$(degraded)
		serve_end
	else
		lost="does not start: $(tail -1 "$TMP/said")"
		wait $SPID 2>/dev/null
		SPID=
	fi
	echo "without $c: ${lost:-nothing lost}"
	[ -n "$lost" ] || fail "the unit grants $c, which serve does without"
done
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_unit_caps_host"
