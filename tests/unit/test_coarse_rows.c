// SPDX-License-Identifier: GPL-2.0
/*
 * serve's rows since the start at the exposition's resolution (model/coarse_rows.h, built by
 * serve/expo_resolution.h): random deltas added both to full rows (row_add, as stat keeps them)
 * and to coarse rows; every number serve exports (count, sums, each le bound's count, each
 * native bucket) must be the full rows' exactly, for the default bounds and for bounds that
 * are not powers of two, also after rows are forgotten (retain) and with a stale position hint.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "coarse_rows.h"
#include "expo_resolution.h"
#include "expo_runs.h"
#include "native_hist.h"
#include "prom_exposition.h"
#include "../xorshift64.h"

#define GUESTS	7
#define REASONS	5
#define DELTAS	400

static __u64 rng = XORSHIFT64_SEED;

static struct row_key key_of(__u32 g, __u32 r)
{
	return (struct row_key){ .tgid = 100 + g, .vcpu = -1, .isa = 1, .reason = r,
				 .start = 5000 + g };
}

/* A delta as the tracker makes one: a few buckets anywhere (runs' edges too), sums. */
static void random_delta(struct row *d, const struct row_key *k)
{
	memset(d, 0, sizeof(*d));
	d->key = *k;
	for (int j = 0; j < 6; j++) {
		__u32 b = xorshift64(&rng) % NR_BUCKETS;
		__u64 n = 1 + xorshift64(&rng) % 70000;

		d->hist[b] += n;
		d->count += n;
	}
	d->completed = d->count - xorshift64(&rng) % 2;
	d->total_ns = xorshift64(&rng) >> 20;
	d->oncpu_ns = xorshift64(&rng) >> 24;
	d->blocked_ns = xorshift64(&rng) >> 24;
	d->runq_ns = xorshift64(&rng) >> 24;
	d->min_ns = 1 + xorshift64(&rng) % 1000;
	d->max_ns = d->min_ns + xorshift64(&rng) % 100000;
}

/* What serve exports of the coarse row of k, against the full row's. */
static void check_same(const struct coarse_rows *cr, const struct coarse_row *c,
		       const struct row *full, const struct expo_buckets *bk)
{
	static struct row ex;
	__u64 le_c[EXPO_MAX_BOUNDS + 1], le_f[EXPO_MAX_BOUNDS + 1];
	__u64 nat_c[NATIVE_SLOTS], nat_f[NATIVE_SLOTS];

	CHECK(c != NULL);
	if (!c)
		return;
	coarse_row_expand(cr, c, &ex);
	CHECK(!memcmp(&ex.key, &full->key, sizeof(ex.key)));
	CHECK_EQ_U64(ex.count, full->count);
	CHECK_EQ_U64(ex.completed, full->completed);
	CHECK_EQ_U64(ex.total_ns, full->total_ns);
	CHECK_EQ_U64(ex.oncpu_ns, full->oncpu_ns);
	CHECK_EQ_U64(ex.blocked_ns, full->blocked_ns);
	CHECK_EQ_U64(ex.runq_ns, full->runq_ns);
	CHECK_EQ_U64(ex.min_ns, full->min_ns);
	CHECK_EQ_U64(ex.max_ns, full->max_ns);
	CHECK_EQ_U64(row_hist_total(&ex), row_hist_total(full));
	expo_le_of_hist(ex.hist, bk, le_c);
	expo_le_of_hist(full->hist, bk, le_f);
	for (__u32 i = 0; i <= bk->nr; i++)
		CHECK_EQ_U64(le_c[i], le_f[i]);
	native_hist_of(ex.hist, nat_c);
	native_hist_of(full->hist, nat_f);
	for (__u32 i = 0; i < NATIVE_SLOTS; i++)
		CHECK_EQ_U64(nat_c[i], nat_f[i]);
	/* What a scrape takes from the coarse row as kept (expo_runs.h), unexpanded. */
	{
		struct expo_runs er;
		struct expo_counts ec;

		CHECK(!expo_runs_init(&er, cr->m, bk));
		expo_counts_of_runs(&ec, c, &er, le_c, nat_c);
		CHECK(!memcmp(&ec.key, &full->key, sizeof(ec.key)));
		CHECK_EQ_U64(ec.count, full->count);
		CHECK_EQ_U64(ec.total_ns, full->total_ns);
		CHECK_EQ_U64(ec.oncpu_ns, full->oncpu_ns);
		CHECK_EQ_U64(ec.blocked_ns, full->blocked_ns);
		CHECK_EQ_U64(ec.runq_ns, full->runq_ns);
		for (__u32 i = 0; i <= bk->nr; i++)
			CHECK_EQ_U64(le_c[i], le_f[i]);
		for (__u32 i = 0; i < NATIVE_SLOTS; i++)
			CHECK_EQ_U64(nat_c[i], nat_f[i]);
	}
}

static bool keep_even(void *ctx, const struct row_key *k)
{
	(void)ctx;
	return k->tgid % 2 == 0;
}

static void test_bounds(const struct expo_buckets *bk)
{
	static struct hist_coarse m;
	struct coarse_rows cr;
	struct row_table full;
	static struct row d;
	__u32 at[GUESTS][REASONS];

	expo_resolution(bk, &m);
	coarse_rows_init(&cr, &m);
	row_table_init(&full);
	memset(at, 0xff, sizeof(at));
	for (int i = 0; i < DELTAS; i++) {
		__u32 g = xorshift64(&rng) % GUESTS, r = xorshift64(&rng) % REASONS;
		struct row_key k = key_of(g, r);
		struct coarse_row *c;
		struct row *f;

		random_delta(&d, &k);
		/* Every other add with a hint that points elsewhere: never trusted unchecked. */
		if (i % 2 && cr.nr > 1)
			at[g][r] = (at[g][r] + 1) % cr.nr;
		c = coarse_rows_get(&cr, &k, &at[g][r]);
		f = row_table_get(&full, &k);
		CHECK(c && f);
		if (!c || !f)
			break;
		coarse_row_add(&cr, c, &d);
		row_add(f, &d);
		if (i == DELTAS / 2) {
			/* Forget the odd guests in both; the rest must be found (re-indexed). */
			CHECK(!coarse_rows_retain(&cr, keep_even, NULL));
			CHECK(!row_table_retain(&full, keep_even, NULL));
		}
	}
	CHECK_EQ_U64(cr.nr, full.nr);
	for (__u32 i = 0; i < full.nr; i++) {
		const struct row *f = &full.rows[i];

		check_same(&cr, coarse_rows_get(&cr, &f->key, NULL), f, bk);
		/* In the same order as the full rows: first seen first. */
		CHECK(!memcmp(&coarse_rows_at(&cr, i)->key, &f->key, sizeof(f->key)));
	}
	coarse_rows_free(&cr);
	row_table_free(&full);
}

int main(void)
{
	struct expo_buckets bk;
	static struct hist_coarse m;

	/* The default bounds are powers of two, native edges: the runs are the native buckets. */
	expo_buckets_default(&bk);
	expo_resolution(&bk, &m);
	CHECK_EQ_U64(m.nr, NATIVE_SLOTS);
	test_bounds(&bk);
	/* Bounds inside native buckets (3 of the kernel's 8 sub-buckets of one power): each
	 * adds a run. */
	bk.nr = 0;
	for (__u32 b = 40; b < 44; b++)
		bk.bucket[bk.nr++] = b;
	bk.bucket[bk.nr++] = 201;
	bk.bucket[bk.nr++] = NR_BUCKETS - 1;
	expo_resolution(&bk, &m);
	CHECK(m.nr > NATIVE_SLOTS && m.nr <= NATIVE_SLOTS + bk.nr);
	test_bounds(&bk);
	/* The default bounds' runs straddle these bounds: a scrape expands the rows instead. */
	{
		static struct hist_coarse def;
		struct expo_buckets d;
		struct expo_runs er;

		expo_buckets_default(&d);
		expo_resolution(&d, &def);
		CHECK(expo_runs_init(&er, &def, &bk) == -EINVAL);
		CHECK(er.m == NULL);
		CHECK(!expo_runs_init(&er, &m, &bk) && er.m == &m);
	}
	CHECK_DONE("coarse_rows");
}
