/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a scrape exports of a row since the start read straight from its coarse form
 * (model/coarse_rows.h), the runs it keeps: each run lies whole below or above every le bound
 * and whole in one native bucket (serve/expo_resolution.h makes them so), so a bound's count
 * and a native bucket's are sums of whole runs, about 40 of them, not of 282 kernel buckets
 * after expanding the row (2.3 KB written and read back per row, 10,000 rows a scrape).
 */
#ifndef VMEXIT_EXPO_RUNS_H
#define VMEXIT_EXPO_RUNS_H

#include "coarse_rows.h"
#include "native_hist.h"
#include "prom_exposition.h"

struct expo_runs {
	const struct hist_coarse *m;	/* NULL: not made yet, or a run straddles an edge */
	const struct expo_buckets *b;
	__u8 le[NR_BUCKETS];		/* run -> how many of b's bounds are at or below it */
	__u8 native[NR_BUCKETS];	/* run -> its native slot */
};

/* Where m's runs go in b's bounds and in the native buckets: 0, or -EINVAL when a run does not
 * lie whole in one of each (expo_counts_of() on the expanded row then). */
int expo_runs_init(struct expo_runs *er, const struct hist_coarse *m, const struct expo_buckets *b);
/* As expo_counts_of() and native_hist_of() of the row c expands to (coarse_row_expand()): c's
 * numbers, its cumulative bound counts into le (b->nr + 1), its native buckets into native
 * (NATIVE_SLOTS); c->le and c->native are left to the caller. */
void expo_counts_of_runs(struct expo_counts *out, const struct coarse_row *c,
			 const struct expo_runs *er, __u64 *le, __u64 *native);

#endif
