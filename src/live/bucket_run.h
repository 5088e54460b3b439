/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A cell's buckets as last seen, as the tracker keeps them (cell_seen.h): only the run lo to
 * lo + n - 1 that has counted so far (the kernel's buckets outside it are still zero), each
 * value in 1, 2 or 4 bytes, the fewest that hold the run's largest value so far. The kernel's
 * buckets are 32-bit, so 4 bytes hold any of them: a narrower run is widened (from the cell's
 * next values, before any is stored) and never narrowed, so every value stored is the kernel's
 * exactly. At 40,000 cells a run of 4-byte values was 17 MB of serve's 66 (bench_serve_scale);
 * a cell's bucket stays under 256 for its first 256 exits at least, and under 65,536 for its
 * first 65,536: a guest that lives seconds never needs more.
 */
#ifndef VMEXIT_BUCKET_RUN_H
#define VMEXIT_BUCKET_RUN_H

#include "vmexit.h"

struct bucket_run {
	void *v;			/* n values of 1 << shift bytes; NULL when n is 0 */
	__u16 lo, n;
	__u8 shift;			/* 0, 1 or 2: 1, 2 or 4 bytes a value */
};

/* Widens r (lower lo, higher lo + n, wider values) to hold every value of now (NR_BUCKETS
 * of them), keeping what it holds: 0, or -ENOMEM with r unchanged. */
int bucket_run_fit(struct bucket_run *r, const __u32 *now);
/* now's run into r: bucket_run_fit(r, now) first, or wider values are cut. */
void bucket_run_store(struct bucket_run *r, const __u32 *now);
/* Bucket lo + j as stored (j < n). */
__u32 bucket_run_get(const struct bucket_run *r, __u32 j);
/* d[b] = now[b] - r's value of b modulo 2^32 (the kernel's wrap), for the buckets of the run
 * only: d's others are left as they are. */
void bucket_run_sub(const struct bucket_run *r, const __u32 *now, __u64 *d);
/*
 * A sample of a coarse row's cell in one pass over the run (bucket_run_fit(r, now) first): each
 * bucket's delta now[b] - r's value modulo 2^32 added to sums[slot[b]], and now stored. The
 * buckets outside the run are zero in now and in r, so they add nothing.
 */
void bucket_run_advance(struct bucket_run *r, const __u32 *now, const __u16 *slot, __u64 *sums);
void bucket_run_free(struct bucket_run *r);

#endif /* VMEXIT_BUCKET_RUN_H */
