#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Nested KVM test beds: boots a Debian kernel in an emulator whose CPU has hardware virtualization,
# loads KVM in it (so /dev/kvm exists and kvm:kvm_exit / kvm:kvm_entry fire for real), then runs
# a busybox-sh SCRIPT inside and hands its exit code back. One harness, one backend per bed:
#   svm    QEMU TCG, AMD SVM + NPT (tests/vm/beds/svm.sh)      ~4 s to the script
#   vmx    Bochs, Intel VMX + EPT (tests/vm/beds/vmx.sh)      ~65 s to the script
#   arm64  QEMU TCG, arm64 at EL2, KVM in VHE mode (beds/arm64.sh; arm64-nvhe: nVHE)
# lib/kernel.sh fetches and caches the kernel and modules, lib/initramfs.sh builds the initramfs
# and its /init (the job protocol); this file parses options and reads the console.
#
#   tests/vm/bed.sh [--bed NAME] [--kernel 6.1|6.12] [options] SCRIPT [FILE...]
#
# FILE is a host path copied to /<basename> in the bed (or SRC:DEST to pick the path). A dynamically
# linked FILE brings its shared libraries and the dynamic loader along, at the paths ldd reports;
# a directory is copied with everything under it.
# The script's stdout/stderr come out on our stdout; the bed's own messages go to stderr as "bed: ...".
#
# Exit status: the script's; 77 (with a "bed: SKIP:" line) when the bed cannot run here; 125 when
# the bed itself broke (timeout, crash, no exit marker). See tests/vm/README.md.
#
# Environment: VMEXIT_BED_CACHE (kernel cache, default /var/cache/vmexit-bed), VMEXIT_BED (the
# bed, default svm), VMEXIT_BED_KERNEL (series, default 6.1), VMEXIT_BED_KVER (use this kernel,
# e.g. 6.1.0-56-amd64, instead of the newest of the series apt knows), VMEXIT_BED_OFFLINE=1
# (never touch the network: use the newest cached kernel of the series), VMEXIT_BED_MONITOR=0 (no
# vCPU dump at a timeout: lib/bed_monitor.sh), VMEXIT_BED_TCG_THREAD=multi (svm: a TCG thread per
# vCPU, which can hang the bed; beds/svm.sh).
set -euo pipefail

PROG=bed
HERE=$(cd "$(dirname "$0")" && pwd)
BED_NAME=${VMEXIT_BED:-svm}
KSERIES=${VMEXIT_BED_KERNEL:-6.1}
TIMEOUT= MEM= SMP= CPU_MODEL=
VERBOSE=0
SAVE_LOG=
GUEST_ENV=()
CACHE=${VMEXIT_BED_CACHE:-/var/cache/vmexit-bed}

say()  { echo "$PROG: $*" >&2; }
skip() { echo "$PROG: SKIP: $*" >&2; exit 77; }
die()  { echo "$PROG: error: $*" >&2; exit 125; }
# need_cmd CMD PACKAGE: a missing package fails the bed (tools/install-deps.sh installs it); only
# what this machine cannot do (no KVM in the emulator, no network for the kernel) skips.
need_cmd() { command -v "$1" >/dev/null || die "$1 not installed (apt-get install $2; tools/install-deps.sh)"; }
need_file() { [ -e "$1" ] || die "$1 missing (apt-get install $2; tools/install-deps.sh)"; }
on_err() { echo "$PROG: error: unexpected failure (exit $1) at line $2" >&2; exit 125; }
trap 'on_err $? $LINENO' ERR
beds() { (cd "$HERE/beds" && ls -- *.sh | sed 's/\.sh$//' | tr '\n' ' '); }

usage() {
	cat <<EOF
usage: $0 [--bed NAME] [--kernel SERIES] [--timeout S] [--mem MiB] [--smp N] [--cpu MODEL]
          [--env NAME=VALUE]... [--log FILE] [-v] SCRIPT [FILE|SRC:DEST]...
  --bed NAME       the bed, one of: $(beds)(default svm)
  --kernel SERIES  Debian kernel series: 6.1 or 6.12 (default 6.1)
  --timeout S      kill the bed after S seconds (default: the bed's)
  --mem MiB        guest memory (default: the bed's)
  --smp N          guest CPUs (default: the bed's)
  --cpu MODEL      emulator CPU model (default: the bed's)
  --env NAME=VAL   export NAME=VAL to SCRIPT inside the bed (repeatable)
  --log FILE       keep the whole serial console log in FILE
  -v, --verbose    copy the whole serial console (kernel messages too) to stderr
Exit status: SCRIPT's; 77 = bed cannot run here (SKIP); 125 = the bed itself failed.
EOF
}

while [ $# -gt 0 ]; do
	case $1 in
	--bed) BED_NAME=${2:?}; shift 2 ;;
	--kernel) KSERIES=${2:?}; shift 2 ;;
	--timeout) TIMEOUT=${2:?}; shift 2 ;;
	--mem) MEM=${2:?}; shift 2 ;;
	--smp) SMP=${2:?}; shift 2 ;;
	--cpu) CPU_MODEL=${2:?}; shift 2 ;;
	--env) GUEST_ENV+=("${2:?}"); shift 2 ;;
	--log) SAVE_LOG=${2:?}; shift 2 ;;
	-v|--verbose) VERBOSE=1; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
SCRIPT=$1; shift
[ -f "$SCRIPT" ] || die "script not found: $SCRIPT"
[[ $BED_NAME =~ ^[a-z0-9_-]+$ ]] && [ -f "$HERE/beds/$BED_NAME.sh" ] ||
	die "unknown bed '$BED_NAME' (one of: $(beds))"
case $KSERIES in 6.1|6.12) ;; *) die "--kernel takes 6.1 or 6.12, got '$KSERIES'" ;; esac
# The bed's backend: KARCH, BED_MODULES, BED_CPUFLAG, BED_COMPRESS, DEF_*, bed_prereqs, bed_boot.
. "$HERE/beds/$BED_NAME.sh"
. "$HERE/lib/kernel.sh"
. "$HERE/lib/initramfs.sh"
TIMEOUT=${TIMEOUT:-$DEF_TIMEOUT} MEM=${MEM:-$DEF_MEM} SMP=${SMP:-$DEF_SMP} CPU_MODEL=${CPU_MODEL:-$DEF_CPU}
case $TIMEOUT$SMP$MEM in *[!0-9]*) die "--timeout, --mem and --smp take whole numbers" ;; esac
for e in "${GUEST_ENV[@]+"${GUEST_ENV[@]}"}"; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || die "--env wants NAME=VALUE, got: $e"
done

# ------------------------------------------------------------------ host prerequisites
bed_prereqs
# A backend for another architecture brings its own busybox (bed_busybox sets BUSYBOX).
if declare -F bed_busybox >/dev/null; then
	bed_busybox
else
	BUSYBOX=$(command -v busybox || true)
	[ -n "$BUSYBOX" ] || die "busybox not installed (apt-get install busybox-static; tools/install-deps.sh)"
	if ldd "$BUSYBOX" >/dev/null 2>&1; then
		die "$BUSYBOX is dynamically linked: the bed needs busybox-static (tools/install-deps.sh)"
	fi
fi
need_cmd cpio cpio
need_cmd xz xz-utils
need_cmd dpkg-deb dpkg
need_cmd modinfo kmod
need_cmd flock util-linux

# ------------------------------------------------------------------ kernel (cached, never installed)
get_kernel

# ------------------------------------------------------------------ initramfs
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vmexit-bed.XXXXXX")
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT
FILES=("$@")
build_initramfs

# ------------------------------------------------------------------ boot
LOG=$WORK/serial.log
STATE=$WORK/state
: >"$STATE"
# Sorts the serial console: script output (between BEGIN and END) to stdout, bed messages to
# stderr, kernel messages to the log only (or stderr with -v). Any marker may follow script
# output that did not end with a newline.
filter() {
	local line phase=boot pre rest
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$LOG"
		[ $VERBOSE = 1 ] && printf '%s\n' "$line" >&2
		if [[ $line != *"$MARK "* ]]; then
			[ $phase = script ] && [ $VERBOSE = 0 ] && printf '%s\n' "$line"
			continue
		fi
		pre=${line%%"$MARK "*}
		rest=${line#*"$MARK "}
		[ -n "$pre" ] && [ $phase = script ] && [ $VERBOSE = 0 ] && printf '%s\n' "$pre"
		case $rest in
		BEGIN) phase=script; echo "begin $(date +%s.%N)" >>"$STATE" ;;
		END\ *) phase=post; echo "rc ${rest#END }" >>"$STATE" ;;
		SKIP\ *) echo "skip ${rest#SKIP }" >>"$STATE" ;;
		FAIL\ *) echo "fail ${rest#FAIL }" >>"$STATE" ;;
		WARN\ *) echo "$PROG: warning: ${rest#WARN }" >&2 ;;
		INFO\ *) echo "$PROG: ${rest#INFO }" >&2 ;;
		OFF) echo "off" >>"$STATE" ;;
		esac
	done
}

T0=$(date +%s.%N)
# The emulator's exit status is not the script's (Bochs exits 1 at power-off): the markers tell.
set +e; trap - ERR
bed_boot "$WORK/initramfs" | filter
st=("${PIPESTATUS[@]}")
set -e; trap 'on_err $? $LINENO' ERR
T1=$(date +%s.%N)
[ -n "$SAVE_LOG" ] && cp "$LOG" "$SAVE_LOG"

tail_log() { say "last lines of the serial console:"; tail -n "${1:-25}" "$LOG" | sed 's/^/    /' >&2; }
elapsed=$(awk -v a="$T0" -v b="$T1" 'BEGIN{printf "%.1f", b-a}')
if grep -q '^skip ' "$STATE"; then
	skip "$(sed -n 's/^skip //p' "$STATE" | head -n 1)"
fi
if grep -q '^fail ' "$STATE"; then
	tail_log; die "$(sed -n 's/^fail //p' "$STATE" | head -n 1)"
fi
if ! grep -q '^rc ' "$STATE"; then
	tail_log 40
	[ "${st[0]}" = 124 ] && die "timed out after ${TIMEOUT}s (raise --timeout?)"
	die "the bed stopped without the script's exit code (emulator exit ${st[0]}); see the serial log above"
fi
rc=$(sed -n 's/^rc //p' "$STATE" | head -n 1)
[[ $rc =~ ^[0-9]+$ ]] || die "garbled exit marker: $rc"
grep -q '^off' "$STATE" || say "warning: no clean power-off (emulator exit ${st[0]})"
begin=$(sed -n 's/^begin //p' "$STATE")
say "script exit $rc; boot to script $(awk -v a="$T0" -v b="$begin" 'BEGIN{printf "%.1f", b-a}')s, total ${elapsed}s"
exit "$rc"
