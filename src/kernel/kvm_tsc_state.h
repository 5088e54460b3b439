/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each vCPU's TSC as KVM applies it, from KVM's debugfs: per VM directory "PID-FD" and vCPU,
 * tsc-offset (signed: guest TSC - host TSC, scaled) and, on hosts that scale the guest's TSC
 * (VMX TSC scaling, SVM TSC ratio MSR), tsc-scaling-ratio and tsc-scaling-ratio-frac-bits:
 *	guest TSC = host TSC * ratio / 2^frac_bits + offset.
 * No tracepoint reports the ratio, and kvm_write_tsc_offset fires only when the offset is
 * written (as a vCPU is created, a guest writes its TSC, a migration): a guest started before
 * the tracer is known here only. It is also the truth where a KVM traces an offset it does
 * not apply (kvm_pvm). VMEXIT_KVM_DEBUGFS overrides the directory (tests).
 */
#ifndef VMEXIT_KVM_TSC_STATE_H
#define VMEXIT_KVM_TSC_STATE_H

#include <stddef.h>
#include <linux/types.h>

struct kvm_tsc_state {
	__u32 tgid;
	__s32 vcpu;
	__u64 offset;		/* two's complement, as kvm_write_tsc_offset gives it */
	__u64 ratio;		/* 0: no scaling files (the host cannot scale: ratio 1) */
	__u32 frac_bits;
};

typedef int (*kvm_tsc_state_fn)(void *ctx, const struct kvm_tsc_state *st);

/*
 * 0 when KVM's debugfs directory can be read; else -errno with err saying why and what to do
 * ("debugfs is not mounted: mount -t debugfs none /sys/kernel/debug").
 */
int kvm_tsc_state_check(char *err, size_t errlen);

/*
 * Calls fn for each vCPU of the running VMs of process tgid (0: every process) with a readable
 * tsc-offset, vcpu < 0 for all of them or that one only (fn's non-zero return stops and is
 * returned). 0 also when there is nothing to read.
 */
int kvm_tsc_state_each(__u32 tgid, __s32 vcpu, kvm_tsc_state_fn fn, void *ctx);

#endif /* VMEXIT_KVM_TSC_STATE_H */
