#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Runs the benchmarks `make bench` built (bench/bench_*.c) and prints their figures; nothing is
# asserted. Builds nothing itself. Usage: bench/run.sh [OUTPUT dir, default .output]
set -u
OUT=${1:-.output}
cd "$(dirname "$0")/.." || exit 1
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: needs root: the benchmarks load BPF programs" >&2
	exit 1
fi
# The figures depend on the host: say which one.
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
echo "host: $(uname -r), $(nproc) CPUs, $cpu, clocksource $cs"
rc=0
found=0
for b in "$OUT"/bench/bench_*; do
	[ -x "$b" ] || continue
	found=1
	echo
	echo "=== $(basename "$b")"
	"$b"
	r=$?
	[ $r -eq 0 ] || { echo "*** $(basename "$b") failed (exit $r)"; rc=1; }
done
[ $found -eq 1 ] || { echo "bench: nothing built in $OUT/bench (run make bench)" >&2; exit 1; }
exit $rc
