# SPDX-License-Identifier: GPL-2.0
# A bed test's scratch directory, sourced after it set TEST (its name): WORK, copied to
# VMEXIT_TEST_KEEP if that is set, then removed at exit.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/$TEST.XXXXXX")
keep() {
	if [ -n "${VMEXIT_TEST_KEEP:-}" ]; then
		mkdir -p "$VMEXIT_TEST_KEEP" && cp -r "$WORK"/. "$VMEXIT_TEST_KEEP"/
	fi
	rm -rf "$WORK"
}
trap keep EXIT
