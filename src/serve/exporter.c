// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include "bpf_run_stats.h"
#include "exporter.h"
#include "native_hist.h"
#include "prom_protobuf.h"
#include "series_cap.h"
#include "version.h"

static __u64 unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Room for one more row taken: 0 or -ENOMEM. */
static int take_room(struct exporter *x)
{
	__u32 per = x->buckets->nr + 1;

	if (x->nr_series == x->series_cap) {
		__u32 cap = x->series_cap ? x->series_cap * 2 : 256;
		struct expo_series *s = reallocarray(x->series, cap, sizeof(*s));
		struct expo_counts *c;
		__u64 *le, *nat;

		if (!s)
			return -ENOMEM;
		x->series = s;
		c = reallocarray(x->counts, cap, sizeof(*c));
		if (!c)
			return -ENOMEM;
		x->counts = c;
		le = reallocarray(x->le_counts, (size_t)cap * per, sizeof(*le));
		if (!le)
			return -ENOMEM;
		x->le_counts = le;
		nat = reallocarray(x->native_counts, (size_t)cap * NATIVE_SLOTS, sizeof(*nat));
		if (!nat)
			return -ENOMEM;
		x->native_counts = nat;
		x->series_cap = cap;
	}
	return 0;
}

/* Under the sampler's lock: of a row, only what the exposition shows. */
static int take_row(void *ctx, const struct row *r)
{
	struct exporter *x = ctx;
	__u32 per = x->buckets->nr + 1;

	if (take_room(x))
		return -ENOMEM;
	/* Its le pointer is set once all are taken: le_counts may move until then. */
	expo_counts_of(&x->counts[x->nr_series], r, x->buckets,
		       x->le_counts + (size_t)x->nr_series * per);
	native_hist_of(r->hist, x->native_counts + (size_t)x->nr_series * NATIVE_SLOTS);
	x->nr_series++;
	return 0;
}

/* take_row() of the row c expands to, from its runs. */
static int take_coarse_row(void *ctx, const struct coarse_row *c)
{
	struct exporter *x = ctx;
	__u32 per = x->buckets->nr + 1;

	if (take_room(x))
		return -ENOMEM;
	expo_counts_of_runs(&x->counts[x->nr_series], c, &x->runs,
			    x->le_counts + (size_t)x->nr_series * per,
			    x->native_counts + (size_t)x->nr_series * NATIVE_SLOTS);
	x->nr_series++;
	return 0;
}

int exporter_init(struct exporter *x, struct sampler *sp, const struct expo_buckets *buckets,
		  bool by_vcpu, __u64 keep_ms, __u64 stuck_ns)
{
	struct utsname u;
	int err;

	memset(x, 0, sizeof(*x));
	x->sp = sp;
	x->buckets = buckets;
	x->by_vcpu = by_vcpu;
	x->stuck_ns = stuck_ns;
	x->max_series = SERIES_CAP_DEFAULT;
	x->guests.start_ms = unix_ms();
	x->guests.keep_ms = keep_ms;
	snprintf(x->kernel, sizeof(x->kernel), "%s", uname(&u) ? "unknown" : u.release);
	sampler_snapshot_init(&x->snap);
	x->snap.take = take_row;
	x->snap.take_ctx = x;
	/* Runs that straddle a bound or a native bucket (none that expo_resolution() makes):
	 * the rows expanded, as any other consumer gets them. */
	if (sp->t.coarse && !expo_runs_init(&x->runs, sp->t.coarse, buckets))
		x->snap.take_coarse = take_coarse_row;
	err = pthread_mutex_init(&x->guests_lock, NULL);
	return -err;
}

void exporter_watch_progs(struct exporter *x, struct bpf_program *const *list, int nr,
			  bool run_stats)
{
	x->run_stats = run_stats;
	x->nr_progs = bpf_run_stats_progs(list, nr, x->progs, x->prog_fds, EXPORTER_MAX_PROGS);
}

struct expiry {
	struct serve_guests *guests;
	__u64 now_ms;
	struct exporter *x;
};

static bool guest_expired(void *ctx, __u32 tgid, __u64 start)
{
	const struct expiry *e = ctx;
	const struct guest_select *sel = e->x->select;

	/* serve -g: another VMM's rows, once its name says so, are not kept either. */
	if (sel && guest_select_pick(sel, tgid, name_cache_get_at(&e->x->sp->names, tgid, start)) ==
		   GUEST_UNWANTED)
		return true;
	return serve_guests_expired(e->guests, tgid, start, e->now_ms);
}

static int learn_guest(void *ctx, const struct row_key *k)
{
	struct expiry *e = ctx;

	return serve_guests_learn_one(e->guests, k->tgid, k->start, e->now_ms);
}

void exporter_tick(struct exporter *x)
{
	struct expiry e = { &x->guests, unix_ms(), x };

	pthread_mutex_lock(&x->guests_lock);
	/* Guests are learnt here too, not only at scrapes: with nobody scraping, those that
	 * end must still expire. Out of memory: learnt at a later tick or scrape. */
	sampler_with_keys(x->sp, learn_guest, &e);
	serve_guests_check(&x->guests, e.now_ms);
	/*
	 * Guests over for longer than --keep leave the sampler's rows and names, then the
	 * guest list: a server that runs for months holds only what it exports. Out of memory:
	 * they stay (unexported) until the next tick.
	 */
	if (!sampler_forget(x->sp, guest_expired, &e) &&
	    !(x->keys && key_series_forget(x->keys, guest_expired, &e)))
		serve_guests_prune(&x->guests, e.now_ms);
	pthread_mutex_unlock(&x->guests_lock);
}

/* The guest (tgid, start) if its series are exported now, else NULL. */
static const struct serve_guest *exported_guest(struct exporter *x, __u32 tgid, __u64 start,
						__u64 now_ms)
{
	const struct serve_guest *g = serve_guests_find(&x->guests, tgid, start);

	if (!g || !serve_guest_exported(&x->guests, g, now_ms))
		return NULL;
	if (x->select && guest_select_pick(x->select, tgid, name_cache_get_at(&x->snap.names, tgid,
									      start)) != GUEST_WANTED)
		return NULL;
	/*
	 * An ended VMM whose pid later ran a VMM of the same guest label (names that escape
	 * alike count) would export the same label sets twice (an invalid exposition): the
	 * later one's series replace it, starting from 0, as a restarted target's counters do
	 * (a reset to rate()).
	 */
	if (g->ended_ms && name_cache_shadowed(&x->snap.names, tgid, start, expo_same_guest_label))
		return NULL;
	return g;
}

/* serve --keys: the guests whose series are exported, named as those are. */
static bool key_guest(void *ctx, __u32 tgid, __u64 start, const char **guest, __u64 *created_ms)
{
	struct exporter *x = ctx;
	const struct serve_guest *g = exported_guest(x, tgid, start, x->scrape_ms);

	if (!g)
		return false;
	*guest = name_cache_get_at(&x->snap.names, tgid, start);
	*created_ms = g->created_ms;
	return true;
}

/* serve -g: the running guests it exports (the kernel counts other VMMs too). */
static __u32 selected_running(struct exporter *x)
{
	const struct serve_guest_map_slot *slot;
	__u32 n = 0;

	hashmap_for_each(slot, &x->guests.map) {
		const struct serve_guest *g = &slot->val;

		n += !g->ended_ms &&
		     guest_select_pick(x->select, g->tgid, name_cache_get_at(&x->snap.names, g->tgid,
									    g->start)) == GUEST_WANTED;
	}
	return n;
}

/* serve --keys: the key rows since the start, under the sampler's lock. */
static int take_keys(void *ctx, const struct row_table *key_cum)
{
	struct exporter *x = ctx;

	return key_series_take(x->keys, key_cum, key_guest, x);
}

/*
 * The exported series: those of guests still exported, with their names and start times, in
 * the rows' order (the taken series are kept in place, the others dropped).
 */
static int select_series(struct exporter *x, __u64 now_ms, struct expo_input *in)
{
	__u32 per = x->buckets->nr + 1, kept = 0;
	struct row_key prev = {};

	for (__u32 i = 0; i < x->nr_series; i++) {
		struct expo_counts c = x->counts[i];
		const struct serve_guest *g;

		/* Rows come grouped by guest mostly: each guest learnt once. */
		if (!i || prev.tgid != c.key.tgid || prev.start != c.key.start) {
			if (serve_guests_learn_one(&x->guests, c.key.tgid, c.key.start, now_ms))
				return -ENOMEM;
		}
		prev = c.key;
		g = exported_guest(x, c.key.tgid, c.key.start, now_ms);
		if (!g)
			continue;
		c.le = x->le_counts + (size_t)i * per;
		c.native = x->native_counts + (size_t)i * NATIVE_SLOTS;
		x->counts[kept] = c;
		x->series[kept++] = (struct expo_series){
			.guest = name_cache_get_at(&x->snap.names, c.key.tgid, c.key.start),
			.created_ms = g->created_ms,
		};
	}
	in->series = x->series;
	in->counts = x->counts;
	in->nr_series = kept;
	in->guests = x->select ? selected_running(x) : serve_guests_running(&x->guests);
	return 0;
}

static int pid_cmp(const void *a, const void *b)
{
	const struct exporter_pid *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* serve --wake: the guests the scrape exports (in->series), by pid. 0 or -ENOMEM. */
static int exported_pids(struct exporter *x, const struct expo_input *in)
{
	x->nr_pids = 0;
	for (__u32 i = 0; i < in->nr_series; i++) {
		const struct row_key *k = &in->counts[i].key;
		struct exporter_pid *last = x->nr_pids ? &x->pids[x->nr_pids - 1] : NULL;

		if (last && last->tgid == k->tgid && last->start == k->start)
			continue;
		if (x->nr_pids == x->cap_pids) {
			__u32 cap = x->cap_pids ? 2 * x->cap_pids : 64;
			struct exporter_pid *p = reallocarray(x->pids, cap, sizeof(*p));

			if (!p)
				return -ENOMEM;
			x->pids = p;
			x->cap_pids = cap;
		}
		x->pids[x->nr_pids++] = (struct exporter_pid){ k->tgid, k->start,
			in->series[i].guest, in->series[i].created_ms };
	}
	/* Rows come grouped by guest mostly, not always: sorted, then one per (pid, start). */
	qsort(x->pids, x->nr_pids, sizeof(*x->pids), pid_cmp);
	return 0;
}

/* A wake cell's VMM (pid and start time), if the scrape exports its exit series. */
static bool wake_guest(void *ctx, __u32 tgid, __u64 start, const char **guest,
		       __u64 *created_ms)
{
	struct exporter *x = ctx;
	const struct exporter_pid key = { .tgid = tgid, .start = start };
	const struct exporter_pid *p = bsearch(&key, x->pids, x->nr_pids, sizeof(*x->pids),
					       pid_cmp);

	if (!p)
		return false;
	*guest = p->guest;
	*created_ms = p->created_ms;
	return true;
}

static int take_wake(void *ctx, const struct wake_snapshot *w)
{
	struct exporter *x = ctx;

	return wake_series_take(&x->wake_series, w, wake_guest, x);
}

int exporter_snapshot(struct exporter *x)
{
	x->nr_series = 0;
	return sampler_snapshot(x->sp, true, &x->snap);
}

int exporter_render(void *ctx, enum expo_format fmt, struct expo_buf *out)
{
	struct exporter *x = ctx;
	struct expo_input in = {
		.by_vcpu = x->by_vcpu,
		.buckets = x->buckets,
		.version = VMEXIT_VERSION,
		.kernel = x->kernel,
		.start_ms = x->guests.start_ms,
		/* --split: the sampler's rows carry on CPU / blocked / runq. */
		.split = x->sp->opts && x->sp->opts->split,
	};
	struct process_stats self;
	struct hooks_info hooks;
	struct timespec t0, t1;
	int err;

	/* The guest list is held from the snapshot on: a tick in between could forget a guest
	 * whose rows the snapshot still has, and they would come back as a new guest. */
	pthread_mutex_lock(&x->guests_lock);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = exporter_snapshot(x);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	in.sample_ns = (t1.tv_sec - t0.tv_sec) * 1000000000ULL + t1.tv_nsec - t0.tv_nsec;
	in.sample_ms = unix_ms();
	if (!err) {
		/* Exited guests noticed now, not at the next tick: --keep counts from here. */
		serve_guests_check(&x->guests, unix_ms());
		x->scrape_ms = unix_ms();
		err = select_series(x, x->scrape_ms, &in);
		if (!err && x->keys)
			err = sampler_with_key_rows(x->sp, take_keys, x);
		if (!err && x->wake) {
			x->wake_series.by_vcpu = x->by_vcpu;
			err = exported_pids(x, &in);
			if (!err)
				err = sampler_with_wake(x->sp, take_wake, x);
		}
	}
	pthread_mutex_unlock(&x->guests_lock);
	if (err)
		return err;
	in.export_stuck = true;
	in.inflight = x->snap.s.inflight;
	in.nr_inflight = x->snap.s.nr_inflight;
	in.now_ns = x->snap.s.now_ns;
	in.stuck_ns = x->stuck_ns;
	in.names = &x->snap.names;
	memcpy(in.lost, x->snap.s.lost, sizeof(in.lost));
	if (x->keys) {
		in.keys_on = true;
		in.keys = x->keys->out;
		in.nr_keys = x->keys->nr_out;
	}
	if (x->wake)
		in.wake = &x->wake_series;
	if (x->sp->s.skel) {
		hooks_info(&x->sp->s.hooks, &hooks);
		in.hooks = &hooks;
	}
	/* /proc unreadable: the exit metrics still go out, without process_*. */
	if (!process_stats_read(&self))
		in.self = &self;
	if (x->run_stats && !bpf_run_stats_read(x->progs, x->prog_fds, x->nr_progs)) {
		in.progs = x->progs;
		in.nr_progs = x->nr_progs;
	}
	series_cap_apply(&in, fmt, x->hists, x->max_series);
	if (in.series_dropped && !x->max_series_said) {
		x->max_series_said = true;
		fprintf(stderr, "vmexit serve: --max-series %llu reached: %llu series left out of "
			"a scrape (said once; vmexit_series_dropped counts them at each scrape); "
			"raise --max-series, or scrape with native histograms, fewer --buckets, "
			"without --by vcpu, --keys or --wake\n", (unsigned long long)x->max_series,
			(unsigned long long)in.series_dropped);
	}
	if (fmt == EXPO_PROTOBUF)
		return expo_render_protobuf_kept(&in, x->hists, &x->pb, out);
	return expo_render(&in, fmt, out);
}

void exporter_free(struct exporter *x)
{
	sampler_snapshot_free(&x->snap);
	serve_guests_free(&x->guests);
	free(x->series);
	free(x->counts);
	free(x->le_counts);
	free(x->native_counts);
	free(x->pids);
	wake_series_free(&x->wake_series);
	expo_pb_keep_free(&x->pb);
	pthread_mutex_destroy(&x->guests_lock);
}
