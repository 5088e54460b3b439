#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fixed mutant set of the capture readers (issue 27): seeds made on this host
# (capture_seeds.sh), then the same mutants of each (capture_mutants.py: header bit flips, the
# damaged print format that crashed libtraceevent, cuts, flips anywhere), read once each by the
# sanitizer-built fuzzers (0 crashes: a crash, a sanitizer report or an error that is not one
# line naming the file ends the run non-zero), then a sample through `vmexit report -i` itself
# (SAN build): exit 0, or exit 1 with exactly one line on stderr.
# The seeds are kept in OUTDIR/fuzz/seeds-capture for `make fuzz`.
#
# Usage: tests/fuzz/run-capture_mutants.sh OUTDIR   (OUTDIR/fuzz/fuzz_{tracedat,perfdata} built)
# Exit: 0 pass, 1 fail, 77 skip (no root or tracefs; the reason is printed).
set -u
OUT=$(cd "${1:?usage: $0 OUTDIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
SEEDS=$OUT/fuzz/seeds-capture
PER_FORMAT=${VMEXIT_MUTANTS:-320}
VMEXIT=$OUT/san/vmexit
# libtracecmd's own leaks on damaged files are not vmexit's (libtracecmd.lsan.supp says which).
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/libtracecmd.lsan.supp
for b in fuzz_tracedat fuzz_perfdata; do
	[ -x "$OUT/fuzz/$b" ] || { echo "FAIL: $OUT/fuzz/$b not built (make fuzz-build)"; exit 1; }
done
rm -rf "$SEEDS"
"$here/capture_seeds.sh" "$OUT" "$SEEDS" >"$OUT/fuzz/seeds.log" 2>&1
rc=$?
cat "$OUT/fuzz/seeds.log"
[ $rc = 0 ] || exit $rc
work=$(mktemp -d "${TMPDIR:-/tmp}/capture_mutants.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
# run FUZZER SEED... : the mutants of the seeds (PER_FORMAT in all), each read once.
run() {
	local fuzzer=$1 n=$(( PER_FORMAT / ($# - 1) + 1 )) log="$work/$1.log"
	shift
	for s in "$@"; do
		python3 "$here/capture_mutants.py" "$SEEDS/$s" "$work/$fuzzer/$s" $n || exit 1
	done
	# libFuzzer runs each file named once, the tally at exit; two at a time (each input forks
	# the child that parses the formats: the CPUs, not one, set the pace). -rss_limit_mb=0: no
	# RSS-watching thread, so that fork() copies no allocator lock held by another thread (a
	# forked child once hung for good in ASan's allocator); a mutant is one small file.
	find "$work/$fuzzer" -type f | sort >"$work/$fuzzer.list"
	local files; files=$(wc -l <"$work/$fuzzer.list")
	VMEXIT_FUZZ_TALLY=1 xargs -a "$work/$fuzzer.list" -P 2 -n $(( (files + 1) / 2 )) \
		"$OUT/fuzz/$fuzzer" -rss_limit_mb=0 -timeout=120 -artifact_prefix="$work/" \
		>"$log" 2>&1
	local rc=$?
	# The two tallies, summed: tried, read, refused, left to perf script.
	local t; t=($(sed -n 's/^tally: tried \([0-9]*\), read \([0-9]*\), refused with one line \([0-9]*\), left to perf script \([0-9]*\)$/\1 \2 \3 \4/p' "$log" |
		awk '{ for (i = 1; i <= 4; i++) s[i] += $i } END { print s[1] + 0, s[2] + 0, s[3] + 0, s[4] + 0 }'))
	echo "$fuzzer (seeds $*): tried ${t[0]}, read to the end ${t[1]}, refused with one line" \
		"${t[2]}, left to perf script ${t[3]}, crashes $([ $rc = 0 ] && echo 0 || echo 'some')"
	if [ $rc != 0 ] || grep -qE 'ERROR: (Address|Leak|libFuzzer)|runtime error|not one line' "$log"
	then
		echo "FAIL: $fuzzer exited $rc on a mutant:"
		grep -E -m 5 -A 20 'ERROR|runtime error|not one line' "$log" | tail -n 40
		fail=1
	fi
	# Two mutants alike (the same bit flipped twice) are one input: at least 300 distinct.
	[ "${t[0]}" -le "$files" ] && [ "${t[0]}" -ge 300 ] ||
		{ echo "FAIL: $fuzzer: ${t[0]} distinct mutants tried of $files (at least 300)"; fail=1; }
}
run fuzz_tracedat v7.dat v6.dat
run fuzz_perfdata perf.data
# Through vmexit itself: the message a user sees is one line, the exit status 0 or 1.
if [ -x "$VMEXIT" ]; then
	n=0 bad=0
	for m in $(sort -R --random-source=<(yes) "$work"/fuzz_*.list | head -n 24); do
		"$VMEXIT" report -i "$m" >/dev/null 2>"$work/err"
		rc=$?
		n=$((n + 1))
		lines=$(wc -l <"$work/err")
		if ! { [ $rc = 0 ] || { [ $rc = 1 ] && [ "$lines" = 1 ] &&
			grep -q "^vmexit: $m: " "$work/err"; }; }; then
			echo "FAIL: vmexit report -i $(basename "$m") exited $rc, said $lines lines:"
			head -n 5 "$work/err"
			bad=1
		fi
	done
	echo "vmexit report -i on $n of the mutants: $([ $bad = 0 ] && echo "each exit 0, or 1 with one line")"
	fail=$((fail | bad))
else
	echo "FAIL: $VMEXIT not built (make SAN=1 OUTPUT=$OUT/san)"
	fail=1
fi
[ $fail = 0 ] && echo "PASS: capture mutants: 0 crashes, every refusal one line"
exit $fail
