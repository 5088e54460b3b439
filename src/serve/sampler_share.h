/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a sampler from a thread other than its owner (serve's scrapes): see the threads
 * paragraph of sampler.h.
 */
#ifndef VMEXIT_SAMPLER_SHARE_H
#define VMEXIT_SAMPLER_SHARE_H

#include "sampler.h"

struct sampler_snapshot {
	struct name_cache names;	/* the name of every guest taken (never asks /proc) */
	__u64 lost[NR_LOST];
	double elapsed_s;		/* at the sample the rows come from */
	__u64 samples;			/* that sample's number: equal numbers, equal rows */
	/* The exits in flight at that sample (tracker.h), and its CLOCK_MONOTONIC time, which
	 * their start_ns is read against. */
	struct inflight_exit *inflight;
	__u32 nr_inflight;
	__u32 inflight_cap;
	__u64 now_ns;
	/*
	 * Set by the caller: hands each row since the start (keyed by so.by) to take(), under
	 * the lock, for a consumer that keeps what it needs of each (serve: a few numbers of
	 * 10,000 rows of 2.3 KB). 0, or an error that ends the snapshot.
	 */
	int (*take)(void *ctx, const struct row *r);
	void *take_ctx;
};

/*
 * Thread-safe (see above): hands the rows since start to snap->take and copies their guests'
 * names and the loss counters into snap (initialised by the caller with
 * sampler_snapshot_init(), reused across calls). fresh: take a sample first, as sampler_sample() does. 0, or -ENOMEM.
 */
int sampler_snapshot(struct sampler *sp, bool fresh, struct sampler_snapshot *snap);
void sampler_snapshot_init(struct sampler_snapshot *snap);
void sampler_snapshot_free(struct sampler_snapshot *snap);

/* Calls fn with the rows since start, under the sampler's lock (any thread); fn's result. */
int sampler_with_rows(struct sampler *sp, int (*fn)(void *ctx, const struct row_table *cum),
		      void *ctx);

#endif
