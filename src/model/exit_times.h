/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each guest's exit latencies in powers of two (report --guest-trace): its median exit is what
 * a guest trace's placement must be finer than to say which exit a guest event sits between.
 */
#ifndef VMEXIT_EXIT_TIMES_H
#define VMEXIT_EXIT_TIMES_H

#include <stddef.h>
#include <linux/types.h>

#include "vmexit.h"

#define EXIT_TIMES_BUCKETS	64

struct exit_times_vm {
	__u32 tgid;
	__u64 n;
	__u64 bucket[EXIT_TIMES_BUCKETS];	/* [k]: [2^k, 2^(k+1)) ns; [0]: 0 or 1 */
};

struct exit_times {
	struct exit_times_vm *v;
	size_t nr, cap;
	size_t last;			/* events come in runs of one guest */
};

/* Counts ev if it is a completed exit (kernel or to the VMM). 0 or -ENOMEM. */
int exit_times_add(struct exit_times *t, const struct vmexit_event *ev);
/* The lower end of the bucket holding tgid's median exit, ns (at least 1); 0: no exits. */
__u64 exit_times_median(const struct exit_times *t, __u32 tgid);
void exit_times_free(struct exit_times *t);

#endif /* VMEXIT_EXIT_TIMES_H */
