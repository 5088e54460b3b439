// SPDX-License-Identifier: GPL-2.0
/* Two runs compared row by row (run_diff.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "rate_tests.h"
#include "run_diff.h"

void run_diff_free(struct run_diff *d)
{
	free(d->rows);
	free(d->only);
	memset(d, 0, sizeof(*d));
}

static int guest_of(const struct run_profile *p, const char *name)
{
	for (__u32 i = 0; i < p->nr_guests; i++) {
		if (!strcmp(p->guests[i].name, name))
			return (int)i;
	}
	return -1;
}

static bool level_compared(const struct run_diff *d, __u32 level)
{
	return level == PROF_REASON || (level == PROF_KEY && d->keys) ||
	       (level == PROF_VCPU && d->vcpus);
}

/* exposure: what rates and costs are per (guest seconds, or 1 run). */
static void side(struct diff_row *dr, int s, const struct prof_row *r, double guest_s,
		 double exposure)
{
	if (!r || guest_s <= 0)
		return;
	dr->count[s] = r->count;
	dr->completed[s] = r->completed;
	dr->rate[s] = r->count / exposure;
	dr->cost[s] = r->total_ns / exposure;
	dr->share[s] = r->total_ns / guest_s / 1e9;
	dr->mean_ns[s] = r->completed ? (double)r->total_ns / r->completed : 0;
	dr->median_ns[s] = prof_row_median(r);
	dr->p50[s] = prof_row_percentile(r, 50);
	dr->p99[s] = prof_row_percentile(r, 99);
}

static double rel_change(double before, double after)
{
	if (before == 0)
		return after == 0 ? 0 : HUGE_VAL;
	return after / before - 1;
}

/* A row of before or after, with its twin from the other run if any. */
static int add_row(struct run_diff *d, const struct run_profile *pb, const struct run_profile *pa,
		   const struct prof_id *ib, const struct prof_id *ia, const char *guest)
{
	const struct prof_row *rb = run_profile_find(pb, ib), *ra = run_profile_find(pa, ia);
	double tb = run_profile_guest_s(pb, ib->guest), ta = run_profile_guest_s(pa, ia->guest);
	double eb = d->o.per_run ? 1 : tb, ea = d->o.per_run ? 1 : ta;
	struct diff_row *dr;

	if (array_reserve(d->rows, d->nr, d->cap, 64))
		return -ENOMEM;
	dr = &d->rows[d->nr++];
	memset(dr, 0, sizeof(*dr));
	snprintf(dr->guest, sizeof(dr->guest), "%s", guest);
	dr->id = *ib;
	dr->parent = -1;
	side(dr, 0, rb, tb, eb);
	side(dr, 1, ra, ta, ea);
	dr->rate_change = rel_change(dr->rate[0], dr->rate[1]);
	dr->p_rate = rate_test_p(dr->count[0], eb, dr->count[1], ea);
	dr->lat_change = NAN;
	dr->p_lat = NAN;
	if (d->hist && rb && ra && rb->completed && ra->completed) {
		dr->lat_change = rel_change(dr->median_ns[0], dr->median_ns[1]);
		dr->p_lat = hist_test_p(rb->hist, ra->hist, NR_BUCKETS);
	}
	return 0;
}

static int compare_rows(struct run_diff *d, const struct run_profile *pb,
			const struct run_profile *pa)
{
	int err = 0;

	/* Rows of before, with their twins of after; then those of after only. */
	for (int pass = 0; pass < 2 && !err; pass++) {
		const struct run_profile *p = pass ? pa : pb, *q = pass ? pb : pa;

		for (__u32 i = 0; i < p->nr && !err; i++) {
			struct prof_id id = p->rows[i].id, other = id;
			const char *name = p->guests[id.guest].name;
			int g = guest_of(q, name);

			if (g < 0 || !level_compared(d, id.level))
				continue;
			other.guest = (__u32)g;
			if (pass && run_profile_find(q, &other))
				continue;	/* compared in the first pass */
			err = pass ? add_row(d, pb, pa, &other, &id, name) :
				     add_row(d, pb, pa, &id, &other, name);
		}
	}
	return err;
}

static int note_unmatched(struct run_diff *d, const struct run_profile *p,
			  const struct run_profile *q, const char *which)
{
	for (__u32 i = 0; i < p->nr_guests; i++) {
		if (guest_of(q, p->guests[i].name) >= 0)
			continue;
		if (array_reserve(d->only, d->nr_only, d->cap_only, 8))
			return -ENOMEM;
		snprintf(d->only[d->nr_only++], PROF_NAME_MAX + 8, "%s %s", which,
			 p->guests[i].name);
	}
	return 0;
}

static int significance(struct run_diff *d)
{
	double *p = calloc(2 * (size_t)d->nr + 1, sizeof(*p));
	unsigned char *rej = calloc(2 * (size_t)d->nr + 1, 1);
	__u32 n = 0;

	if (!p || !rej) {
		free(p);
		free(rej);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < d->nr; i++) {
		p[n++] = d->rows[i].p_rate;
		if (!isnan(d->rows[i].p_lat))
			p[n++] = d->rows[i].p_lat;
	}
	d->nr_tests = n;
	if (holm_reject(p, n, d->o.alpha, rej)) {
		free(p);
		free(rej);
		return -ENOMEM;
	}
	n = 0;
	for (__u32 i = 0; i < d->nr; i++) {
		struct diff_row *r = &d->rows[i];

		r->sig_rate = rej[n++] && fabs(r->rate_change) >= d->o.min_change;
		if (!isnan(r->p_lat))
			r->sig_lat = rej[n++] && fabs(r->lat_change) >= d->o.min_change;
		d->nr_sig += diff_row_sig(r);
	}
	free(p);
	free(rej);
	return 0;
}

static double dcost(const struct diff_row *r)
{
	return fabs(r->cost[1] - r->cost[0]);
}

/* Ranking: the bigger cost change first; among equals the significant, then by identity. */
static int rank_cmp(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;
	double ca = dcost(a), cb = dcost(b);

	if (ca != cb)
		return ca > cb ? -1 : 1;
	if (diff_row_sig(a) != diff_row_sig(b))
		return diff_row_sig(a) ? -1 : 1;
	if (a->id.level != b->id.level)
		return a->id.level < b->id.level ? -1 : 1;
	return strcmp(a->guest, b->guest);
}

static bool same_reason(const struct diff_row *a, const struct diff_row *b)
{
	return !strcmp(a->guest, b->guest) && a->id.isa == b->id.isa &&
	       a->id.reason == b->id.reason;
}

/* Reason rows by rank, each followed by its key rows, then its vCPU rows, by rank. */
static int order(struct run_diff *d)
{
	struct diff_row *out = calloc(d->nr ? d->nr : 1, sizeof(*out));
	__u32 n = 0;

	if (!out)
		return -ENOMEM;
	if (d->nr)	/* rows is NULL with none: qsort must not see it */
		qsort(d->rows, d->nr, sizeof(*d->rows), rank_cmp);
	for (__u32 i = 0; i < d->nr; i++) {
		__s32 parent = (__s32)n;

		if (d->rows[i].id.level != PROF_REASON)
			continue;
		out[n++] = d->rows[i];
		for (__u32 level = PROF_KEY; level <= PROF_VCPU; level++) {
			for (__u32 j = 0; j < d->nr; j++) {
				if (d->rows[j].id.level != level ||
				    !same_reason(&d->rows[j], &d->rows[i]))
					continue;
				out[n] = d->rows[j];
				out[n++].parent = parent;
			}
		}
	}
	free(d->rows);
	d->rows = out;
	d->nr = n;
	d->cap = n;
	return 0;
}

int run_diff_build(const struct run_profile *before, const struct run_profile *after,
		   const struct diff_opts *o, struct run_diff *d)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->o = *o;
	d->keys = before->keys && after->keys;
	d->vcpus = before->vcpus && after->vcpus;
	d->hist = before->hist && after->hist;
	err = compare_rows(d, before, after);
	if (!err)
		err = significance(d);
	if (!err)
		err = order(d);
	if (!err)
		err = note_unmatched(d, before, after, "before");
	if (!err)
		err = note_unmatched(d, after, before, "after");
	return err;
}
