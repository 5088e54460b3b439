/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The context that tests/bpf/test_bpf_wake.c hands to bpf/wake_test.bpf.c's program through
 * BPF_PROG_TEST_RUN: one hand-made event of a vCPU thread, run through stat --wake's own
 * inline code (bpf/wake_common.bpf.h).
 */
#ifndef VMEXIT_WAKE_TEST_H
#define VMEXIT_WAKE_TEST_H

enum wake_test_op {
	WT_EXIT = 1,	/* kvm_exit of vCPU vcpu in thread tid of tgid */
	WT_ENTRY,	/* kvm_entry, likewise */
	WT_HALT_END,	/* kvm_vcpu_wakeup in thread tid: ns, waited, valid */
	WT_THREAD_END,	/* sched_process_exit of thread tid */
};

struct wake_test_ctx {
	__u64 op;
	__u64 tgid;
	__u64 tid;
	__u64 vcpu;	/* the vCPU's number; the test's vCPU "pointer" is derived from it */
	__u64 ns;
	__u64 waited;
	__u64 valid;
};

/* The fake struct kvm_vcpu pointer of vCPU n: never read, only compared and stored. */
#define WAKE_TEST_VCPU_PTR(n)	(0x1000ull + (n))

#endif /* VMEXIT_WAKE_TEST_H */
