/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The TSC scaling ratio of each vCPU, where KVM scales the guest's TSC (VMX TSC scaling,
 * SVM TSC ratio MSR): no tracepoint reports it, KVM's debugfs does, per VM directory
 * "PID-FD" and vCPU, as tsc-scaling-ratio and tsc-scaling-ratio-frac-bits (present only on
 * hosts with the feature). guest TSC = host TSC * ratio / 2^frac_bits + offset.
 */
#ifndef VMEXIT_KVM_TSC_SCALE_H
#define VMEXIT_KVM_TSC_SCALE_H

#include <linux/types.h>

typedef int (*kvm_tsc_scale_fn)(void *ctx, __u32 tgid, __s32 vcpu, __u64 ratio,
				__u32 frac_bits);

/*
 * Calls fn for every vCPU of the running VMs whose ratio is not 1 (fn's non-zero return stops
 * and is returned). 0 also when debugfs or the files are absent: then there is no scaling to
 * report, or no way to see it.
 */
int kvm_tsc_scale_each(kvm_tsc_scale_fn fn, void *ctx);

#endif /* VMEXIT_KVM_TSC_SCALE_H */
