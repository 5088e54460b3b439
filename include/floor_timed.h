/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmarks' timed floor programs (bpf/floor.bpf.c, floor_progs --timed): the per-CPU
 * record they keep, which bench/floor_progs.c reads at the end. Plain __u64 only.
 */
#ifndef VMEXIT_FLOOR_TIMED_H
#define VMEXIT_FLOOR_TIMED_H

/* Per CPU, one record for each kind of exit: an IO exit to the VMM is in both at once. */
enum { TIMED_EXIT, TIMED_USER, NR_TIMED };

/*
 * The exit's start with the thread that began it (its task and start time, so that a thread
 * that moved or another thread's end takes nothing), what was measured (so that nothing is
 * optimized away), and for --timed-key (TIMED_USER) the exit's port and direction read from
 * kvm_run, the KVM_RUNs whose vCPU was found, and the IO exits among them. A cache line in
 * all, as vmexit's slot: no CPU shares another's.
 */
struct timed_start {
	__u64 task, born, start;
	__u64 count, total_ns;
	__u64 key, key_runs, key_io;
};

#endif
