#!/bin/bash
# Runs every test: unit tests (ASan/UBSan build), BPF handler tests, fuzz smoke runs, real-kernel
# tests on this host, and the nested beds. Each test prints one PASS/FAIL/SKIP line; a SKIP
# says why, and is never counted as a pass. A test skips only when this machine cannot run it
# (no root, KVM, BTF or nested SVM; a missing package is a failure: `make test` installs them),
# and the run still ends non-zero then, unless VMEXIT_ALLOW_SKIP=1 says that is expected (a
# machine without KVM, say).
#
# Nested beds (tests/vm/test_*.sh): a test with a "# beds: svm vmx" line runs on each of those
# beds (VMEXIT_BED) and, per bed, on each kernel (VMEXIT_BED_KERNEL) of VMEXIT_TEST_SVM_KERNELS
# (default "6.1 6.12") or VMEXIT_TEST_VMX_KERNELS (default "6.12": a Bochs boot takes
# minutes); a test without one runs once and picks its beds itself.
# `make test-matrix` sets both to "6.1 6.12" and VMEXIT_TEST_ONLY=vm (only the beds).
# VMEXIT_TEST_ONLY=check runs the quick tier alone (`make check`: unit and BPF tests but the
# slow ones, fuzz smoke, contrib), =rest everything else (`make test` runs check first, then
# rest, the slow unit tests first).
set -u
OUT=${1:-.output}
SAN=$OUT/san
cd "$(dirname "$0")/.."
pass=0 fail=0 skip=0
failed=()
run() {		# run NAME CMD...
	local name=$1; shift
	local log; log=$(mktemp)
	local t0=$SECONDS
	echo "=== $name"
	"$@" >"$log" 2>&1
	local rc=$?
	cat "$log"
	echo "--- $name: $((SECONDS - t0)) s"
	if [ $rc -eq 0 ]; then pass=$((pass + 1))
	elif [ $rc -eq 77 ]; then skip=$((skip + 1)); echo "*** SKIP: $name (see reason above)"
	else fail=$((fail + 1)); failed+=("$name"); echo "*** FAIL: $name (exit $rc)"
	fi
	rm -f "$log"
}

# tracefs is where the kernel's own kvm_exit names are read (test_reasons) and the tracers the
# host tests compare with write: a fresh boot may not have it mounted (.ci/run does the same).
if [ "$(id -u)" = 0 ] && ! mountpoint -q /sys/kernel/tracing; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		echo "run-all: note: tracefs is not mounted and mounting it failed" >&2
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ONLY=${VMEXIT_TEST_ONLY:-}
# The unit tests that take minutes under the sanitizers (500 damaged files through report,
# the record file's every edge): the full suite's, not the quick tier's.
SLOW_UNITS=" test_report_mutations test_record_file "
slow_unit() { [[ "$SLOW_UNITS" == *" $(basename "$1") "* ]]; }
# The unit tests of glibc's allocator policy, which ASan's allocator replaces: run from the
# plain build too (the Makefile's PLAIN_UNIT_BINS builds them with `make check`).
PLAIN_UNITS="test_startup_heap"
if [ "$ONLY" != vm ] && [ "$ONLY" != rest ]; then
	for t in "$SAN"/tests/test_*; do
		[ "$ONLY" = check ] && slow_unit "$t" && continue
		[ -x "$t" ] && run "$(basename "$t")" "$t"
	done
	for t in $PLAIN_UNITS; do
		run "$t (no sanitizer)" "$OUT/tests/$t"
	done
	for t in tests/fuzz/run-*.sh; do
		[ -x "$t" ] && run "$(basename "$t" .sh)" "$t" "$OUT"
	done
	# The shipped integration files (systemd unit, dashboard): no kernel needed.
	for t in tests/contrib/test_*.sh; do
		[ -x "$t" ] && run "$(basename "$t" .sh)" "$t" "$SAN"
	done
fi
if [ "$ONLY" = rest ]; then
	for t in "$SAN"/tests/test_*; do
		slow_unit "$t" && [ -x "$t" ] && run "$(basename "$t")" "$t"
	done
fi
if [ "$ONLY" != vm ] && [ "$ONLY" != check ]; then
	for t in tests/host/test_*.sh; do
		# A "# bed-only:" test needs what only the beds have; test_nested_host runs it there.
		grep -q '^# bed-only:' "$t" && continue
		[ -x "$t" ] && run "$(basename "$t" .sh)" "$t" "$SAN"
	done
fi
for t in tests/vm/test_*.sh; do
	[ -x "$t" ] && [ "$ONLY" != check ] || continue
	beds=$(sed -n 's/^# beds: //p' "$t" | head -n 1)
	if [ -z "$beds" ]; then		# the test picks its beds and kernel itself
		run "$(basename "$t" .sh)" "$t" "$OUT"
		continue
	fi
	for bed in $beds; do
		case $bed in
		vmx) kernels=${VMEXIT_TEST_VMX_KERNELS:-6.12} ;;
		*) kernels=${VMEXIT_TEST_SVM_KERNELS:-6.1 6.12} ;;
		esac
		for k in $kernels; do
			run "$(basename "$t" .sh)[$bed/$k]" env VMEXIT_BED="$bed" VMEXIT_BED_KERNEL="$k" "$t" "$OUT"
		done
	done
done
echo
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || { printf 'failed: %s\n' "${failed[@]}"; exit 1; }
if [ $skip -ne 0 ]; then
	echo "$skip test(s) SKIPPED: they did not run and are not counted as passed"
	[ "${VMEXIT_ALLOW_SKIP:-0}" = 1 ] && exit 0
	echo "(set VMEXIT_ALLOW_SKIP=1 if this machine cannot run them: no KVM, BTF or root)"
	exit 3
fi
exit 0
