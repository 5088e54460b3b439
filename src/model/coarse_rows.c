// SPDX-License-Identifier: GPL-2.0
/* Rows since the start at a coarser histogram resolution (coarse_rows.h says whose and why). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "coarse_rows.h"

void hist_coarse_init(struct hist_coarse *m, const bool starts[NR_BUCKETS])
{
	m->nr = 0;
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (!b || starts[b])
			m->first[m->nr++] = b;
		m->slot[b] = m->nr - 1;
	}
}

void coarse_rows_init(struct coarse_rows *cr, const struct hist_coarse *m)
{
	memset(cr, 0, sizeof(*cr));
	cr->m = m;
	cr->stride = sizeof(struct coarse_row) + (size_t)m->nr * sizeof(__u64);
}

void coarse_rows_reset(struct coarse_rows *cr)
{
	cr->nr = 0;
	row_index_clear(&cr->index);
}

void coarse_rows_free(struct coarse_rows *cr)
{
	free(cr->rows);
	row_index_free(&cr->index);
	cr->rows = NULL;
	cr->nr = cr->cap = 0;
}

struct coarse_row *coarse_rows_get(struct coarse_rows *cr, const struct row_key *k, __u32 *at)
{
	struct coarse_row *c;
	__u32 *idx;
	bool added;

	if (at && *at < cr->nr && hashmap_key_eq(&coarse_rows_at(cr, *at)->key, k, sizeof(*k)))
		return coarse_rows_at(cr, *at);
	idx = row_index_find(&cr->index, k);
	if (!idx) {
		if (cr->nr == cr->cap) {
			__u32 cap = cr->cap ? cr->cap * 2 : 64;
			unsigned char *p = reallocarray(cr->rows, cap, cr->stride);

			if (!p)
				return NULL;
			cr->rows = p;
			cr->cap = cap;
		}
		idx = row_index_get(&cr->index, k, &added);
		if (!idx)
			return NULL;
		*idx = cr->nr++;
		c = coarse_rows_at(cr, *idx);
		memset(c, 0, cr->stride);
		c->key = *k;
		c->min_ns = ~0ULL;
	}
	if (at)
		*at = *idx;
	return coarse_rows_at(cr, *idx);
}

void coarse_row_add_counts(struct coarse_row *c, const struct row *d)
{
	c->count += d->count;
	c->completed += d->completed;
	c->total_ns += d->total_ns;
	c->oncpu_ns += d->oncpu_ns;
	c->blocked_ns += d->blocked_ns;
	c->runq_ns += d->runq_ns;
	if (d->completed && d->min_ns < c->min_ns)
		c->min_ns = d->min_ns;
	if (d->completed && d->max_ns > c->max_ns)
		c->max_ns = d->max_ns;
}

void coarse_row_add(const struct coarse_rows *cr, struct coarse_row *c, const struct row *d)
{
	const __u16 *slot = cr->m->slot;

	coarse_row_add_counts(c, d);
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		c->hist[slot[b]] += d->hist[b];
}

int coarse_rows_retain(struct coarse_rows *cr, bool (*keep)(void *ctx, const struct row_key *k),
		       void *ctx)
{
	__u32 kept = 0;
	bool added;

	for (__u32 i = 0; i < cr->nr; i++) {
		if (!keep(ctx, &coarse_rows_at(cr, i)->key))
			continue;
		if (kept != i)
			memcpy(coarse_rows_at(cr, kept), coarse_rows_at(cr, i), cr->stride);
		kept++;
	}
	if (kept == cr->nr)
		return 0;
	cr->nr = kept;
	row_index_clear(&cr->index);
	for (__u32 i = 0; i < cr->nr; i++) {
		__u32 *idx = row_index_get(&cr->index, &coarse_rows_at(cr, i)->key, &added);

		if (!idx)
			return -ENOMEM;
		*idx = i;
	}
	return 0;
}

void coarse_row_expand(const struct coarse_rows *cr, const struct coarse_row *c, struct row *r)
{
	memset(r, 0, sizeof(*r));
	r->key = c->key;
	r->count = c->count;
	r->completed = c->completed;
	r->total_ns = c->total_ns;
	r->min_ns = c->min_ns;
	r->max_ns = c->max_ns;
	r->oncpu_ns = c->oncpu_ns;
	r->blocked_ns = c->blocked_ns;
	r->runq_ns = c->runq_ns;
	for (__u32 s = 0; s < cr->m->nr; s++)
		r->hist[cr->m->first[s]] = c->hist[s];
}
