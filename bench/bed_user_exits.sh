#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench_user_exits (what a userspace exit costs under vmexit, its floor and bpftrace) in a nested
# bed, for a host without /dev/kvm: one boot runs the bench as `make bench` runs it on a KVM host,
# with fewer exits per guest (emulated exits are slow) and bpftrace in the bed. On a hardware KVM
# host, the beds' included, kvm_exit/kvm_entry fire for every IO exit too: the bench reports the
# user-exit hooks' programs (kvm_userspace_exit, KVM_RUN's) apart from the kernel-exit pair's, and
# compares with bpftrace on the user-exit hooks alone, its script having no others.
# In the vmx bed (Bochs) the clock counts instructions: BPF run times and ratios repeat under any
# host load, so a round or two suffice. In the svm bed (QEMU TCG) the host's load moves them.
# Nothing is asserted: it prints the bench's figures. Not part of `make test`; `make
# bench-bed-user` runs it (vmx, 6.12: ~30-40 min with other beds running).
#
# usage: bench/bed_user_exits.sh [--bed vmx|svm] [--kernel 6.12|6.1] [--rounds R] [--exits N]
#                                [OUTPUT dir]
# Defaults: vmx, 6.12, 2 rounds, 500 exits per guest.
set -u
cd "$(dirname "$0")/.." || exit 1
BED=vmx KERNEL=6.12 ROUNDS=2 EXITS=500 OUT=.output
while [ $# -gt 0 ]; do
	case $1 in
	--bed) BED=$2; shift 2 ;;
	--kernel) KERNEL=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--exits) EXITS=$2; shift 2 ;;
	-h|--help) sed -n '3,16p' "$0"; exit 0 ;;
	-*) echo "bed_user_exits: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) OUT=$1; shift ;;
	esac
done
case $ROUNDS$EXITS in
''|*[!0-9]*) echo "bed_user_exits: --rounds and --exits want numbers, not '$ROUNDS' '$EXITS'" >&2; exit 2 ;;
esac
for f in "$OUT/vmexit" "$OUT/vmexit-guest" "$OUT/bench/floor_progs" "$OUT/bench/bench_user_exits"; do
	[ -x "$f" ] || { echo "bed_user_exits: no $f: run make bench-bed-user (or give the OUTPUT dir)" >&2; exit 2; }
done
BPFTRACE=$(command -v bpftrace) ||
	{ echo "bed_user_exits: no bpftrace on this host: run tools/install-deps.sh" >&2; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
	echo "bed_user_exits: needs root (the bed's kernel cache, as tests/vm)" >&2
	exit 2
fi
tmp=$(mktemp -d /tmp/bed_user_exits.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
# The in-bed script (busybox sh): the files sit at /, floor_progs where the bench looks for it
# (bench/ beside vmexit).
cat >"$tmp/script.sh" <<'EOF'
echo "bed: kernel $(uname -r), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
# The tracers' first start pays for loading their files from the initramfs: not in any case.
/vmexit stat --json 1 1 >/dev/null 2>&1
VMEXIT_BIN=/vmexit BPFTRACE=/bpftrace VMEXIT_BENCH_ROUNDS=$ROUNDS VMEXIT_BENCH_EXITS=$EXITS \
	/bench_user_exits
EOF
echo "bed_user_exits: $BED bed, kernel $KERNEL, $ROUNDS rounds, $EXITS exits per guest" >&2
timeout=3600
[ "$BED" = vmx ] && timeout=7200
# bpftrace brings libLLVM and libclang (~200 MB unpacked in the initramfs): more memory.
mem=3072
[ "$BED" = vmx ] && mem=1536	# Bochs' "megs"
tests/vm/bed.sh --bed "$BED" --kernel "$KERNEL" --timeout "$timeout" --mem $mem --smp 1 \
	--env ROUNDS="$ROUNDS" --env EXITS="$EXITS" \
	"$tmp/script.sh" "$OUT/vmexit" "$OUT/vmexit-guest" "$OUT/bench/bench_user_exits" \
	"$OUT/bench/floor_progs:/bench/floor_progs" "$BPFTRACE" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -eq 77 ]; then
	echo "bed_user_exits: SKIP: the bed cannot run here: $(sed -n 's/^bed: SKIP: //p' "$tmp/err" | head -n 1)" >&2
	exit 77
fi
cat "$tmp/out"
if [ $rc -ne 0 ]; then
	echo "bed_user_exits: the bed or the bench failed (exit $rc):" >&2
	cat "$tmp/err" >&2
	exit 1
fi
echo "(bed $BED, kernel $KERNEL: emulated latencies; only ratios within this boot carry over)"
