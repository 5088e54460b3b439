/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a sampler from a thread other than its owner (serve's scrapes): see the threads
 * paragraph of sampler.h.
 */
#ifndef VMEXIT_SAMPLER_SHARE_H
#define VMEXIT_SAMPLER_SHARE_H

#include "sampler.h"

struct sampler_snapshot {
	/*
	 * The sampler's sample, copied under its lock: lost, elapsed_s, samples (equal numbers,
	 * equal rows), the exits in flight at it and now_ns read when copied (their start_ns is
	 * read against it), names. Its tables point into this snapshot, never the sampler's;
	 * the rows since the start go to take() instead (rows and cum NULL).
	 */
	struct sample s;
	struct name_cache names;	/* the name of every guest taken (never asks /proc) */
	struct inflight_exit *inflight;	/* s.inflight's room */
	__u32 inflight_cap;
	/*
	 * Set by the caller: hands each row since the start (keyed by so.by) to take(), under
	 * the lock, for a consumer that keeps what it needs of each (serve: a few numbers of
	 * 10,000 rows of 2.3 KB). 0, or an error that ends the snapshot.
	 */
	int (*take)(void *ctx, const struct row *r);
	void *take_ctx;
	/* so.hist_coarse: the row take() gets, expanded (coarse_row_expand()); else NULL. */
	struct row *expanded;
	/* so.hist_coarse, when set: each row since the start as kept (at so.hist_coarse's
	 * resolution) instead of take() on its expansion. */
	int (*take_coarse)(void *ctx, const struct coarse_row *c);
};

/*
 * Thread-safe (see above): hands the rows since start to snap->take and copies their guests'
 * names and the loss counters into snap (initialised by the caller with
 * sampler_snapshot_init(), reused across calls). fresh: take a sample first, as sampler_sample() does. 0, or -ENOMEM.
 */
int sampler_snapshot(struct sampler *sp, bool fresh, struct sampler_snapshot *snap);
void sampler_snapshot_init(struct sampler_snapshot *snap);
void sampler_snapshot_free(struct sampler_snapshot *snap);

/* Calls fn with the key of each row since start (repeats skipped: a guest's rows follow each
 * other mostly), under the sampler's lock (any thread); its first non-zero result, or 0. */
int sampler_with_keys(struct sampler *sp, int (*fn)(void *ctx, const struct row_key *k),
		      void *ctx);

/* Calls fn with the rows since start (empty with so.hist_coarse), under the sampler's lock
 * (any thread); fn's result. */
int sampler_with_rows(struct sampler *sp, int (*fn)(void *ctx, const struct row_table *cum),
		      void *ctx);

#endif
