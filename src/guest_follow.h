/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Following guest names for a long-running exporter: serve -g NAME traces every VMM of that
 * name that runs, not only those that ran at its start. Every GUEST_FOLLOW_S the VMMs of each
 * name are looked up in /proc; new ones join the kernel's pid filter, those gone leave it (a
 * reused pid must not be traced under the old name). -p pids stay in the filter throughout.
 */
#ifndef VMEXIT_GUEST_FOLLOW_H
#define VMEXIT_GUEST_FOLLOW_H

#include <stdbool.h>
#include "filter_limits.h"

/* Within a second of its start, a new VMM is in the filter. */
#define GUEST_FOLLOW_S		0.5
/* The kernel's pid filter holds 1024 pids, MAX_PID_FILTER of them for -p. */
#define GUEST_FOLLOW_MAX	(1024 - MAX_PID_FILTER)

struct guest_follow {
	const char *const *names;
	int nr_names;
	const int *fixed;		/* the -p pids */
	int nr_fixed;
	int pids[GUEST_FOLLOW_MAX];	/* the names' VMMs now in the kernel's filter */
	int nr;
	double next;
	bool verbose;			/* say which pids join and leave */
	bool said_full, said_err;	/* each said once */
	/* The VMMs of a guest name (proc_names.h guests_find; tests replace it). */
	int (*find)(const char *name, int *pids, int max);
	/* Changes the kernel's filter (session_filter_pids); 0 or -errno. */
	int (*apply)(void *ctx, const int *add, int nr_add, const int *del, int nr_del);
	void *ctx;
	/* Scratch for a poll. */
	int want[GUEST_FOLLOW_MAX], add[GUEST_FOLLOW_MAX], del[GUEST_FOLLOW_MAX];
};

/*
 * Follows names (nr_names of them; none: nothing to do) besides the fixed pids; pids[nr]
 * are the names' VMMs already in the kernel's filter.
 */
void guest_follow_init(struct guest_follow *g, const char *const *names, int nr_names,
		       const int *fixed, int nr_fixed, const int *pids, int nr);
/* Looks again when GUEST_FOLLOW_S have passed since the last look (now: seconds, any clock). */
void guest_follow_poll(struct guest_follow *g, double now);

#endif /* VMEXIT_GUEST_FOLLOW_H */
