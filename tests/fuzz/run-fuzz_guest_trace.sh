#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Fuzzes the --guest-trace reader (and the Perfetto writers behind it) from the seed corpora of
# both formats it reads, the bundled guest's Chrome JSON and uftrace's, for FUZZ_SECONDS
# (default 20: `make test`'s smoke run; `make fuzz` runs longer); non-zero exit on any crash.
# Usage: tests/fuzz/run-fuzz_guest_trace.sh OUTDIR   (OUTDIR/fuzz/fuzz_guest_trace is built)
set -eu

out=$(cd "${1:?usage: $0 OUTDIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
bin="$out/fuzz/fuzz_guest_trace"
[ -x "$bin" ] || { echo "$0: $bin not built (make $bin)" >&2; exit 1; }

# New inputs go to a scratch directory so the committed seed corpora stay small.
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_guest_trace.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$bin" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 -artifact_prefix="$out/fuzz/" \
	-rss_limit_mb=2048 -print_final_stats=1 -dict="$here/guest_trace.dict" \
	"$work" "$here/corpus/guest_json" "$here/corpus/guest_uftrace"
