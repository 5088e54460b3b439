// SPDX-License-Identifier: GPL-2.0
/* Rows: what every output prints, and their table; rows.h says what each holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array_grow.h"
#include "hist.h"
#include "rows.h"

void row_table_init(struct row_table *rt)
{
	memset(rt, 0, sizeof(*rt));
}

void row_table_reset(struct row_table *rt)
{
	rt->nr = 0;
	row_index_clear(&rt->index);
}

void row_table_free(struct row_table *rt)
{
	free(rt->rows);
	row_index_free(&rt->index);
	memset(rt, 0, sizeof(*rt));
}

int row_table_reindex(struct row_table *rt)
{
	bool added;

	row_index_clear(&rt->index);
	for (__u32 i = 0; i < rt->nr; i++) {
		__u32 *idx = row_index_get(&rt->index, &rt->rows[i].key, &added);

		if (!idx)
			return -ENOMEM;
		*idx = i;
	}
	return 0;
}

int row_table_retain(struct row_table *rt, bool (*keep)(void *ctx, const struct row_key *k),
		     void *ctx)
{
	__u32 kept = 0;

	for (__u32 i = 0; i < rt->nr; i++)
		if (keep(ctx, &rt->rows[i].key))
			rt->rows[kept++] = rt->rows[i];
	if (kept == rt->nr)
		return 0;
	rt->nr = kept;
	return row_table_reindex(rt);
}

bool row_forget_kept(void *forget, const struct row_key *k)
{
	const struct row_forget *f = forget;

	return !k->tgid || !f->gone(f->ctx, k->tgid, k->start);
}

struct row *row_table_get(struct row_table *rt, const struct row_key *k)
{
	__u32 *idx = row_index_find(&rt->index, k);
	struct row *r;
	bool added;

	if (idx)
		return &rt->rows[*idx];
	if (array_reserve(rt->rows, rt->nr, rt->cap, 64))
		return NULL;
	idx = row_index_get(&rt->index, k, &added);
	if (!idx)
		return NULL;
	*idx = rt->nr;
	r = &rt->rows[rt->nr++];
	memset(r, 0, sizeof(*r));
	r->key = *k;
	r->min_ns = ~0ULL;
	return r;
}

void row_add(struct row *dst, const struct row *src)
{
	dst->count += src->count;
	dst->completed += src->completed;
	dst->total_ns += src->total_ns;
	dst->oncpu_ns += src->oncpu_ns;
	dst->blocked_ns += src->blocked_ns;
	dst->runq_ns += src->runq_ns;
	dst->inflight_ns += src->inflight_ns;
	if (src->completed && src->min_ns < dst->min_ns)
		dst->min_ns = src->min_ns;
	if (src->completed && src->max_ns > dst->max_ns)
		dst->max_ns = src->max_ns;
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		dst->hist[b] += src->hist[b];
}

__u64 row_hist_total(const struct row *r)
{
	__u64 n = 0;

	for (__u32 b = 0; b < NR_BUCKETS; b++)
		n += r->hist[b];
	return n;
}

__u64 row_time_in_ns(const struct row *r)
{
	__s64 ns = (__s64)r->total_ns + r->inflight_ns;

	return ns > 0 ? (__u64)ns : 0;
}

__u64 hist_percentile(const __u64 *hist, __u64 min_ns, __u64 max_ns, double p)
{
	__u64 total = 0, want, cum = 0, v;
	__u32 b;

	for (b = 0; b < NR_BUCKETS; b++)
		total += hist[b];
	if (!total)
		return 0;
	/* The rank of the p-th percentile, 1-based: ceil(p% of total), at least 1. */
	want = (__u64)((double)total * p / 100.0);
	if ((double)want < (double)total * p / 100.0)
		want++;
	if (want < 1)
		want = 1;
	for (b = 0; b < NR_BUCKETS; b++) {
		cum += hist[b];
		if (cum >= want)
			break;
	}
	if (b >= NR_BUCKETS - 1)
		return max_ns;
	if (b < HIST_EXACT)
		v = b;
	else	/* middle of the bucket: within half a bucket (6.25 %) of any value in it */
		v = hist_bucket_low(b) + (hist_bucket_high(b) - hist_bucket_low(b)) / 2;
	if (v < min_ns)
		v = min_ns;
	if (v > max_ns)
		v = max_ns;
	return v;
}

__u64 row_percentile(const struct row *r, double p)
{
	return hist_percentile(r->hist, r->min_ns, r->max_ns, p);
}

void row_minmax_from_hist(struct row *d, __u64 life_min, __u64 life_max)
{
	__u64 lo = ~0ULL, hi = 0;
	__u32 b = 0, e = NR_BUCKETS;

	while (b < NR_BUCKETS && !d->hist[b])
		b++;
	while (e > b && !d->hist[e - 1])
		e--;
	if (b < NR_BUCKETS) {
		lo = hist_bucket_low(b);
		hi = hist_bucket_high(e - 1) - 1;
	}
	d->min_ns = lo > life_min ? lo : life_min;
	d->max_ns = hi < life_max ? hi : life_max;
}

int row_key_cmp(const struct row_key *a, const struct row_key *b)
{
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->vcpu != b->vcpu)
		return a->vcpu < b->vcpu ? -1 : 1;
	if (a->isa != b->isa)
		return a->isa < b->isa ? -1 : 1;
	if (a->reason != b->reason)
		return a->reason < b->reason ? -1 : 1;
	if (a->key.kind != b->key.kind)
		return a->key.kind < b->key.kind ? -1 : 1;
	if (a->key.key != b->key.key)
		return a->key.key < b->key.key ? -1 : 1;
	if (a->key.dir != b->key.dir)
		return a->key.dir < b->key.dir ? -1 : 1;
	if (a->key_end != b->key_end)
		return a->key_end < b->key_end ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}
