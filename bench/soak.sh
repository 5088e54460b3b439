#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Soak (not in make test): vmexit stat and serve run for DURATION seconds (default 1800) while
# VMs of the bundled guest start and stop every couple of seconds, some on a pid that another
# VM just left. Prints, per minute, the RSS of both and the kernel's cell counters; at the end,
# checks that every VM's IO exits (its own tally) are in stat's summary, under its own name, and
# that no exit was lost to full cells.
#
#   bench/soak.sh [DURATION_S] [OUTDIR]     (as root; holds /tmp/vmexit-host.lock throughout)
set -u
DUR=${1:-1800}
OUT=${2:-.output}
V=$OUT/vmexit G=$OUT/vmexit-guest
PORT=$((20000 + $$ % 10000))
CELLS=64	# few: VMs come and go far more often than that, so cells must be reused
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
[ -x "$V" ] && [ -x "$G" ] || { echo "soak: build first (make)"; exit 1; }

"$V" stat --json --max-cells $CELLS 5 >"$tmp/stat.json" 2>"$tmp/stat.err" &
stat=$!
pids+=($stat)
serve=
if "$V" serve --help >/dev/null 2>&1; then
	"$V" serve --listen 127.0.0.1:$PORT --max-cells $CELLS >/dev/null 2>"$tmp/serve.err" &
	serve=$!
	pids+=($serve)
fi
sleep 2
rss() { awk '/^VmRSS/ { print $2 }' /proc/$1/status 2>/dev/null; }
echo "minute  stat_rss_kB  serve_rss_kB  vms_started  vms_on_a_reused_pid"
start=$(date +%s) n=0 reused=0 last_pid= next_min=$((start + 60)) min=0
declare -A seen_pid=()
while [ $(($(date +%s) - start)) -lt "$DUR" ]; do
	# Every 4th VM: ask for the pid the last one had (best effort; the kernel hands out the
	# next free pid after ns_last_pid, and other processes may take it first).
	if [ -n "$last_pid" ] && [ $((n % 4)) = 3 ]; then
		echo $((last_pid - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null
	fi
	"$G" --json --io 200 --vcpus 2 --seconds 1 --name soak$n >"$tmp/g$n.json" 2>/dev/null &
	p=$!
	[ -n "${seen_pid[$p]:-}" ] && reused=$((reused + 1))
	seen_pid[$p]=1
	last_pid=$p
	n=$((n + 1))
	sleep 2
	if [ "$(date +%s)" -ge $next_min ]; then
		min=$((min + 1))
		next_min=$((next_min + 60))
		printf "%6d  %11s  %12s  %11d  %19d\n" $min "$(rss $stat)" "${serve:+$(rss $serve)}" $n $reused
	fi
done
wait_vms() { for j in $(seq 50); do pgrep -f "vmexit-guest --json --io 200" >/dev/null || return; sleep 0.2; done; }
wait_vms
sleep 6	# one more stat interval: the last VMs' cells are read
[ -n "$serve" ] && { curl -s "http://127.0.0.1:$PORT/metrics" >"$tmp/metrics" || echo "soak: scrape failed"; }
kill -INT $stat
wait $stat
printf "end     %11s  %12s  %11d  %19d\n" "-" "-" $n $reused
python3 - "$tmp" $n <<'PY'
import glob, json, os, sys
d, n = sys.argv[1], int(sys.argv[2])
want = {}
for i in range(n):
    try:
        g = json.loads(open(f"{d}/g{i}.json").read().splitlines()[0])
    except (IndexError, ValueError):
        continue		# a VM that could not start (none should)
    want[g["name"]] = sum(v["exits"].get("IO", 0) for v in g["vcpus"])
objs = [json.loads(l) for l in open(f"{d}/stat.json") if l.strip()]
fin = objs[-1]
got = {}
for r in fin["rows"]:
    if r["kind"] == "user" and r["reason_name"] == "IO":
        got[r["guest"]] = got.get(r["guest"], 0) + r["count"]
bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
print(f"{len(want)} VMs ran; stat has {len(got)} guests; lost {fin['lost']}")
print(f"IO exits: the VMs counted {sum(want.values())}, stat {sum(got.values())}")
for k, (g, w) in list(bad.items())[:5]:
    print(f"  {k}: stat {g}, the VM {w}")
ok = not bad and fin["lost"]["cells_full"] == 0 and fin["lost"]["threads_full"] == 0
print("soak:", "counts add up, no cell lost" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
