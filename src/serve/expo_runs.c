// SPDX-License-Identifier: GPL-2.0
/* A scrape's counts from coarse rows (expo_runs.h says why). */
#include <errno.h>
#include <string.h>
#include "expo_runs.h"

/* How many of b's bounds are at or below kernel bucket k: the first le count it is in. */
static __u32 le_index(const struct expo_buckets *b, __u32 k)
{
	__u32 j = 0;

	while (j < b->nr && b->bucket[j] <= k)
		j++;
	return j;
}

int expo_runs_init(struct expo_runs *er, const struct hist_coarse *m, const struct expo_buckets *b)
{
	er->m = NULL;
	er->b = b;
	for (__u32 s = 0; s < m->nr; s++) {
		er->le[s] = le_index(b, m->first[s]);
		er->native[s] = native_slot_of(m->first[s]);
	}
	for (__u32 k = 0; k < NR_BUCKETS; k++) {
		__u32 s = m->slot[k];

		if (er->le[s] != le_index(b, k) || er->native[s] != native_slot_of(k))
			return -EINVAL;
	}
	er->m = m;
	return 0;
}

void expo_counts_of_runs(struct expo_counts *out, const struct coarse_row *c,
			 const struct expo_runs *er, __u64 *le, __u64 *native)
{
	__u32 nr = er->b->nr;
	__u64 cum = 0;

	out->key = c->key;
	out->count = c->count;
	out->total_ns = c->total_ns;
	out->oncpu_ns = c->oncpu_ns;
	out->blocked_ns = c->blocked_ns;
	out->runq_ns = c->runq_ns;
	memset(le, 0, (nr + 1) * sizeof(*le));
	memset(native, 0, NATIVE_SLOTS * sizeof(*native));
	for (__u32 s = 0; s < er->m->nr; s++) {
		le[er->le[s]] += c->hist[s];
		native[er->native[s]] += c->hist[s];
	}
	/* Each bound's own runs, then everything below it. */
	for (__u32 j = 0; j <= nr; j++) {
		cum += le[j];
		le[j] = cum;
	}
}
