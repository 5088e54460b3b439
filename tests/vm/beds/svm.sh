# SPDX-License-Identifier: GPL-2.0
# Bed "svm", sourced by tests/vm/bed.sh: QEMU TCG with an emulated AMD CPU that has SVM + NPT
# (QEMU cannot emulate VMX). Real kvm_exit / kvm_entry with SVM codes (isa 2). Boot ~3-5 s.
KARCH=amd64
BED_MODULES=kvm_amd
BED_CPUFLAG=svm
BED_COMPRESS=cat
DEF_TIMEOUT=600 DEF_MEM=1024 DEF_SMP=2 DEF_CPU="qemu64,+svm,+npt"

bed_prereqs() {
	need_cmd qemu-system-x86_64 qemu-system-x86
}

# bed_boot INITRAMFS: prints the serial console on stdout until the machine powers off or
# TIMEOUT seconds pass (exit 124 then). VMEXIT_BED_APPEND adds to the kernel's command line (e.g.
# "loglevel=7 softlockup_all_cpu_backtrace=1" to see a lockup's stacks, hidden by loglevel=3).
# At a timeout the vCPUs' registers and stacks are printed first (lib/bed_monitor.sh).
. "$HERE/lib/bed_monitor.sh"
bed_boot() {
	# Boot the uncompressed vmlinux through its PVH entry when it has one: under TCG this skips
	# SeaBIOS' real-mode setup and the xz decompression of the bzImage (about 4 s of 7 here).
	local kernel=$KDIR/vmlinuz
	if [ -s "$KDIR/vmlinux" ] && grep -qx 'CONFIG_PVH=y' "$KDIR/config" 2>/dev/null; then
		kernel=$KDIR/vmlinux
	fi
	local tcg=tcg,thread=${VMEXIT_BED_TCG_THREAD:-single}
	say "booting $KVER ($(basename "$kernel")) under QEMU TCG (-accel $tcg -cpu $CPU_MODEL -smp $SMP -m $MEM), timeout ${TIMEOUT}s"
	# One TCG thread for all vCPUs (VMEXIT_BED_TCG_THREAD=multi: one each, QEMU's default on
	# x86). With one each, QEMU 7.2 let a vCPU keep a translation of kernel text taken while
	# another vCPU patched it: after a static key flip (text_poke_bp: int3, tail, head), both
	# vCPUs trapped on an int3 that memory no longer held, and the kernel's int3 handler sent
	# them back to it for good (lib/bed_monitor.sh's dump). Three times in 6.1 beds under load,
	# each at a preempt_notifier_key site, which KVM flips as the first VM starts and the last
	# ends: finish_task_switch+0x9f (interrupts on: soft lockups, as test_nested_uffd[svm/6.1]
	# showed in CI) and __schedule+0x2ab (interrupts off: a silent console, its other failure).
	# One thread translates and runs the vCPUs in turn: no such interleaving. Side by side under
	# load, 2 hangs in ~330 vmexit runs with a thread each, none in ~334 with one; 26 % slower
	# there, as fast at load 4 (test_nested_svm 74.5 s against 75.0 s).
	local q=(qemu-system-x86_64 -accel "$tcg"
		 -cpu "$CPU_MODEL" -smp "$SMP" -m "$MEM"
		 -machine q35 -nodefaults -no-reboot -display none -serial stdio
		 -kernel "$kernel" -initrd "$1"
		 -append "console=ttyS0 rdinit=/init quiet loglevel=3 panic=-1 mitigations=off$(monitor_append) ${VMEXIT_BED_APPEND:-}")
	if monitor_on; then
		monitor_run "${q[@]}" -monitor "unix:$WORK/monitor.sock,server=on,wait=off"
	else
		timeout -k 5 "$TIMEOUT" "${q[@]}" -monitor none </dev/null 2>&1
	fi
}
