#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fuzzes the stat --json reader of diff and explain for FUZZ_SECONDS (default 20) from the
# seed corpus; non-zero exit on any crash.
# Usage: tests/fuzz/run-fuzz_stat_json.sh OUTDIR   (OUTDIR/fuzz/fuzz_stat_json is built)
set -eu

out=$(cd "${1:?usage: $0 OUTDIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bin="$out/fuzz/fuzz_stat_json"
[ -x "$bin" ] || { echo "$0: $bin not built (make $bin)" >&2; exit 1; }

# New inputs go to a scratch directory so the committed seed corpus stays small.
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_stat_json.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 -artifact_prefix="$out/fuzz/" -rss_limit_mb=2048 -print_final_stats=1 \
	"$work" "$here/corpus/stat_json"
