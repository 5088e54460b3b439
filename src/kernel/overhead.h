/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --overhead: what vmexit's own BPF programs cost, from the kernel's run-time statistics,
 * which are on only while vmexit runs (and then cost two clock reads per program run).
 */
#ifndef VMEXIT_OVERHEAD_H
#define VMEXIT_OVERHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "bpf_run_stats.h"
#include "tracing_info.h"

#define OVERHEAD_MAX_PROGS	40	/* the exit programs, and --wake's 11 */

struct overhead {
	int stats_fd;		/* keeps the statistics on; 0: the sysctl had them on; <0 -errno */
	int nr;
	int nr_exit;		/* progs[0, nr_exit): the exit programs; then --wake's */
	struct expo_prog progs[OVERHEAD_MAX_PROGS];
	int fds[OVERHEAD_MAX_PROGS];
	__u64 base_ns, base_cnt;	/* at start: what ran before we looked */
	__u64 base_wake_ns, base_wake_cnt;
	struct bpf_cost cost;		/* since start, all of our programs */
};

struct bpf_program;

/*
 * Turns the statistics of the nr programs in list on and takes the baseline; prints why and
 * returns -errno if it can't.
 */
int overhead_start(struct overhead *o, struct bpf_program *const *list, int nr);
/* --wake's programs, counted apart from then on; 0 or -errno (said). */
int overhead_add_wake(struct overhead *o, struct bpf_program *const *list, int nr);
/* Refreshes cost; 0 or -errno. */
int overhead_sample(struct overhead *o);
void overhead_stop(struct overhead *o);
#endif /* VMEXIT_OVERHEAD_H */
