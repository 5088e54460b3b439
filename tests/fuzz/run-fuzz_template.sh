#!/bin/bash
# Smoke-fuzzes the rules-file compiler and renderer for FUZZ_SECONDS (default 20) from the kept
# seed corpus.
# Usage: run-fuzz_template.sh OUTDIR (the fuzzer binary is OUTDIR/fuzz/fuzz_template).
# Exit: 0 clean, 1 crash or sanitizer report, 77 (skip) when the binary was not built.
set -u
OUT=${1:-.output}
cd "$(dirname "$0")/../.."
BIN=$OUT/fuzz/fuzz_template
if [ ! -x "$BIN" ]; then
	echo "SKIP: $BIN not built (make $BIN needs clang with libFuzzer)"
	exit 77
fi
# New inputs go to a scratch corpus so the kept seeds stay small and reviewed.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
artifacts=$OUT/fuzz/artifacts-template/
mkdir -p "$artifacts"
"$BIN" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$artifacts" "$work" tests/fuzz/corpus/template 2>&1 | tail -n 25
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo "FAIL: fuzz_template exited $rc; crashing input kept in $artifacts"
	exit 1
fi
echo "PASS: fuzz_template"
