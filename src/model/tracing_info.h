/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the kernel side says about a run, as plain data for the outputs (which never include
 * kernel/): the hooks in use (kernel/hooks.c) and vmexit's own BPF cost (kernel/overhead.c).
 */
#ifndef VMEXIT_TRACING_INFO_H
#define VMEXIT_TRACING_INFO_H

#include <stdbool.h>
#include <linux/types.h>

/* The start-up check of the fast path: both read the same exits for a short window. */
struct hook_check {
	bool ran;
	double window_s;
	__u64 matched, mismatched, unpaired, unreadable, entries, classic_missed;
};

/* The hooks in use, named as JSON shows them. */
struct hooks_info {
	const char *kvm_run, *kvm_userspace_exit, *kvm_exit, *kvm_entry;
	const struct hook_check *check;	/* NULL: the fast path was not checked */
	const char *note;		/* why not the fast path, or that it was checked */
};

/*
 * vmexit's own BPF programs since the start: their run time and runs (--overhead). The exit
 * programs' per exit; --wake's apart (they run on every context switch, wake-up and hrtimer
 * of the host, not per exit: 0 without --wake).
 */
struct bpf_cost {
	__u64 run_ns;
	__u64 run_cnt;
	__u64 wake_ns;
	__u64 wake_cnt;
};

#endif /* VMEXIT_TRACING_INFO_H */
