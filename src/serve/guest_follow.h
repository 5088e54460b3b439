/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Following guest names for a long-running exporter: serve -g NAME traces every VMM of that
 * name that runs, not only those that ran at its start. The kernel notes each process whose
 * threads make KVM events while not traced; every GUEST_FOLLOW_S those of a -g name join the
 * kernel's pid filter, and the followed VMMs that are gone leave it (a reused pid must not be
 * traced under the old name). -p pids stay in the filter throughout.
 */
#ifndef VMEXIT_GUEST_FOLLOW_H
#define VMEXIT_GUEST_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include "filter_limits.h"

/* Within a second of its first exit, a new VMM is in the filter. */
#define GUEST_FOLLOW_S		0.5
/* The kernel's pid filter holds 1024 pids, MAX_PID_FILTER of them for -p. */
#define GUEST_FOLLOW_MAX	(1024 - MAX_PID_FILTER)
/* The processes the kernel notes (its unwanted_vmms map). */
#define GUEST_FOLLOW_SEEN	1024

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
	/* The processes the kernel saw making KVM events while not traced (session_unwanted_vmms;
	 * tests replace it): how many, at most max. */
	int (*seen)(void *ctx, int *pids, int max);
	/* The guest name on pid's command line (proc_names.h guest_cmdline_name). */
	int (*name_of)(int pid, char *out, size_t len);
	/* Changes the kernel's filter (session_filter_pids); 0 or -errno. */
	int (*apply)(void *ctx, const int *add, int nr_add, const int *del, int nr_del);
	void *ctx;
	/* Scratch for a poll. */
	int want[GUEST_FOLLOW_MAX], add[GUEST_FOLLOW_MAX], del[GUEST_FOLLOW_MAX];
	int cand[GUEST_FOLLOW_MAX + GUEST_FOLLOW_SEEN];
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
