#!/bin/bash
# Real kernel, this host: `vmexit serve -g NAME` follows the name for its whole run, as a
# long-running exporter must. Started before any VMM of that name exists (a note, not an exit),
# it counts each VMM of the name that starts later (a guest restarted under the same name is a
# new process) from its first exit: the kernel counts every VMM and serve exports the named
# ones; another guest running meanwhile is not exported; the ended VMM's series stay for --keep
# with their final counts, as any ended guest's. 20 guests of the name living 50-200 ms each,
# one after another: every exit of each is exported. A -p pid with no process yet is a note
# too. $1: the build directory.
set -u
OUT=${1:-.output}
. "$(dirname "$0")/lib.sh"
need_kvm_bpf
need_cmd curl curl
serve_test_init

NAME=follow-$$ OTHER=other-$$
# serve_start ARGS...: vmexit serve on a free loopback port; sets SPID and URL.
serve_start() {
	serve_bg "$VMEXIT" serve --listen 127.0.0.1:0 "$@"
	cat "$TMP/serve.err"
	[ -n "$URL" ] || fail "vmexit serve $* did not start (see above)"
}
serve_stop() {
	serve_end || fail "vmexit serve exited with $? on SIGTERM"
}
# value FILE SELECTOR: the sample of the one series that matches, else "none".
value() {
	local v
	v=$(grep -F "$2" "$1" | grep -v '^#' | awk '{print $2}')
	echo "${v:-none}"
}

# Each run: one vCPU, two IO exits to the VMM that it holds for 1.5 s each, then the done
# exit: 3 IO exits, all exported. The first begins at once, before serve could have found the
# new process by looking (a pid filter fed by a 0.5 s poll counted 2 of them).
# $2: where its --json line goes (its VM process's pid).
guest() {
	"$OUT/vmexit-guest" --vcpus 1 --io 2 --io-sleep-us 1500000 --name "$1" --json >"$2"
}
vm_pid() { grep -o '"pid":[0-9]*' "$1" | cut -d: -f2; }

serve_start -g "$NAME" --keep 60s
grep -q "note: no running guest named '$NAME' yet" "$TMP/serve.err" ||
	fail "serve -g of a guest not running yet: no note (or it exited)"
kill -0 $SPID 2>/dev/null || fail "serve -g of a guest not running yet exited"

guest "$NAME" "$TMP/run1.json" &
g1=$!
guest "$OTHER" "$TMP/other.json" &
g0=$!
wait $g1 || fail "the first run of the guest failed"
wait $g0 || fail "the other guest failed"
guest "$NAME" "$TMP/run2.json" &
g2=$!
sleep 2
curl -sf "$URL" >"$TMP/during.txt" || fail "scrape during the second run failed"
wait $g2 || fail "the second run of the guest failed"
curl -sf "$URL" >"$TMP/after.txt" || fail "scrape after the second run failed"
grep -E "^vmexit_(exits_total|guests)" "$TMP/after.txt"

p1=$(vm_pid "$TMP/run1.json") p2=$(vm_pid "$TMP/run2.json")
rc=0
for pid in $p1 $p2; do
	got=$(value "$TMP/after.txt" "vmexit_exits_total{guest=\"$NAME\",pid=\"$pid\",kind=\"user\",isa=\"user\",reason=\"IO\"}")
	echo "run pid $pid: IO exits $got, expected 3"
	[ "$got" = 3 ] || rc=1
done
[ $rc = 0 ] || fail "a run of the guest was not followed (above)"
! grep -q "guest=\"$OTHER\"" "$TMP/after.txt" || fail "serve -g $NAME exported another guest"
got=$(value "$TMP/during.txt" "vmexit_guests ")
echo "vmexit_guests during the second run: $got, expected 1 (the first run has ended)"
[ "$got" = 1 ] || fail "vmexit_guests during the second run"
grep -q "pid=\"$p1\"" "$TMP/during.txt" || fail "the ended run's series left before --keep"
serve_stop

# 20 short-lived guests of one name, one after another, each living 50-200 ms (--linger after
# its pass): IO exits to the VMM, IO + 1 (the done exit) each, every one exported.
SHORT=short-$$ IO=150 N=20
serve_start -g "$SHORT" --keep 120s
for i in $(seq $N); do
	"$OUT/vmexit-guest" --vcpus 1 --io $IO --linger "$(printf '0.%03d' $((50 + (i % 4) * 50)))" --name "$SHORT" \
		--json >>"$TMP/short.json" 2>>"$TMP/short.err" || { cat "$TMP/short.err"; fail "short guest $i failed"; }
done
[ "$(wc -l <"$TMP/short.json")" = $N ] || fail "want $N short guests' lines"
sleep 0.5
curl -sf "$URL" >"$TMP/short.txt" || fail "scrape after the short guests failed"
total=0 missed=0
for pid in $(grep -o '"pid":[0-9]*' "$TMP/short.json" | cut -d: -f2); do
	got=$(value "$TMP/short.txt" "vmexit_exits_total{guest=\"$SHORT\",pid=\"$pid\",kind=\"user\",isa=\"user\",reason=\"IO\"}")
	[ "$got" = $((IO + 1)) ] || { echo "short guest pid $pid: IO exits $got, expected $((IO + 1))"; missed=$((missed + 1)); }
	[ "$got" = none ] || total=$((total + got))
done
echo "20 short guests: $total IO exits exported, expected $((N * (IO + 1)))"
[ $missed = 0 ] && [ $total = $((N * (IO + 1))) ] || fail "short-lived guests not counted whole (above)"
serve_stop

# -p of a pid no process has (yet): a note, and serve runs.
pid_max=$(cat /proc/sys/kernel/pid_max)
free=$((pid_max - 1))
while kill -0 $free 2>/dev/null; do free=$((free - 1)); done
serve_start -p $free
grep -q "note: no process with pid $free yet" "$TMP/serve.err" || fail "serve -p $free: no note"
sleep 1
kill -0 $SPID 2>/dev/null || fail "serve -p of a pid not running yet exited"
serve_stop
# ... but one no process can have is a usage error.
out=$("$VMEXIT" serve -p $pid_max --listen 127.0.0.1:0 2>&1); rc=$?
echo "serve -p $pid_max: exit $rc: $out"
[ $rc = 2 ] && [[ $out == *"-p $pid_max: no process can have it"* ]] ||
	fail "serve -p above kernel.pid_max: want exit 2 saying so"
sanitizer_reports && fail "sanitizer reports (above)"
echo "PASS: test_serve_follow_host"
