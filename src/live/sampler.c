// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sampler.h"
#include "signals.h"

/* No sample is ever due: stat without an interval samples only at the end. */
#define NEVER		1e300
/* How often a waiting sampler looks for new cells: their VMM and threads may not live long. */
#define TICK_S		0.02
/*
 * How often the cells of exited threads are read and handed back between samples: samples may be
 * far apart (stat -- CMD without an interval takes one at the end), VMs may come and go in the
 * meantime, and a cell not handed back is one less for the next vCPU.
 */
#define REAP_S		0.25
/* How often -p processes are checked for (a kill(pid, 0) each). */
#define ALIVE_CHECK_S	1.0

double sampler_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __u32 session_cells(void *ctx)
{
	return session_nr_cells(ctx);
}

static __u32 session_turn_epoch(void *ctx)
{
	__u32 closed = session_epoch(ctx);

	session_new_epoch(ctx);
	return closed;
}

static void session_lost_counters(void *ctx, __u64 lost[NR_LOST])
{
	session_lost(ctx, lost);
}

/* Everything but the session: sp is zeroed, sp->s and sp->opts set when there is one. */
/* Names the guest of every cell found (new ones, and cells another VM reuses) while its VMM still
 * exists: it may be gone by the next sample. A new VMM on a reused pid is named anew. */
static void name_found_cell(void *ctx, const struct cell_key *k)
{
	struct sampler *sp = ctx;

	/* Out of memory: the name stays as it was, nothing else is at stake. */
	name_cache_born(&sp->names, k->tgid, k->proc_start);
	name_cache_get_at(&sp->names, k->tgid, k->proc_start);
}

static int setup(struct sampler *sp, const struct sampler_source *src,
		 const struct sampler_opts *so)
{
	int err;

	sp->src = *src;
	sp->so = *so;
	sp->names.resolve = src->use_proc;
	sp->names.args = src->proc_args;
	sp->names.args_ctx = src->cells.ctx;
	row_table_init(&sp->rows);
	err = tracker_init(&sp->t, &src->cells, so->by, sp->opts ? sp->opts->filter.vcpu : -1,
			   src->use_proc);
	/* --split: the cells carry on-CPU, blocked and runq sums, and so do the rows. */
	sp->t.split = sp->opts && sp->opts->split;
	sp->t.found = name_found_cell;
	sp->t.found_ctx = sp;
	if (!err)
		err = -pthread_mutex_init(&sp->lock, NULL);
	if (err)
		tracker_free(&sp->t);
	return err;
}

int sampler_init(struct sampler *sp, const struct sampler_source *src,
		 const struct sampler_opts *so)
{
	memset(sp, 0, sizeof(*sp));
	return setup(sp, src, so);
}

int sampler_open(struct sampler *sp, struct cli_filters *f, const struct sampler_opts *so)
{
	struct sampler_source src = {
		.cells = { .nr_cells = session_cells, .release = session_release_cell,
			   .ctx = &sp->s },
		.turn_epoch = session_turn_epoch,
		.lost = session_lost_counters,
		.proc_args = session_proc_args,
		.use_proc = true,
	};

	memset(sp, 0, sizeof(*sp));
	f->opts.count_later = true;	/* sampler_start() starts counting */
	if (cli_filters_open_session(f, &sp->s))
		return -1;
	sp->opts = &f->opts;
	src.cells.cells = sp->s.cells;
	sp->ov.stats_fd = -1;
	if (so->overhead) {
		struct bpf_program *progs[OVERHEAD_MAX_PROGS];
		int n = session_progs(&sp->s, progs, OVERHEAD_MAX_PROGS);

		if (overhead_start(&sp->ov, progs, n)) {
			session_close(&sp->s);
			return -1;
		}
	}
	if (setup(sp, &src, so)) {
		fprintf(stderr, "vmexit: cannot start the statistics: out of resources\n");
		overhead_stop(&sp->ov);
		session_close(&sp->s);
		return -1;
	}
	return 0;
}

void sampler_start(struct sampler *sp)
{
	double first = sp->so.first > 0 ? sp->so.first : sp->so.interval;

	if (sp->s.skel) {
		/*
		 * Counting starts once every program is attached. They are attached one by one
		 * (session.c, attach_in_order()), and on a slow machine the VMs already running
		 * make many exits meanwhile: seen by the programs attached first (the VMM's
		 * exits), not by the last (guest exits). The kernel counts none of them, and
		 * never the completion of an exit begun before counting started: a forgotten
		 * first sample did count those (completed = count + 1 on a busy guest). This
		 * sample only sets when the first interval began, for the exits in flight at its
		 * end. The traced command starts after: none of its exits is lost.
		 */
		pthread_mutex_lock(&sp->lock);
		if (!sampler_sample_locked(sp))
			tracker_restart(&sp->t);
		sp->samples = 0;
		session_start_counting(&sp->s);
		pthread_mutex_unlock(&sp->lock);
	}
	/*
	 * Ctrl-C ends the run gracefully from here on, once counting has started: before, there
	 * is nothing to report. Tests take the handlers as "counting" (lib.sh wait_tracing): an
	 * exit begun before counting started is not counted.
	 */
	install_signal_handlers();
	if (sp->s.skel)
		session_start_command(&sp->s);
	sp->start = sp->last = sampler_now();
	sp->next = first > 0 ? sp->start + first : NEVER;
	sp->started = true;
}


void sampler_poll(struct sampler *sp)
{
	double now = sampler_now();

	pthread_mutex_lock(&sp->lock);
	tracker_discover(&sp->t);
	/* Cells of exited threads go back to the kernel between samples too (see REAP_S). */
	if (now >= sp->next_reap) {
		sp->next_reap = now + REAP_S;
		if (tracker_reap(&sp->t))
			sp->reap_failed = true;
	}
	pthread_mutex_unlock(&sp->lock);
}

/* Like perf stat -p: tracing given pids ends when the last of them is gone. */
static bool traced_pids_alive(const struct session_opts *o)
{
	if (!o || !o->filter.nr_pids || o->command)
		return true;
	for (int i = 0; i < o->filter.nr_pids; i++) {
		if (!kill(o->filter.pids[i], 0) || errno != ESRCH)
			return true;
	}
	return false;
}

static void sleep_s(double s)
{
	struct timespec ts;

	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

enum sampler_wake sampler_wait(struct sampler *sp)
{
	while (!exiting) {
		double now = sampler_now();

		sleep_s(sp->next - now < TICK_S ? sp->next - now : TICK_S);
		sampler_poll(sp);
		if (sp->so.tick)
			sp->so.tick(sp->so.tick_ctx, sampler_now());
		if (sp->s.skel && session_command_done(&sp->s, NULL))
			return SAMPLER_COMMAND_EXITED;
		now = sampler_now();
		if (sp->so.end_with_pids && now >= sp->next_alive_check) {
			sp->next_alive_check = now + ALIVE_CHECK_S;
			if (!traced_pids_alive(sp->opts)) {
				fprintf(stderr, "vmexit: every traced process has exited\n");
				return SAMPLER_PIDS_EXITED;
			}
		}
		if (now >= sp->next)
			return SAMPLER_DUE;
	}
	return SAMPLER_SIGNALLED;
}

double sampler_due_in(const struct sampler *sp)
{
	return sp->next - sampler_now();
}

void sampler_set_interval(struct sampler *sp, double interval)
{
	sp->so.interval = interval;
	sp->next = interval > 0 ? sp->last + interval : NEVER;
}

int sampler_sample_locked(struct sampler *sp)
{
	double now = sampler_now();
	__u32 closed = sp->src.turn_epoch(sp->src.cells.ctx);
	struct timespec ts;

	/* The interval's end, for the ages of the exits in flight then (the kernel's clock). */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sp->t.now_ns = (__u64)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (sp->reap_failed ||
	    tracker_sample(&sp->t, closed, sp->so.no_interval_rows ? NULL : &sp->rows))
		return -ENOMEM;
	sp->src.lost(sp->src.cells.ctx, sp->lost);
	/* Cumulative like t.cum: the kernel's run-time statistics are never reset. */
	if (sp->so.overhead)
		sp->overhead = overhead_sample(&sp->ov) ? NULL : &sp->ov;
	sp->interval_s = now - sp->last;
	sp->elapsed_s = now - sp->start;
	sp->last = now;
	sp->samples++;
	return 0;
}

int sampler_sample(struct sampler *sp)
{
	double now;
	int err;

	pthread_mutex_lock(&sp->lock);
	err = sampler_sample_locked(sp);
	pthread_mutex_unlock(&sp->lock);
	/*
	 * Only the owner's samples move its schedule: a scrape's (sampler_snapshot()) must not,
	 * or scrapes more frequent than the interval would put the owner's next sample, and
	 * serve's upkeep with it, off for ever.
	 */
	now = sampler_now();
	if (!err && sp->so.interval > 0 && sp->next != NEVER) {
		sp->next += sp->so.interval;
		if (sp->next < now)
			sp->next = now + sp->so.interval;	/* we were stopped: no burst */
	}
	return err;
}

static bool name_kept(void *ctx, __u32 tgid, __u64 start)
{
	const struct row_forget *f = ctx;

	return !tgid || !f->gone(f->ctx, tgid, start);
}

int sampler_forget(struct sampler *sp, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		   void *ctx)
{
	struct row_forget f = { gone, ctx };
	int err;

	pthread_mutex_lock(&sp->lock);
	err = row_table_retain(&sp->t.cum, row_forget_kept, &f);
	if (!err)
		err = name_cache_prune(&sp->names, name_kept, &f);
	pthread_mutex_unlock(&sp->lock);
	return err;
}

/* The row an ended guest's row joins: its reason's, of no guest (tgid 0) and no vCPU. */
static struct row_key ended_key(const struct row_key *k)
{
	return (struct row_key){ .vcpu = -1, .isa = k->isa, .reason = k->reason };
}

/* cum with the rows of gone guests summed into their ended rows, into out: 0 or -ENOMEM. */
static int fold_rows(const struct row_table *cum, const struct row_forget *f,
		     struct row_table *out)
{
	for (__u32 i = 0; i < cum->nr; i++) {
		const struct row *r = &cum->rows[i];
		struct row_key k = row_forget_kept((void *)f, &r->key) ? r->key : ended_key(&r->key);
		struct row *o = row_table_get(out, &k);

		if (!o)
			return -ENOMEM;
		row_add(o, r);
	}
	return 0;
}

int sampler_fold(struct sampler *sp, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		 void *ctx)
{
	struct row_forget f = { gone, ctx };
	struct row_table folded;
	__u32 i;
	int err = 0;

	row_table_init(&folded);
	pthread_mutex_lock(&sp->lock);
	for (i = 0; i < sp->t.cum.nr && row_forget_kept(&f, &sp->t.cum.rows[i].key); i++)
		;
	/* Into a new table, swapped in whole: out of memory changes nothing. */
	if (i < sp->t.cum.nr) {
		err = fold_rows(&sp->t.cum, &f, &folded);
		if (!err)
			err = name_cache_set(&sp->names, 0, SAMPLER_ENDED_NAME);
		if (!err)
			err = name_cache_prune(&sp->names, name_kept, &f);
		if (!err) {
			struct row_table old = sp->t.cum;

			sp->t.cum = folded;
			folded = old;
		}
	}
	pthread_mutex_unlock(&sp->lock);
	row_table_free(&folded);
	return err;
}

int sampler_close(struct sampler *sp, int err)
{
	int rc = err ? 1 : 0;

	if (err == -ENOMEM)
		fprintf(stderr, "vmexit: out of memory reading the statistics\n");
	if (sp->s.skel)
		rc = session_command_report(&sp->s, rc);
	if (sp->so.overhead)
		overhead_stop(&sp->ov);
	tracker_free(&sp->t);
	row_table_free(&sp->rows);
	name_cache_free(&sp->names);
	pthread_mutex_destroy(&sp->lock);
	if (sp->s.skel)
		session_close(&sp->s);
	return rc;
}
