#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Soak (not in make test): vmexit stat and serve run for DURATION seconds (default 1800) while
# VMs of the bundled guest start and stop every couple of seconds, some on a pid that another
# VM just left. Both run with the same --keep. Prints, per minute, the RSS of both; at the end,
# checks that the IO exits (its own tally) of every VM that ended less than --keep ago are in
# stat's summary under its own name (a reused pid's VMMs apart) and in serve's last scrape, that
# the older VMs are in neither by name (stat folds them into its (ended) rows, which other VMs
# on the host share: not judged), and that no exit was lost to full cells; and prints how RSS
# grew per minute once the --keep window was full (both forget guests past --keep: neither
# should grow). SCRAPE_S > 0:
# serve is scraped that often throughout, as a Prometheus server does (its upkeep must run
# whatever the scrapes do); failed scrapes are counted.
#
#   bench/soak.sh [DURATION_S] [OUTDIR] [SCRAPE_S]     (as root)
set -u
DUR=${1:-1800}
OUT=${2:-.output}
SCRAPE=${3:-0}
V=$OUT/vmexit G=$OUT/vmexit-guest
PORT=$((20000 + $$ % 10000))
KEEP=120	# stat's and serve's --keep (s): short, so that most of the run is past it
PFX=soak$$-	# the VMs' names: this run's own, beside any other run's
CELLS=64	# few: VMs come and go far more often than that, so cells must be reused
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
[ -x "$V" ] && [ -x "$G" ] || { echo "soak: build first (make)"; exit 1; }

"$V" stat --json --max-cells $CELLS --keep ${KEEP}s 5 >"$tmp/stat.json" 2>"$tmp/stat.err" &
stat=$!
pids+=($stat)
serve=
if "$V" serve --help >/dev/null 2>&1; then
	"$V" serve --listen 127.0.0.1:$PORT --max-cells $CELLS --keep ${KEEP}s >/dev/null 2>"$tmp/serve.err" &
	serve=$!
	pids+=($serve)
fi
sleep 2
if [ -n "$serve" ] && [ "$SCRAPE" != 0 ]; then
	while sleep "$SCRAPE"; do
		curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics" ||
			echo x >>"$tmp/scrape_failed"
	done &
	pids+=($!)
	echo "serve scraped every ${SCRAPE} s"
fi
rss() { awk '/^VmRSS/ { print $2 }' /proc/$1/status 2>/dev/null; }
echo "minute  stat_rss_kB  serve_rss_kB  vms_started  vms_on_a_reused_pid"
start=$(date +%s) n=0 reused=0 last_pid= next_min=$((start + 60)) min=0
declare -A seen_pid=()
while [ $(($(date +%s) - start)) -lt "$DUR" ]; do
	printf '%s %(%s)T\n' $n -1 >>"$tmp/started"	# builtins: no fork takes the pid below
	# Every 4th VM: ask for the pid the last one had (best effort; the kernel hands out the
	# next free pid after ns_last_pid, and other processes may take it first).
	if [ -n "$last_pid" ] && [ $((n % 4)) = 3 ]; then
		echo $((last_pid - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null
	fi
	"$G" --json --io 200 --vcpus 2 --seconds 1 --name $PFX$n >"$tmp/g$n.json" 2>/dev/null &
	p=$!
	[ -n "${seen_pid[$p]:-}" ] && reused=$((reused + 1))
	seen_pid[$p]=1
	last_pid=$p
	n=$((n + 1))
	sleep 2
	if [ "$(date +%s)" -ge $next_min ]; then
		min=$((min + 1))
		next_min=$((next_min + 60))
		printf "%6d  %11s  %12s  %11d  %19d\n" $min "$(rss $stat)" "${serve:+$(rss $serve)}" $n $reused |
			tee -a "$tmp/rss"
	fi
done
wait_vms() {
	for j in $(seq 50); do pgrep -f -- "--name $PFX" >/dev/null || return; sleep 0.2; done
}
wait_vms
sleep 6	# one more stat interval: the last VMs' cells are read
[ -n "$serve" ] && { curl -s "http://127.0.0.1:$PORT/metrics" >"$tmp/metrics" || echo "soak: scrape failed"; }
date +%s >"$tmp/scraped"
kill -INT $stat
wait $stat
printf "end     %11s  %12s  %11d  %19d\n" "-" "-" $n $reused
[ "$SCRAPE" != 0 ] && echo "scrapes failed: $(cat "$tmp/scrape_failed" 2>/dev/null | wc -l)"
python3 - "$tmp" $n $KEEP $PFX <<'PY'
import glob, json, os, re, sys
d, n, keep, pfx = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
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
# The VMs that ended less than --keep before the end (stat's summary, serve's last scrape) are
# there by name, exactly; older ones are gone (stat: into its (ended) rows). A VM runs ~1 s
# after its start; 10 s either side of the edge is not judged.
scraped = int(open(f"{d}/scraped").read())
started = {f"{pfx}{l.split()[0]}": int(l.split()[1]) for l in open(f"{d}/started")}
recent = [k for k in want if started[k] > scraped - keep + 10]
old = [k for k in want if started[k] < scraped - keep - 10]
bad = {k: (got.get(k), want[k]) for k in recent if got.get(k) != want[k]}
kept = [k for k in old if k in got]
print(f"{len(want)} VMs ran; stat has {len(got)} guests by name; lost {fin['lost']}")
print(f"stat: {len(recent)} VMs ended within --keep {keep}s, {len(bad)} of them missing or "
      f"wrong; {len(kept)} older ones still by name")
for k, (g, w) in list(bad.items())[:5]:
    print(f"  {k}: stat {g}, the VM {w}")
ok = not bad and not kept and fin["lost"]["cells_full"] == 0 and fin["lost"]["threads_full"] == 0

# serve: the same, from its last scrape.
if os.path.exists(f"{d}/metrics"):
    served = {}
    pat = re.compile(r'^vmexit_exits_total\{guest="([^"]*)",.*kind="user".*reason="IO"\} (\d+)')
    for line in open(f"{d}/metrics"):
        m = pat.match(line)
        if m:
            served[m[1]] = served.get(m[1], 0) + int(m[2])
    missing = [k for k in recent if served.get(k) != want[k]]
    stale = [k for k in old if k in served]
    print(f"serve: {len(served)} guests in the last scrape; {len(recent)} VMs ended within "
          f"--keep {keep}s, {len(missing)} of them missing or wrong; {len(stale)} older ones left")
    for k in missing[:5]:
        print(f"  {k}: serve {served.get(k)}, the VM {want[k]}")
    ok = ok and not missing and not stale

# RSS growth per minute once the --keep window is full (from the minute after it on).
rows = [l.split() for l in open(f"{d}/rss")]
first = keep // 60 + 2
if len(rows) > first + 1:
    a, b = rows[first - 1], rows[-1]
    mins = int(b[0]) - int(a[0])
    for name, col in (("stat", 1), ("serve", 2)):
        if len(a) > col and a[col].isdigit() and b[col].isdigit():
            g = int(b[col]) - int(a[col])
            vms = int(b[3]) - int(a[3])
            print(f"{name} RSS from minute {a[0]} to {b[0]}: {a[col]} -> {b[col]} kB, "
                  f"{g / mins:+.1f} kB/min, {g * 1024 / max(vms, 1):+.0f} bytes per VM started")
print("soak:", "counts add up, no cell lost" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
