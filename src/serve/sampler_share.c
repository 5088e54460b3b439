// SPDX-License-Identifier: GPL-2.0
/*
 * A sampler shared with another thread (serve's HTTP thread): snapshots of the rows since the
 * start, the loss counters, the exits in flight and the guests' names, copied under the
 * sampler's lock while its owner keeps sampling.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sampler_share.h"

void sampler_snapshot_init(struct sampler_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
}

void sampler_snapshot_free(struct sampler_snapshot *snap)
{
	free(snap->inflight);
	free(snap->expanded);
	name_cache_free(&snap->names);
}

/* The exits in flight at the last sample, read against the clock now. */
static int copy_inflight(struct sampler *sp, struct sampler_snapshot *snap)
{
	const struct tracker *t = &sp->t;
	struct timespec ts;

	if (t->nr_inflight > snap->inflight_cap) {
		struct inflight_exit *e = realloc(snap->inflight, t->nr_inflight * sizeof(*e));

		if (!e)
			return -ENOMEM;
		snap->inflight = e;
		snap->inflight_cap = t->nr_inflight;
	}
	if (t->nr_inflight)
		memcpy(snap->inflight, t->inflight, t->nr_inflight * sizeof(*t->inflight));
	snap->s.inflight = snap->inflight;
	snap->s.nr_inflight = t->nr_inflight;
	for (__u32 i = 0; i < t->nr_inflight; i++) {
		const struct inflight_exit *e = &t->inflight[i];

		if (name_cache_set_at(&snap->names, e->tgid, e->proc_start,
				      name_cache_get_at(&sp->names, e->tgid, e->proc_start)))
			return -ENOMEM;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snap->s.now_ns = (__u64)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return 0;
}

/* The rows since start to take(), each one whole: expanded from the coarse rows, unless the
 * consumer takes them as kept (take_coarse). */
static int take_rows(struct sampler *sp, struct sampler_snapshot *snap)
{
	const struct row_table *cum = &sp->t.cum;
	const struct coarse_rows *cc = &sp->t.ccum;
	int err;

	for (__u32 i = 0; i < cum->nr; i++) {
		err = snap->take(snap->take_ctx, &cum->rows[i]);
		if (err)
			return err;
	}
	if (!sp->t.coarse)
		return 0;
	for (__u32 i = 0; snap->take_coarse && i < cc->nr; i++) {
		err = snap->take_coarse(snap->take_ctx, coarse_rows_at(cc, i));
		if (err)
			return err;
	}
	if (snap->take_coarse)
		return 0;
	if (!snap->expanded) {
		snap->expanded = malloc(sizeof(*snap->expanded));
		if (!snap->expanded)
			return -ENOMEM;
	}
	for (__u32 i = 0; i < cc->nr; i++) {
		coarse_row_expand(cc, coarse_rows_at(cc, i), snap->expanded);
		err = snap->take(snap->take_ctx, snap->expanded);
		if (err)
			return err;
	}
	return 0;
}

static int copy_locked(struct sampler *sp, struct sampler_snapshot *snap)
{
	const struct row_key *named = NULL;
	int err = take_rows(sp, snap);

	if (err)
		return err;
	/* Only the names of these rows: guests forgotten since the last copy go. */
	name_cache_clear(&snap->names);
	for (__u32 i = 0; i < sampler_cum_nr(sp); i++) {
		const struct row_key *k = sampler_cum_key(sp, i);

		/* A guest's rows mostly follow each other: its name is copied once. */
		if (!k->tgid || (named && named->tgid == k->tgid && named->start == k->start))
			continue;
		named = k;
		/* Every tgid in the rows was named when its cell was discovered: no /proc here. */
		if (name_cache_set_at(&snap->names, k->tgid, k->start,
				      name_cache_get_at(&sp->names, k->tgid, k->start)))
			return -ENOMEM;
	}
	if (copy_inflight(sp, snap))
		return -ENOMEM;
	memcpy(snap->s.lost, sp->lost, sizeof(snap->s.lost));
	snap->s.elapsed_s = sp->elapsed_s;
	snap->s.samples = sp->samples;
	snap->s.names = &snap->names;
	return 0;
}

int sampler_snapshot(struct sampler *sp, bool fresh, struct sampler_snapshot *snap)
{
	int err = 0;

	pthread_mutex_lock(&sp->lock);
	if (fresh)
		err = sampler_sample_locked(sp);
	if (!err)
		err = copy_locked(sp, snap);
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int sampler_with_keys(struct sampler *sp, int (*fn)(void *ctx, const struct row_key *k),
		      void *ctx)
{
	const struct row_key *prev = NULL;
	int err = 0;

	pthread_mutex_lock(&sp->lock);
	for (__u32 i = 0; i < sampler_cum_nr(sp) && !err; i++) {
		const struct row_key *k = sampler_cum_key(sp, i);

		if (!prev || prev->tgid != k->tgid || prev->start != k->start)
			err = fn(ctx, k);
		prev = k;
	}
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int sampler_with_rows(struct sampler *sp, int (*fn)(void *ctx, const struct row_table *cum),
		      void *ctx)
{
	int err;

	pthread_mutex_lock(&sp->lock);
	err = fn(ctx, &sp->t.cum);
	pthread_mutex_unlock(&sp->lock);
	return err;
}
