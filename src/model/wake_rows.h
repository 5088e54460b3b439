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
	/* A recording's (report): deliveries the event ring refused, said with the rest when
	 * ring is set (stat and top read cells, no ring). */
	bool ring;
	__u64 ring_lost;
	long long halt_poll_ns;		/* KVM's halt_poll_ns when read; -1: unknown */
	/* Deliveries KVM posted to a vCPU in guest mode (bpf/wake.bpf.c's wake_posted): taken
	 * with no exit, so in no row's count; the rows' posted, summed. posted_known: a live
	 * run's, or a recording's since format 1.9 (older ones kept none: said by no total). */
	__u64 posted;
	bool posted_known;
	/* Interrupts made pending for vCPUs never seen entering guest mode (bpf/wake_common.bpf.h
	 * wake_untimed): in no row. untimed_known: a live run's, or a recording's since format
	 * 1.10 (older ones kept none: said by no total). */
	__u64 untimed;
	bool untimed_known;
	/* Why there are no halted-exit rows at all (a recording keeps only the deliveries),
	 * said in their place by every format; NULL: the rows are there (maybe none). */
	const char *no_hlt;
};

void wake_snapshot_free(struct wake_snapshot *s);
/* A copy of src's arrays into dst (freed with wake_snapshot_free()); 0 or -ENOMEM (dst empty). */
int wake_snapshot_copy(struct wake_snapshot *dst, const struct wake_snapshot *src);
/* The order of the rows: <0, 0, >0 as x sorts before, with, after y. */
int wake_key_cmp(const struct wake_key *x, const struct wake_key *y);
int hlt_key_cmp(const struct hlt_key *x, const struct hlt_key *y);
/* Rows sorted by pid, process start, vCPU, source, vector (deliveries) and pid, process
 * start, vCPU (halts). */
void wake_snapshot_sort(struct wake_snapshot *s);

/* Keeps the rows of the nr pids in pids (nr 0: all). */
void wake_snapshot_keep(struct wake_snapshot *s, const int *pids, int nr);

const char *wake_source_name(__u32 source);
const char *wake_part_name(enum wake_part p);
const char *hlt_part_name(enum hlt_part p);
const char *wake_lost_name(enum wake_lost l);
/* The same as a label value: "slots", "cells", "threads", "ring". */
const char *wake_lost_key(enum wake_lost l);

/* The p-th percentile (0..100) of a log-linear histogram (include/hist.h), at most max. */
__u64 wake_hist_percentile(const __u64 *hist, __u64 max, double p);
/*
 * How many of the histogram's values are at most ns, to the bucket: a bucket counts when its
 * low end is <= ns (so the answer is high by at most the bucket holding ns, 1/8 of it).
 */
__u64 wake_hist_at_most(const __u64 *hist, __u64 ns);

/*
 * One delivery row as every view shows it (stat --wake's table, CSV and JSON; top --wake): one
 * definition of its average, percentiles and the parts' shares of its time.
 */
struct wake_row {
	__u64 count;
	__u64 avg_ns;
	__u64 p50_ns, p99_ns;
	double part_pct[NR_WAKE_PARTS];		/* of sum_ns; 0 when it is 0 */
};

/* One halted-exit row likewise: the halts' kinds as shares of its halts, parts of its time. */
struct hlt_row {
	double polled_pct, poll_slept_pct, slept_pct;	/* of halts */
	double part_pct[NR_HLT_PARTS];			/* of sum_ns */
};

/* part as a percentage of whole; 0 when whole is 0. */
double wake_pct(__u64 part, __u64 whole);
void wake_row_of(const struct wake_cell *c, struct wake_row *out);
void hlt_row_of(const struct hlt_cell *c, struct hlt_row *out);

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
