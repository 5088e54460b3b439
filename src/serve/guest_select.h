/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve -g NAME: the guests exported, chosen in userspace from the rows' guests. The kernel
 * counts every VMM from its first exit (no pid filter), so a guest that lives 50 ms is counted
 * whole: its rows are kept once its name is known (the kernel's copy of its command line, read
 * at its first event, outlives the process), and the rows of other VMMs are dropped. A kernel
 * pid filter fed by a poll of new VMMs (guest_follow.h) missed the exits before the poll.
 */
#ifndef VMEXIT_GUEST_SELECT_H
#define VMEXIT_GUEST_SELECT_H

#include <stdbool.h>
#include <linux/types.h>

enum guest_pick {
	GUEST_UNKNOWN,		/* no name yet (the pid as text): neither kept nor dropped */
	GUEST_WANTED,
	GUEST_UNWANTED,
};

struct guest_select {
	const int *pids;		/* -p */
	int nr_pids;
	const char *const *names;	/* -g */
	int nr_names;
};

/* Whether the guest of VMM tgid, named name (name_cache: the pid as text if unknown), is one
 * of the -p pids or -g names. */
enum guest_pick guest_select_pick(const struct guest_select *s, __u32 tgid, const char *name);

#endif /* VMEXIT_GUEST_SELECT_H */
