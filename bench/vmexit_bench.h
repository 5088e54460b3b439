/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Context of the benchmark programs in bpf/vmexit_bench.bpf.c, run by bench/bench_handlers.c
 * through BPF_PROG_TEST_RUN. All 64-bit fields, at most 12: a raw_tp program reads its
 * test_run context as u64 arguments.
 */
#ifndef VMEXIT_BENCH_H
#define VMEXIT_BENCH_H

enum bench_variant {
	BV_EMPTY,		/* the bpf_loop alone */
	BV_CLOCK,		/* 2x bpf_ktime_get_ns */
	BV_EXIT_ENTRY,		/* handle_kvm_exit + handle_kvm_entry, as the tracepoints call them */
	BV_USER_RUN,		/* handle_user_exit (KVM_EXIT_IO) + handle_kvm_run */
	BV_USER_EINTR_RUN,	/* handle_user_exit (-EINTR: other_cells hash) + handle_kvm_run */
	BV_STATE,		/* 2x (bpf_get_current_pid_tgid + thread_get): the state lookups */
	BV_STREAM_MIX,		/* one completed exit per iteration, mixed reasons and vCPUs:
				 * the event generator of bench/bench_stream.c */
	BV_SWITCH_NONE,		/* --split sched_switch, the task has no task storage */
	BV_SWITCH_IDLE,		/* ... vmexit's task storage, no exit in flight */
	BV_SWITCH_INFLIGHT,	/* ... an exit in flight: stamp out, sums in */
	NR_BENCH_VARIANTS,
};

struct bench_args {
	__u64 variant;
	__u64 iters;
	__u64 reason;		/* VMX reason of BV_EXIT_ENTRY */
};

#endif /* VMEXIT_BENCH_H */
