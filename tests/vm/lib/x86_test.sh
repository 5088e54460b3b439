# SPDX-License-Identifier: GPL-2.0
# The common head of the x86 bed tests (test_nested_stream.sh, test_nested_drill.sh), sourced
# with the test's arguments after it set TEST (its name), SVM_TIMEOUT and VMX_TIMEOUT (seconds,
# the bed's default; VMEXIT_BED_TIMEOUT overrides both). It sets OUT (the test's first argument,
# default .output), VMEXIT, GUEST, BED_NAME (VMEXIT_BED: svm or vmx), KSERIES (VMEXIT_BED_KERNEL),
# TNAME (TEST[bed/kernel]), TIMEOUT and WORK (a scratch directory, copied to VMEXIT_TEST_KEEP if
# set, then removed at exit); fail MSG and skip MSG print the test's result line and exit 1 / 77.
OUT=${1:-.output}
VMEXIT=$OUT/vmexit
GUEST=$OUT/vmexit-guest
BED_NAME=${VMEXIT_BED:-svm}
KSERIES=${VMEXIT_BED_KERNEL:-6.1}
TNAME="$TEST[$BED_NAME/$KSERIES]"
fail() { echo "FAIL: $TNAME: $*"; exit 1; }
skip() { echo "SKIP: $TNAME: $*"; exit 77; }
case $BED_NAME in
svm) TIMEOUT=${VMEXIT_BED_TIMEOUT:-$SVM_TIMEOUT} ;;
vmx) TIMEOUT=${VMEXIT_BED_TIMEOUT:-$VMX_TIMEOUT} ;;
*) fail "VMEXIT_BED=$BED_NAME: this test knows the svm and vmx beds" ;;
esac
[ -x "$VMEXIT" ] && [ -x "$GUEST" ] || fail "$VMEXIT or $GUEST not built (make all)"
command -v python3 >/dev/null || fail "python3 not installed (apt-get install python3; tools/install-deps.sh)"
. "$HERE/lib/work.sh"	# WORK, removed (or kept) at exit
