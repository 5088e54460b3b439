#!/bin/bash
# Real kernel, this host: the end of a run that holds classic tracepoints. Their perf events'
# last close waits for the kernel's grace periods, so vmexit gives them to vmexit-release
# (src/kernel/perf_hand_off.h) and exits. What must hold: vmexit printed its table and exited 0;
# vmexit-release holds those perf events and nothing else (not stdout: a pipe's reader has its
# EOF when vmexit exits; no mapping of a BPF map, which would keep the map alive); no program of vmexit's runs through them any more (the programs went
# with vmexit's links); and vmexit-release goes away by itself. VMEXIT_TEST_HOOKS=classic makes
# the run hold classic tracepoints on any host; VMEXIT_TEST_RELEASE_HOLD keeps vmexit-release
# alive long enough to be looked at.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd bpftool bpftool
TMP=$(mktemp -d)
VMEXIT=$OUT/vmexit
pid= cat_pid= rel=
trap 'for p in $pid $cat_pid $rel; do kill $p 2>/dev/null; done; rm -rf "$TMP"' EXIT

perf_fds() {	# perf_fds PID: the fd numbers of PID's perf events, one a line
	local f
	for f in /proc/$1/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = "anon_inode:[perf_event]" ] && echo "${f##*/}"
	done
}
expect() {	# expect WHAT CMD...: CMD must succeed
	local what=$1
	shift
	if "$@"; then echo "$what: ok"; else fail "$what"; fi
}
alive() {	# alive PID: running, not a zombie waiting for its reaper
	local s
	s=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
	[ -n "$s" ] && [ "$s" != Z ]
}

mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/out" &
cat_pid=$!
VMEXIT_TEST_HOOKS=classic VMEXIT_TEST_RELEASE_HOLD=20 "$VMEXIT" stat -v 3600 \
	>"$TMP/fifo" 2>"$TMP/err" &
pid=$!
wait_said "$TMP/err" "Hit Ctrl-C" $pid || { cat "$TMP/err"; fail "vmexit stat did not start"; }
held=$(perf_fds $pid | sort -n | tr '\n' ' ')
n_held=$(echo $held | wc -w)
echo "vmexit (pid $pid) holds $n_held perf events: fds $held"
[ "$n_held" -ge 1 ] || fail "vmexit stat with the classic hooks holds no perf event"
n_maps=$(grep -c 'anon_inode:bpf-map' /proc/$pid/maps)
echo "vmexit maps $n_maps BPF maps"
[ "$n_maps" -ge 1 ] || fail "vmexit stat maps no BPF map: the mappings check below would prove nothing"
# The positive control for the check below: bpftool sees vmexit's programs through them.
bpftool perf show >"$TMP/perf_before" || fail "bpftool perf show failed"
grep -q "^pid $pid .* tracepoint  kvm_exit" "$TMP/perf_before" ||
	{ cat "$TMP/perf_before"; fail "bpftool perf show has no classic kvm_exit of vmexit's"; }

kill -INT $pid
wait $pid
rc=$?
pid=
expect "vmexit stat exits 0 at SIGINT" [ $rc -eq 0 ]
line=$(grep "^vmexit: end: " "$TMP/err")
echo "${line:-(no end line)}"
n_left=$(sed -n 's/^vmexit: end: \([0-9]*\) perf events left to vmexit-release (pid \([0-9]*\)).*/\1/p' \
	<<<"$line")
rel=$(sed -n 's/^vmexit: end: \([0-9]*\) perf events left to vmexit-release (pid \([0-9]*\)).*/\2/p' \
	<<<"$line")
[ -n "$rel" ] && [ "$rel" -gt 0 ] || fail "-v does not say which process closes the perf events"
expect "every perf event vmexit held left to vmexit-release ($n_left of $n_held)" \
	[ "$n_left" = "$n_held" ]
# The pipe's reader ends with vmexit: vmexit-release does not hold stdout.
for _ in $(seq 100); do kill -0 $cat_pid 2>/dev/null || break; sleep 0.1; done
cat_ended=0
kill -0 $cat_pid 2>/dev/null || cat_ended=1
alive "$rel" || fail "vmexit-release (pid $rel) gone before its 20 s hold: nothing could be checked"
expect "stdout's reader had its EOF while vmexit-release lives" [ $cat_ended -eq 1 ]
cat_pid=
expect "vmexit printed its table" grep -qi "exits" "$TMP/out"
expect "vmexit-release is named so" [ "$(cat /proc/$rel/comm)" = vmexit-release ]
rel_fds=$(for f in /proc/$rel/fd/*; do readlink "$f"; done | sort | uniq -c | sed 's/^ *//')
echo "vmexit-release holds: ${rel_fds:-nothing}"
expect "vmexit-release holds the $n_held perf events and nothing else" \
	[ "$rel_fds" = "$n_held anon_inode:[perf_event]" ]
expect "vmexit-release maps none of vmexit's BPF maps" \
	[ "$(grep -c 'anon_inode:bpf-map' /proc/$rel/maps)" = 0 ]
bpftool perf show >"$TMP/perf_after" || fail "bpftool perf show failed"
expect "no BPF program runs through vmexit-release's perf events" \
	[ -z "$(grep "^pid $rel " "$TMP/perf_after")" ]
kill $rel 2>/dev/null
for _ in $(seq 100); do alive "$rel" || break; sleep 0.1; done
alive "$rel" && fail "vmexit-release (pid $rel) lives on after SIGTERM"
rel=

# Without the hold: vmexit-release ends by itself once the kernel's wait is over.
VMEXIT_TEST_HOOKS=classic "$VMEXIT" stat -v 3600 >/dev/null 2>"$TMP/err2" &
pid=$!
wait_said "$TMP/err2" "Hit Ctrl-C" $pid || { cat "$TMP/err2"; fail "vmexit stat did not start"; }
kill -INT $pid
wait $pid
rc=$?
pid=
expect "vmexit stat exits 0 at SIGINT (no hold)" [ $rc -eq 0 ]
rel=$(sed -n 's/^vmexit: end: .*vmexit-release (pid \([0-9]*\)).*/\1/p' "$TMP/err2")
[ -n "$rel" ] || fail "-v does not say which process closes the perf events (no hold)"
for _ in $(seq 100); do alive "$rel" || break; sleep 0.1; done
alive "$rel" && fail "vmexit-release (pid $rel) still there 10 s after vmexit's end"
rel=
echo "PASS"
