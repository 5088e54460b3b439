#!/bin/bash
# `make demo`: vmexit stat on the bundled guest workload (two small VMs, two vCPUs each, a mix
# of port I/O, MMIO, HLT, CPUID and MSR exits for a few seconds).
set -eu
OUT=${1:-.output}
if [ "$(id -u)" != 0 ]; then
	echo "demo: run as root (sudo make demo): vmexit loads BPF programs" >&2
	exit 1
fi
if [ ! -c /dev/kvm ]; then
	echo "demo: /dev/kvm is missing: load kvm and kvm_intel or kvm_amd" >&2
	exit 1
fi
set -x
"$OUT/vmexit" stat 1 -- "$OUT/vmexit-guest" --vms 2 --vcpus 2 --io 2000 --mmio 500 --hlt 200 \
	--cpuid 100 --msr 100 --seconds 3
