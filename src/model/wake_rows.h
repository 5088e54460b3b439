/* SPDX-License-Identifier: GPL-2.0 */
/* stat --wake: the kernel's delivery and halted-exit cells, and what is computed from them. */
#ifndef VMEXIT_WAKE_ROWS_H
#define VMEXIT_WAKE_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include "wake.h"

/* What the kernel kept, copied out: every delivery cell and halted-exit cell. */
struct wake_snapshot {
	struct wake_key *wkeys;
	struct wake_cell *wcells;
	size_t nr_wake;
	struct hlt_key *hkeys;
	struct hlt_cell *hcells;
	size_t nr_hlt;
	__u64 lost[NR_WAKE_LOST];
	long long halt_poll_ns;		/* KVM's halt_poll_ns when read; -1: unknown */
};

void wake_snapshot_free(struct wake_snapshot *s);
/* A copy of src's arrays into dst (freed with wake_snapshot_free()); 0 or -ENOMEM (dst empty). */
int wake_snapshot_copy(struct wake_snapshot *dst, const struct wake_snapshot *src);
/* Rows sorted by pid, process start, vCPU, source, vector (deliveries) and pid, process
 * start, vCPU (halts). */
void wake_snapshot_sort(struct wake_snapshot *s);

/* Keeps the rows of the nr pids in pids (nr 0: all). */
void wake_snapshot_keep(struct wake_snapshot *s, const int *pids, int nr);

const char *wake_source_name(__u32 source);
const char *wake_part_name(enum wake_part p);
const char *hlt_part_name(enum hlt_part p);
const char *wake_lost_name(enum wake_lost l);
/* The same as a label value: "slots", "cells", "threads". */
const char *wake_lost_key(enum wake_lost l);

/* The p-th percentile (0..100) of a log-linear histogram (include/hist.h), at most max. */
__u64 wake_hist_percentile(const __u64 *hist, __u64 max, double p);
/*
 * How many of the histogram's values are at most ns, to the bucket: a bucket counts when its
 * low end is <= ns (so the answer is high by at most the bucket holding ns, 1/8 of it).
 */
__u64 wake_hist_at_most(const __u64 *hist, __u64 ns);

/* Halt-poll advice of one VM: its vCPUs' halts summed. */
struct hlt_advice {
	__u32 tgid;
	__u64 halts;
	__u64 poll_ns;			/* CPU time spent polling */
	__u64 hist[NR_BUCKETS];		/* halt start to wake-up */
};

#define HLT_ADVICE_WINDOWS_US(X) X(10) X(50) X(100) X(200) X(500) X(1000) X(5000)

/* One advice per VMM (pid and start) of s (sorted), in out (room for s->nr_hlt); returns how
 * many. */
size_t hlt_advice_of(const struct wake_snapshot *s, struct hlt_advice *out);

#endif /* VMEXIT_WAKE_ROWS_H */
