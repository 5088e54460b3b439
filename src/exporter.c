// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include "bpf_run_stats.h"
#include "commands.h"
#include "exporter.h"

static __u64 unix_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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
	x->guests.start_ms = unix_ms();
	x->guests.keep_ms = keep_ms;
	snprintf(x->kernel, sizeof(x->kernel), "%s", uname(&u) ? "unknown" : u.release);
	sampler_snapshot_init(&x->snap);
	err = pthread_mutex_init(&x->guests_lock, NULL);
	return -err;
}

void exporter_watch_progs(struct exporter *x, struct bpf_program *const *list, int nr,
			  bool run_stats)
{
	x->run_stats = run_stats;
	x->nr_progs = bpf_run_stats_progs(list, nr, x->progs, x->prog_fds, EXPORTER_MAX_PROGS);
}

void exporter_tick(struct exporter *x)
{
	pthread_mutex_lock(&x->guests_lock);
	serve_guests_check(&x->guests, unix_ms());
	pthread_mutex_unlock(&x->guests_lock);
}

/* The exported rows: those of guests still exported, with their names and start times. */
static int select_series(struct exporter *x, __u64 now_ms, struct expo_input *in)
{
	const struct row_table *rows = &x->snap.rows;
	int err;

	if (rows->nr > x->series_cap) {
		struct expo_series *s = realloc(x->series, rows->nr * sizeof(*s));

		if (!s)
			return -ENOMEM;
		x->series = s;
		x->series_cap = rows->nr;
	}
	err = serve_guests_learn(&x->guests, rows, now_ms);
	if (err)
		return err;
	in->series = x->series;
	in->nr_series = 0;
	for (__u32 i = 0; i < rows->nr; i++) {
		const struct row *r = &rows->rows[i];
		const struct serve_guest *g = serve_guests_find(&x->guests, r->key.tgid);

		if (!g || !serve_guest_exported(&x->guests, g, now_ms))
			continue;
		x->series[in->nr_series++] = (struct expo_series){
			.row = r,
			.guest = name_cache_get(&x->snap.names, r->key.tgid),
			.created_ms = g->created_ms,
		};
	}
	in->guests = serve_guests_running(&x->guests);
	return 0;
}

/*
 * The exits in flight for stuck_ns or more at the snapshot's sample. An exit whose thread
 * exited in it is over, not stuck: its row counted it, and it never completes.
 */
static int select_stuck(struct exporter *x, struct expo_input *in)
{
	const struct sampler_snapshot *s = &x->snap;

	if (s->nr_inflight > x->stuck_cap) {
		struct expo_inflight *e = realloc(x->stuck, s->nr_inflight * sizeof(*e));

		if (!e)
			return -ENOMEM;
		x->stuck = e;
		x->stuck_cap = s->nr_inflight;
	}
	in->inflight = x->stuck;
	in->nr_inflight = 0;
	for (__u32 i = 0; i < s->nr_inflight; i++) {
		const struct inflight_exit *f = &s->inflight[i];
		__u64 on, blk, rq;

		if (!inflight_stuck(f, s->now_ns, x->stuck_ns))
			continue;
		inflight_split(f, s->now_ns, &on, &blk, &rq);
		x->stuck[in->nr_inflight++] = (struct expo_inflight){
			.tgid = f->tgid,
			.vcpu = f->vcpu,
			.isa = f->isa,
			.reason = f->reason,
			.guest = name_cache_get(&x->snap.names, f->tgid),
			.age_ns = inflight_age(f, s->now_ns),
			.oncpu_ns = on,
			.blocked_ns = blk,
			.runq_ns = rq,
		};
	}
	return 0;
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
	int err;

	err = sampler_snapshot(x->sp, true, &x->snap);
	if (err)
		return err;
	pthread_mutex_lock(&x->guests_lock);
	/* Exited guests noticed now, not at the next tick: --keep counts from here. */
	serve_guests_check(&x->guests, unix_ms());
	err = select_series(x, unix_ms(), &in);
	pthread_mutex_unlock(&x->guests_lock);
	if (!err)
		err = select_stuck(x, &in);
	if (err)
		return err;
	memcpy(in.lost, x->snap.lost, sizeof(in.lost));
	if (x->run_stats && !bpf_run_stats_read(x->progs, x->prog_fds, x->nr_progs)) {
		in.progs = x->progs;
		in.nr_progs = x->nr_progs;
	}
	return expo_render(&in, fmt, out);
}

void exporter_free(struct exporter *x)
{
	sampler_snapshot_free(&x->snap);
	serve_guests_free(&x->guests);
	free(x->series);
	free(x->stuck);
	pthread_mutex_destroy(&x->guests_lock);
}
