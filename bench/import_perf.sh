#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `vmexit report -i perf.data`: the native reader (src/capture/import_perfdata.c) against its peer,
# the perf script path it replaced (VMEXIT_PERF_SCRIPT=1), on one capture of the bundled guest's
# IO exits (`perf record -e 'kvm:*'`), alternating, ROUNDS runs each: wall seconds, records/s,
# the ratio; and whether both printed the same report. Figures are printed, not asserted.
# Usage: bench/import_perf.sh [OUTPUT dir, default .output]; VMEXIT_BENCH_IO=N exits per vCPU
# (default 100000, 2 vCPUs), VMEXIT_BENCH_ROUNDS=N (default 3).
set -u
OUT=${1:-.output}
IO=${VMEXIT_BENCH_IO:-100000}
ROUNDS=${VMEXIT_BENCH_ROUNDS:-3}
command -v perf >/dev/null || { echo "import_perf: perf is not installed (linux-perf)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
perf record -q -e 'kvm:*' -o "$tmp/p.data" -- "$OUT/vmexit-guest" --vcpus 2 --io "$IO" \
	>/dev/null 2>"$tmp/rec.err" || { echo "import_perf: perf record failed: $(tail -n 2 "$tmp/rec.err")"; exit 1; }
recs=$(perf report --stats -i "$tmp/p.data" 2>/dev/null | awk '/SAMPLE events:/ { print $3; exit }')
echo "capture: $(stat -c %s "$tmp/p.data") bytes, ${recs:-?} kvm records ($IO IO exits x 2 vCPUs)"
run() {	# run NAME ENV...: seconds of one report, its output in $tmp/NAME.out
	local name=$1 t0 t1; shift
	t0=$(date +%s.%N)
	env "$@" "$OUT/vmexit" report -i "$tmp/p.data" --by vcpu >"$tmp/$name.out" 2>"$tmp/$name.err" ||
		{ echo "import_perf: $name: report failed: $(tail -n 1 "$tmp/$name.err")"; exit 1; }
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >>"$tmp/$name.times"
}
for ((i = 0; i < ROUNDS; i++)); do
	run native
	run script VMEXIT_PERF_SCRIPT=1
done
median() { sort -g "$tmp/$1.times" | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
n=$(median native)
s=$(median script)
awk -v n="$n" -v s="$s" -v r="${recs:-0}" 'BEGIN {
	printf "native reader   %8.3f s  (%d records/s)\n", n, r / n
	printf "perf script     %8.3f s  (%d records/s)\n", s, r / s
	printf "perf script / native: %.1fx\n", s / n }'
# perf script only hears of lost chunks (perf's warning); the native reader counts the events.
if cmp -s <(grep -v '^LOST' "$tmp/native.out") <(grep -v '^LOST' "$tmp/script.out"); then
	echo "reports: identical rows"
else
	echo "reports: rows DIFFER"; diff "$tmp/script.out" "$tmp/native.out" | head -n 10
fi
grep -h '^LOST' "$tmp/script.out" | sed 's/^/perf script: /'
grep -h '^LOST' "$tmp/native.out" | sed 's/^/native:      /'
