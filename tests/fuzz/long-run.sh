#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz: each fuzzer for FUZZ_SECONDS (default 300) from its seeds: the record file's, the
# rules file's and diff/explain's stat --json kept corpora, and the captures' seeds made on this
# host (capture_seeds.sh).
# New inputs go to OUTDIR/fuzz/corpus-NAME (kept between runs); crashes to OUTDIR/fuzz/.
# Usage: tests/fuzz/long-run.sh OUTDIR
set -u
OUT=$(cd "${1:?usage: $0 OUTDIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
secs=${FUZZ_SECONDS:-300}
# libtracecmd's own leaks on damaged files are not vmexit's (libtracecmd.lsan.supp says which);
# run-capture_mutants.sh, the other runner of these fuzzers, takes the same list.
export LSAN_OPTIONS=${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$here/libtracecmd.lsan.supp
seeds=$OUT/fuzz/seeds-capture
if [ -x "$OUT/fuzz/fuzz_tracedat" ] && [ ! -s "$seeds/v7.dat" ]; then
	"$here/capture_seeds.sh" "$OUT" "$seeds" || exit 1
fi
rc=0
for bin in "$OUT"/fuzz/fuzz_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	case $name in
	fuzz_record_file) from=("$here/corpus/record_file") ;;
	fuzz_template) from=("$here/corpus/template") ;;
	fuzz_stat_json) from=("$here/corpus/stat_json") ;;
	fuzz_guest_trace) from=("$here/corpus/guest_json" "$here/corpus/guest_uftrace") ;;
	fuzz_tracedat) from=("$seeds/v7.dat" "$seeds/v6.dat") ;;
	fuzz_perfdata) from=("$seeds/perf.data") ;;
	*) echo "$name: no seeds known"; rc=1; continue ;;
	esac
	mkdir -p "$OUT/fuzz/corpus-$name"
	# Single files are seeds too: copied into the growing corpus.
	for f in "${from[@]}"; do [ -f "$f" ] && cp "$f" "$OUT/fuzz/corpus-$name/"; done
	dirs=()
	for f in "${from[@]}"; do [ -d "$f" ] && dirs+=("$f"); done
	echo "=== $name: $secs s"
	"$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$OUT/fuzz/$name-" "$OUT/fuzz/corpus-$name" "${dirs[@]}" 2>&1 |
		grep -E '^(stat::|Done|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' ||
		true
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "FAIL: $name: crash kept in $OUT/fuzz/"; rc=1; }
done
exit $rc
