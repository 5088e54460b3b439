/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rows since the start whose histogram keeps only the buckets a consumer reads: serve exports
 * each row's counts below its le bounds and in its native buckets, every one a sum of whole
 * kernel buckets, so a row kept as sums over the common refinement of those edges (about 40
 * buckets, not 282) exports the same numbers exactly. At 10,000 rows that is 3.7 MB, not the
 * 23.7 MB of full rows (bench_serve_scale). The per-interval rows and stat/top keep the kernel's
 * resolution: they print percentiles.
 */
#ifndef VMEXIT_COARSE_ROWS_H
#define VMEXIT_COARSE_ROWS_H

#include <stdbool.h>
#include "rows.h"

/* A partition of the kernel's NR_BUCKETS buckets into nr runs of neighbours. */
struct hist_coarse {
	__u32 nr;
	__u16 slot[NR_BUCKETS];		/* kernel bucket -> its run */
	__u16 first[NR_BUCKETS];	/* run -> its first kernel bucket (nr of them) */
};

/* Runs starting at each kernel bucket b with starts[b] set (bucket 0 always starts one). */
void hist_coarse_init(struct hist_coarse *m, const bool starts[NR_BUCKETS]);

/* A row with hist summed by run: m->nr values in hist. */
struct coarse_row {
	struct row_key key;
	__u64 count, completed, total_ns, min_ns, max_ns;
	__u64 oncpu_ns, blocked_ns, runq_ns;
	__u64 hist[];
};

struct coarse_rows {
	const struct hist_coarse *m;
	unsigned char *rows;		/* nr rows of stride bytes, in the order first seen */
	size_t stride;
	__u32 nr, cap;
	struct row_index index;		/* key -> position */
};

void coarse_rows_init(struct coarse_rows *cr, const struct hist_coarse *m);
void coarse_rows_reset(struct coarse_rows *cr);
void coarse_rows_free(struct coarse_rows *cr);

static inline struct coarse_row *coarse_rows_at(const struct coarse_rows *cr, __u32 i)
{
	return (struct coarse_row *)(cr->rows + (size_t)i * cr->stride);
}

/* The row of key k, added zeroed when absent; NULL only out of memory. *at: where it was last
 * (checked, then updated: no lookup when the row has not moved); may be NULL. */
struct coarse_row *coarse_rows_get(struct coarse_rows *cr, const struct row_key *k, __u32 *at);
/* d's numbers added to c, its buckets summed into their runs. */
void coarse_row_add(const struct coarse_rows *cr, struct coarse_row *c, const struct row *d);
/* d's numbers but its buckets (the caller sums those into c->hist by cr->m->slot). */
void coarse_row_add_counts(struct coarse_row *c, const struct row *d);
/* Keeps only the rows keep() says yes to, in their order; 0 or -ENOMEM. */
int coarse_rows_retain(struct coarse_rows *cr, bool (*keep)(void *ctx, const struct row_key *k),
		       void *ctx);
/*
 * c as a full row: each run's count in its first kernel bucket, the others 0. Any sum over
 * whole runs (an le bound's, a native bucket's) is the one of the rows added; a percentile
 * is not (the run's first edge).
 */
void coarse_row_expand(const struct coarse_rows *cr, const struct coarse_row *c, struct row *r);

#endif /* VMEXIT_COARSE_ROWS_H */
