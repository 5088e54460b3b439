/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The context that tests/bpf/test_bpf_handlers.c hands to the programs of
 * bpf/vmexit_test.bpf.c through BPF_PROG_TEST_RUN: one synthetic trace event.
 *
 * Every field is 64 bits and there are at most 12 of them: a raw_tp program reads its test_run
 * context as an array of MAX_BPF_FUNC_ARGS (12) u64 arguments, and the same struct serves both
 * the syscall programs (thread-hash path) and the raw_tp one (task-storage path).
 */
#ifndef VMEXIT_TEST_H
#define VMEXIT_TEST_H

enum test_op {
	TOP_EXIT = 1,		/* handle_kvm_exit (err = the CPU, for the per-CPU exit slot) */
	TOP_ENTRY,		/* handle_kvm_entry (err = the CPU) */
	TOP_USER_EXIT,		/* handle_user_exit (reason, err; info1 = the CPU) */
	TOP_RUN,		/* handle_kvm_run (info1 = the CPU) */
	TOP_TSC,		/* handle_tsc_offset (vcpu, info1 = prev, info2 = next) */
	TOP_FORK,		/* handle_fork (tgid = parent, tid = child) */
	TOP_ARM64_EXIT,		/* arm64 kvm_exit: err = ret, reason = esr_ec, rip = vcpu_pc */
	TOP_SWITCH_OUT,		/* --split: the thread leaves the CPU (err != 0: runnable) */
	TOP_SWITCH_IN,		/* --split: the thread is back on a CPU */
	TOP_WAKEUP,		/* --split: the sleeping thread is woken */
	TOP_THREAD_EXIT,	/* handle_thread_exit: the thread ends */
	TOP_PROCESS_GONE,	/* handle_process_gone: process tgid has no thread left */
	TOP_KEY,		/* handle_key: info1 = key, info2 = kind << 16 | dir, err = in_done */
	/*
	 * A kvm_exit on the fast path with the guest's RAX (rip = the leaf) and the vCPU's state
	 * (info1: bit 0 a nested guest runs, bit 1 L1 intercepts CPUID, bit 2 CPUID faulting):
	 * what kvm_exit_fast makes of them (key_leaf_at_exit()), minus the vCPU reads.
	 */
	TOP_EXIT_LEAF,
	/*
	 * kvm_exit_fast (err = the CPU): the CPU's slot begins the exit if it can
	 * (cpu_slot_exit()), else handle_kvm_exit; with --by key the leaf as TOP_EXIT_LEAF and a
	 * cached interrupt's information in intr_err's high half, with --by rip rip the RIP.
	 * The thread's start time, as the slot names it, is the object's test_born.
	 */
	TOP_EXIT_FAST,
	/*
	 * run_keys: the end of a KVM_RUN (kvm_fpu's put, info1 = the CPU) notes what kvm_run says
	 * of the exit to the VMM that follows: its reason, key rip, info2 = kind << 16 | dir;
	 * err != 0: no vCPU found (run_key_note(), minus the vCPU reads). intr_err: the thread's
	 * context switches so far, here and at TOP_USER_EXIT.
	 */
	TOP_RUN_PUT,
};

struct test_ctx {
	__u64 op;
	__u64 now;
	__u64 tgid;
	__u64 tid;
	__s64 vcpu;
	__u64 isa;
	__u64 reason;
	__s64 err;
	__u64 rip;
	__u64 info1;
	__u64 info2;
	__u64 intr_err;		/* intr_info << 32 | error_code */
};

/*
 * A kvm tracepoint record for run_kvm_record: rec holds the bytes of a trace_event_raw_kvm_*
 * record laid out at the running kernel's offsets (the test reads them from its BTF), so the
 * program decodes it with the same CO-RE relocated code the tracepoint programs run.
 */
struct test_kvm_ctx {
	__u64 event;		/* enum vmexit_kvm_event: which record rec is */
	__u64 now;
	__u64 tgid;
	__u64 tid;
	__u64 rec[8];
};

#endif /* VMEXIT_TEST_H */
