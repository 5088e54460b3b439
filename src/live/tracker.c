// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "cells.h"
#include "tracker.h"
#include "hist.h"
#include "proc_names.h"

int tracker_init(struct tracker *t, const struct cell_source *src, enum group_by by,
		 __s32 vcpu_filter, bool resolve_names)
{
	memset(t, 0, sizeof(*t));
	t->src = *src;
	t->by = by;
	t->vcpu_filter = vcpu_filter;
	t->resolve_names = resolve_names;
	row_table_init(&t->cum);
	row_table_init(&t->reaped);
	return 0;
}

void tracker_free(struct tracker *t)
{
	for (__u32 i = 0; i < t->cap; i++)
		cell_seen_drop(&t->prev[i]);
	free(t->prev);
	free(t->vcpu);
	free(t->state);
	free(t->freed);
	free(t->cum_at);
	free(t->inflight);
	free(t->reaped_inflight);
	free(t->stuck);
	free(t->cum_stuck);
	free(t->pending);
	row_table_free(&t->cum);
	row_table_free(&t->reaped);
	coarse_rows_free(&t->ccum);
	memset(t, 0, sizeof(*t));
}

void tracker_coarse_cum(struct tracker *t, const struct hist_coarse *m)
{
	t->coarse = m;
	coarse_rows_init(&t->ccum, m);
}

static int tracker_reserve(struct tracker *t, __u32 n)
{
	struct cell_seen *prev;
	__u32 *freed, *cum_at;
	__s32 *vcpu;
	__u8 *state;
	__u32 cap;

	if (n <= t->cap)
		return 0;
	cap = t->cap ? t->cap : 64;
	while (cap < n)
		cap *= 2;
	prev = realloc(t->prev, (size_t)cap * sizeof(*prev));
	if (!prev)
		return -ENOMEM;
	memset(prev + t->cap, 0, (size_t)(cap - t->cap) * sizeof(*prev));
	t->prev = prev;
	vcpu = realloc(t->vcpu, (size_t)cap * sizeof(*vcpu));
	if (!vcpu)
		return -ENOMEM;
	t->vcpu = vcpu;
	freed = realloc(t->freed, (size_t)cap * sizeof(*freed));
	if (!freed)
		return -ENOMEM;
	t->freed = freed;
	cum_at = realloc(t->cum_at, (size_t)cap * sizeof(*cum_at));
	if (!cum_at)
		return -ENOMEM;
	/* No row yet: an index past any table's end. */
	memset(cum_at + t->cap, 0xff, (size_t)(cap - t->cap) * sizeof(*cum_at));
	t->cum_at = cum_at;
	state = realloc(t->state, (size_t)cap);
	if (!state)
		return -ENOMEM;
	memset(state + t->cap, CELL_UNSEEN, cap - t->cap);
	t->state = state;
	t->cap = cap;
	return 0;
}

static const struct cell *cell_of(const struct tracker *t, __u32 i)
{
	return t->src.at ? t->src.at(t->src.ctx, i) : &t->src.cells[i];
}

/* The vCPU of a cell whose exits did not say: another cell of the same thread (not of another
 * VMM's thread that had its tid before), else the thread's name (QEMU's "CPU 3/KVM") as the
 * kernel saw it, else as /proc says now. */
static __s32 resolve_vcpu(struct tracker *t, __u32 i)
{
	const struct cell_key *c = &t->prev[i].key;	/* the cell's, as found */
	__s32 v;

	for (__u32 j = 0; j < t->seen; j++) {
		const struct cell_key *o = &t->prev[j].key;

		if (j != i && t->state[j] == CELL_LIVE && o->tid == c->tid &&
		    o->tgid == c->tgid && o->proc_start == c->proc_start &&
		    t->vcpu[j] >= 0)
			return t->vcpu[j];
	}
	v = cell_key_vcpu(&t->prev[i].key);
	if (v >= 0 || !t->resolve_names)
		return v;
	return vcpu_for_thread(c->tgid, c->tid);
}

/* Cell i has a complete key: follow it from zero. */
static bool cell_found(struct tracker *t, __u32 i)
{
	const struct cell *c = cell_of(t, i);

	if (!c || !cell_ready(c))
		return false;		/* being filled in right now: next time */
	cell_seen_reset(&t->prev[i], &c->key);
	t->vcpu[i] = c->key.vcpu;
	t->state[i] = CELL_LIVE;
	if (t->vcpu[i] < 0)
		t->vcpu[i] = resolve_vcpu(t, i);
	if (t->found)
		t->found(t->found_ctx, &t->prev[i].key);
	return true;
}

void tracker_discover(struct tracker *t)
{
	__u32 n = t->src.nr_cells(t->src.ctx);

	if (tracker_reserve(t, n))
		return;
	while (t->seen < n && cell_found(t, t->seen))
		t->seen++;
	/* Cells handed back come again with a new thread's key, in any order. */
	for (__u32 k = 0; k < t->nr_freed;) {
		if (cell_found(t, t->freed[k]))
			t->freed[k] = t->freed[--t->nr_freed];
		else
			k++;
	}
}

__u32 tracker_live_cells(const struct tracker *t)
{
	__u32 n = 0;

	for (__u32 i = 0; i < t->seen; i++)
		n += t->state[i] == CELL_LIVE;
	return n;
}

/* Room for one more in a list of exits in flight (*v, *nr of them, *cap allocated). */
static struct inflight_exit *inflight_push(struct inflight_exit **v, __u32 *nr, __u32 *cap)
{
	struct inflight_exit *e;

	if (*nr == *cap) {
		__u32 c = *cap ? *cap * 2 : 16;

		e = realloc(*v, c * sizeof(*e));
		if (!e)
			return NULL;
		*v = e;
		*cap = c;
	}
	return &(*v)[(*nr)++];
}

/* Into the run's list of stuck exits: one per thread, reason and kind (completed or left by its
 * thread), the longest, with how many there were. */
static int cum_stuck_add(struct tracker *t, const struct inflight_exit *x)
{
	struct inflight_exit *e;

	for (__u32 j = 0; j < t->nr_cum_stuck; j++) {
		e = &t->cum_stuck[j];
		if (e->tid != x->tid || e->tgid != x->tgid || e->proc_start != x->proc_start ||
		    e->isa != x->isa || e->reason != x->reason || e->completed != x->completed)
			continue;
		if (x->end_ns - x->start_ns > e->end_ns - e->start_ns) {
			__u64 nr = e->nr;

			*e = *x;
			e->nr += nr;
		} else {
			e->nr += x->nr;
		}
		return 0;
	}
	e = inflight_push(&t->cum_stuck, &t->nr_cum_stuck, &t->cum_stuck_cap);
	if (!e)
		return -ENOMEM;
	*e = *x;
	return 0;
}

static int inflight_add(struct tracker *t, __u32 i, const struct cell *now, bool ended,
			bool reaping)
{
	struct inflight_exit *e;

	if (reaping)
		e = inflight_push(&t->reaped_inflight, &t->nr_reaped_inflight,
				  &t->reaped_inflight_cap);
	else
		e = inflight_push(&t->inflight, &t->nr_inflight, &t->inflight_cap);
	if (!e)
		return -ENOMEM;
	inflight_of_cell(e, &t->prev[i].key, t->vcpu[i], now->inflight_ts);
	e->end_ns = ended ? now->ended_ts : 0;
	if (t->split && now->if_split_ts == now->inflight_ts) {
		e->blocked_ns = now->if_blocked_ns;
		e->runq_ns = now->if_runq_ns;
		e->off_ts = now->if_off_ts;
		e->off_runq = now->if_off_runq;
	}
	if (!ended)
		return 0;
	/* It never completes: counted once here; stuck only if it lasted stuck_ns. */
	t->cum_ended++;
	if (t->stuck_ns && inflight_age(e, 0) >= t->stuck_ns)
		return cum_stuck_add(t, e);
	return 0;
}

/* The exits of cell i that took stuck_ns or more since the last look: the longest (of the
 * kernel's epoch: the interval), with their number, into this sample's list and the run's. */
static int stuck_add(struct tracker *t, __u32 i, const struct cell *now)
{
	struct inflight_exit *e = inflight_push(&t->stuck, &t->nr_stuck, &t->stuck_cap);

	if (!e)
		return -ENOMEM;
	inflight_of_cell(e, &t->prev[i].key, t->vcpu[i], now->stuck_ts);
	e->completed = true;
	e->nr = now->stuck_done - t->prev[i].stuck_done;
	e->end_ns = now->stuck_ts + now->stuck_lat_ns;
	if (t->split) {
		e->blocked_ns = now->stuck_blocked_ns;
		e->runq_ns = now->stuck_runq_ns;
	}
	return cum_stuck_add(t, e);
}

/* Cell i's thread has exited and its final values are in: back to the kernel, or (no way
 * back) never looked at again. */
static void cell_retire(struct tracker *t, __u32 i)
{
	cell_seen_drop(&t->prev[i]);	/* read for the last time */
	if (!t->src.release) {
		t->state[i] = CELL_GONE;
		return;
	}
	t->src.release(t->src.ctx, i);
	t->state[i] = CELL_FREED;
	t->freed[t->nr_freed++] = i;
	t->released++;
}

/* The delta's numbers but its buckets; its min and max when the cell's interval ones are of
 * closed_epoch (else the buckets say: delta_row()). */
static void delta_counts(struct row *d, const struct cell *now, const struct cell_seen *prev,
			 __u32 closed_epoch, bool split)
{
	d->count = now->started - prev->started;
	d->completed = now->count - prev->count;
	d->total_ns = now->total_ns - prev->total_ns;
	d->oncpu_ns = d->blocked_ns = d->runq_ns = 0;
	d->inflight_ns = 0;	/* the sample adds it to interval rows only (pending) */
	if (split) {
		d->oncpu_ns = now->oncpu_ns - prev->oncpu_ns;
		d->blocked_ns = now->blocked_ns - prev->blocked_ns;
		d->runq_ns = now->runq_ns - prev->runq_ns;
		/*
		 * The kernel adds an exit to the three parts and then to the total: a copy taken
		 * in between would break their sum for one interval. The parts are the total.
		 */
		d->total_ns = d->oncpu_ns + d->blocked_ns + d->runq_ns;
	}
	d->min_ns = ~0ULL;
	d->max_ns = 0;
	if (d->completed && now->iv_epoch == closed_epoch) {
		d->min_ns = now->iv_min_ns;
		d->max_ns = now->iv_max_ns;
	}
}

/* An exit completed while the epoch turned: min and max from the delta's buckets. */
static bool delta_minmax_from_hist(const struct row *d, const struct cell *now,
				   __u32 closed_epoch)
{
	return d->completed && now->iv_epoch != closed_epoch;
}

static void delta_row(struct row *d, const struct cell *now, const struct cell_seen *prev,
		      __u32 closed_epoch, bool split)
{
	delta_counts(d, now, prev, closed_epoch, split);
	/* No branch per bucket: a sample takes every cell's buckets, and only exits that
	 * completed while the epoch turned need the first and last bucket that moved. Outside
	 * the run last seen, the buckets were zero. Modulo 2^32, as the kernel's wrap. */
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		d->hist[b] = now->hist[b];
	bucket_run_sub(&prev->hist, now->hist, d->hist);
	if (delta_minmax_from_hist(d, now, closed_epoch))
		row_minmax_from_hist(d, now->min_ns, now->max_ns);
}

static void row_key_for(const struct tracker *t, __u32 i, struct row_key *k)
{
	const struct cell_key *ck = &t->prev[i].key;

	*k = (struct row_key){};
	k->tgid = t->by == BY_REASON ? 0 : ck->tgid;
	k->start = t->by == BY_REASON ? 0 : ck->proc_start;
	k->vcpu = t->by == BY_VCPU ? t->vcpu[i] : -1;
	k->isa = ck->isa;
	k->reason = ck->reason;
}

void tracker_restart(struct tracker *t)
{
	row_table_reset(&t->cum);
	coarse_rows_reset(&t->ccum);
	row_table_reset(&t->reaped);
	t->nr_inflight = 0;
	t->nr_reaped_inflight = 0;
	t->nr_pending = 0;
	t->nr_stuck = t->stuck_from = 0;
	t->nr_cum_stuck = 0;
	t->cum_ended = 0;
}

/*
 * Cell i's row in cum: where it was last time when that row still has its key (no lookup per
 * cell and sample: serve samples 10,000 cells per scrape), else looked up and remembered. The
 * key check covers rows forgotten or reordered since (sampler_forget(), tracker_restart()) and
 * a cell reused by another thread.
 */
static struct row *cum_row(struct tracker *t, __u32 i, struct row_table *cum,
			   const struct row_key *k)
{
	__u32 at = t->cum_at[i];
	struct row *c;

	if (at < cum->nr && hashmap_key_eq(&cum->rows[at].key, k, sizeof(*k)))
		return &cum->rows[at];
	c = row_table_get(cum, k);
	if (c)
		t->cum_at[i] = c - cum->rows;
	return c;
}

/*
 * How much of cell i's in-flight time the interval gains beyond its completed exits: the age at
 * its end (this sample, or the thread's end) of the exit in flight then, minus the age at its
 * start (the last sample) of the one in flight then. Summed over intervals, an exit's share is
 * exactly its latency (or, left by its thread, its age then; dropped, nothing), each interval's
 * share is the part inside it. Signed: an exit dropped (overwritten) takes back its share.
 */
static __s64 inflight_gain(const struct tracker *t, const struct cell *now,
			   const struct cell_seen *prev, bool ended)
{
	__s64 ns = 0;

	if (!t->last_ns || !t->now_ns)
		return 0;
	if (prev->inflight_ts)
		ns -= (__s64)(t->last_ns - prev->inflight_ts);
	if (now->inflight_ts)
		ns += (__s64)((ended ? now->ended_ts : t->now_ns) - now->inflight_ts);
	return ns;
}

/* Whether any of now's buckets differs from the run last seen (cell_seen_fit() on it first). */
static bool buckets_moved(const struct bucket_run *r, const __u32 *now)
{
	for (__u32 j = 0; j < r->n; j++)
		if (bucket_run_get(r, j) != now[r->lo + j])
			return true;
	return false;
}

/*
 * Cell i since the last look: its delta into rows (and into cum), its exit in flight listed
 * (reaping: for the next sample); handed back once its thread has exited. The delta's min and
 * max come from the interval epoch closed_epoch when the cell's are of it, else from its
 * buckets narrowed by its lifetime extremes.
 */
static int cell_take(struct tracker *t, __u32 i, __u32 closed_epoch, struct row_table *rows,
		     struct row_table *cum, bool reaping)
{
	const struct cell *cl;
	struct cell now;
	struct row_key k = {};
	struct row *r, *c;
	struct row d;
	bool ended, wanted, moved, reread, stored = false;
	__s64 gain;

	cl = cell_of(t, i);
	if (!cl)
		return -ENOMEM;
	/* Read after `ended`: once it is set the values below are final. */
	ended = cell_ended(cl);
	if (reaping && !ended)
		return 0;
	/* The counters first, then (as one copy did) the buckets, if an exit began or completed:
	 * at 40,000 cells most of a scrape's cells are idle, and their 1.1 KB of buckets and the
	 * walks over them are the sample's main cost. */
	memcpy(&now, cl, offsetof(struct cell, hist));
	/*
	 * The kernel counts an exit started before completed, but the copy is not taken at once:
	 * an exit begun and completed while it is taken can show in count only. Its start came
	 * first: never more exits completed than begun.
	 */
	if (now.count > now.started)
		now.started = now.count;
	moved = now.started != t->prev[i].started || now.count != t->prev[i].count;
	/* A bucket counted after its exit's count (cell_seen.h: recheck), or the final values. */
	reread = !moved && (t->prev[i].recheck || ended);
	t->prev[i].recheck = moved;
	if (moved || reread)
		memcpy(now.hist, cl->hist, sizeof(now.hist));
	wanted = t->vcpu_filter < 0 || t->vcpu[i] == t->vcpu_filter;
	/* Before anything is counted: out of memory here leaves the cell for the next look. */
	if ((moved || reread) && cell_seen_fit(&t->prev[i], &now))
		return -ENOMEM;
	/* Only a bucket that came late makes a row: an idle cell adds none to an interval. */
	if (reread)
		moved = buckets_moved(&t->prev[i].hist, now.hist);
	if (wanted && now.inflight_ts && inflight_add(t, i, &now, ended, reaping))
		return -ENOMEM;
	if (wanted && now.stuck_done != t->prev[i].stuck_done && stuck_add(t, i, &now))
		return -ENOMEM;
	gain = wanted ? inflight_gain(t, &now, &t->prev[i], ended) : 0;
	if (gain) {
		struct inflight_time *p;

		if (array_reserve(t->pending, t->nr_pending, t->pending_cap, 16))
			return -ENOMEM;
		p = &t->pending[t->nr_pending++];
		row_key_for(t, i, &p->key);
		p->ns = gain;
	}
	if (wanted && moved) {
		delta_counts(&d, &now, &t->prev[i], closed_epoch, t->split);
		row_key_for(t, i, &k);
		/*
		 * serve (rows since the start only, at coarse resolution): the buckets' deltas go
		 * straight into the coarse row's runs as the run is stored, one pass over the run
		 * instead of four over all the buckets, unless the delta's own buckets are needed
		 * (its min and max).
		 */
		if (!rows && cum && t->coarse && !delta_minmax_from_hist(&d, &now, closed_epoch)) {
			struct coarse_row *cc = coarse_rows_get(&t->ccum, &k, &t->cum_at[i]);

			if (!cc)
				return -ENOMEM;
			coarse_row_add_counts(cc, &d);
			bucket_run_advance(&t->prev[i].hist, now.hist, t->coarse->slot, cc->hist);
			stored = true;
			cum = NULL;
		} else {
			delta_row(&d, &now, &t->prev[i], closed_epoch, t->split);
		}
		r = rows ? row_table_get(rows, &k) : NULL;
		if (rows && !r)
			return -ENOMEM;
		if (cum && t->coarse) {
			struct coarse_row *cc = coarse_rows_get(&t->ccum, &k, &t->cum_at[i]);

			if (!cc)
				return -ENOMEM;
			coarse_row_add(&t->ccum, cc, &d);
			cum = NULL;
		}
		c = cum ? cum_row(t, i, cum, &k) : NULL;
		if (cum && !c)
			return -ENOMEM;
		if (r)
			row_add(r, &d);
		if (c)
			row_add(c, &d);
	}
	if (moved && !stored)
		cell_seen_store(&t->prev[i], &now);
	else
		cell_seen_store_counts(&t->prev[i], &now);
	if (ended)
		cell_retire(t, i);
	return 0;
}

int tracker_reap(struct tracker *t)
{
	for (__u32 i = 0; i < t->seen; i++) {
		/* The epoch is still open: ~0 takes min and max from the buckets. */
		if (t->state[i] == CELL_LIVE && cell_take(t, i, ~0U, &t->reaped, NULL, true))
			return -ENOMEM;
	}
	return 0;
}

/* What tracker_reap() read since the last sample, into this one. */
static int take_reaped(struct tracker *t, struct row_table *out)
{
	for (__u32 j = 0; j < t->reaped.nr; j++) {
		const struct row *d = &t->reaped.rows[j];
		struct row *r = out ? row_table_get(out, &d->key) : NULL;
		struct row *c = t->coarse ? NULL : row_table_get(&t->cum, &d->key);
		struct coarse_row *cc = t->coarse ? coarse_rows_get(&t->ccum, &d->key, NULL) : NULL;

		if ((out && !r) || (!c && !cc))
			return -ENOMEM;
		if (r)
			row_add(r, d);
		if (c)
			row_add(c, d);
		else
			coarse_row_add(&t->ccum, cc, d);
	}
	row_table_reset(&t->reaped);
	for (__u32 j = 0; j < t->nr_reaped_inflight; j++) {
		struct inflight_exit *e = inflight_push(&t->inflight, &t->nr_inflight,
							&t->inflight_cap);

		if (!e)
			return -ENOMEM;
		*e = t->reaped_inflight[j];
	}
	t->nr_reaped_inflight = 0;
	return 0;
}

int tracker_sample(struct tracker *t, __u32 closed_epoch, struct row_table *out)
{
	tracker_discover(t);
	/* Cells still unresolved get another chance once per interval, while threads live. */
	for (__u32 i = 0; i < t->seen; i++) {
		if (t->state[i] == CELL_LIVE && t->vcpu[i] < 0 && t->by == BY_VCPU)
			t->vcpu[i] = resolve_vcpu(t, i);
	}
	if (out)
		row_table_reset(out);
	t->nr_inflight = 0;
	/* The last sample's stuck exits go; those reaped since stay, first. */
	if (t->stuck_from) {
		t->nr_stuck -= t->stuck_from;
		memmove(t->stuck, t->stuck + t->stuck_from, t->nr_stuck * sizeof(*t->stuck));
	}
	if (take_reaped(t, out))
		return -ENOMEM;
	for (__u32 i = 0; i < t->seen; i++) {
		if (t->state[i] == CELL_LIVE && cell_take(t, i, closed_epoch, out, &t->cum, false))
			return -ENOMEM;
	}
	/* Into the interval's rows that exist: a cell alone in flight makes no row. */
	for (__u32 j = 0; out && j < t->nr_pending; j++) {
		__u32 *at = row_index_find(&out->index, &t->pending[j].key);

		if (at)
			out->rows[*at].inflight_ns += t->pending[j].ns;
	}
	t->nr_pending = 0;
	t->last_ns = t->now_ns;
	t->stuck_from = t->nr_stuck;
	return 0;
}
