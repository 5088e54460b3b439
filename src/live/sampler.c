// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "kallsyms.h"
#include "qmp_ask.h"
#include "sampler.h"
#include "signals.h"
#include "stack_read.h"
#include "startup_heap.h"
#include "vmexit.skel.h"

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
	row_table_init(&sp->key_rows);
	key_rows_init(&sp->keys, -1, so->key_by, so->key_vcpu);
	if (so->qmp) {
		qmp_names_init(&sp->qmp, so->qmp);
		if (so->qmp_timeout_ms)
			sp->qmp.timeout_ms = so->qmp_timeout_ms;
		sp->qmp.verbose = sp->opts && sp->opts->verbose;
	}
	err = tracker_init(&sp->t, &src->cells, so->by, sp->opts ? sp->opts->filter.vcpu : -1,
			   src->use_proc);
	/* --split: the cells carry on-CPU, blocked and runq sums, and so do the rows. */
	sp->t.split = sp->opts && sp->opts->split;
	sp->t.found = name_found_cell;
	sp->t.found_ctx = sp;
	sp->t.stuck_ns = so->stuck_ns;
	if (!err && so->hist_coarse)
		tracker_coarse_cum(&sp->t, so->hist_coarse);
	if (!err)
		err = -pthread_mutex_init(&sp->lock, NULL);
	if (err)
		tracker_free(&sp->t);
	return err;
}

/*
 * What the run gathers besides the cells, once the session is loaded: the key table, the kvm
 * events' ring buffer, the names of this kernel's stack frames. 0, or -1 (said; the sampler
 * is closed then).
 */
static int open_extras(struct sampler *sp, struct cli_filters *f, const struct sampler_opts *so)
{
	char err[256];

	if (f->opts.key_mode) {
		sp->keys.map_fd = bpf_map__fd(sp->s.skel->maps.key_table);
		sp->keys.slots_fd = bpf_map__fd(sp->s.skel->maps.key_slots);
		sp->keys.free_fd = bpf_map__fd(sp->s.skel->maps.free_keys);
		/* Forgotten keys lower the kernel's count of them, which --max-keys caps. */
		sp->keys.used = &sp->s.skel->bss->keys_used;
	}
	if (so->kvm_events && f->opts.kvm_events &&
	    kvm_event_counts_open(&sp->ev, &sp->s, f->opts.filter.vcpu)) {
		sampler_close(sp, 0);
		return -1;
	}
	/* Loaded with the exit programs, before counting starts: a delivery is seen whole. */
	if (so->wake && wake_progs_open(&sp->wake, &(struct wake_scope){
			.pid_fd = bpf_map__fd(sp->s.skel->maps.pid_filter),
			.filter_pids = sp->s.skel->rodata->filter_pids,
			.vcpu = sp->s.skel->rodata->filter_vcpu })) {
		sampler_close(sp, 0);
		return -1;
	}
	/* After the hooks' lines: what waits for -v (bench/bed_overhead.sh) waits for these too. */
	if (so->wake && f->opts.verbose)
		fprintf(stderr, "vmexit: --wake: %d programs attached\n", sp->wake.nr_links);
	/* Their cost too, apart: they run per context switch and wake-up, not per exit. */
	if (so->wake && so->overhead) {
		struct bpf_program *progs[WAKE_MAX_LINKS];
		int n = wake_progs_list(&sp->wake, progs, WAKE_MAX_LINKS);

		if (overhead_add_wake(&sp->ov, progs, n)) {
			sampler_close(sp, 0);
			return -1;
		}
	}
	if (so->stacks) {
		sp->ksyms = kallsyms_load(err, sizeof(err));
		if (!sp->ksyms)
			fprintf(stderr, "vmexit: note: %s\n", err);
	}
	return 0;
}

int sampler_init(struct sampler *sp, const struct sampler_source *src,
		 const struct sampler_opts *so)
{
	memset(sp, 0, sizeof(*sp));
	return setup(sp, src, so);
}

int sampler_open(struct sampler *sp, struct cli_filters *f, const struct sampler_opts *so)
{
	int err;
	struct sampler_source src = {
		.cells = { .nr_cells = session_cells, .at = session_cell_at,
			   .release = session_release_cell, .ctx = &sp->s },
		.turn_epoch = session_turn_epoch,
		.lost = session_lost_counters,
		.proc_args = session_proc_args,
		.use_proc = true,
	};

	memset(sp, 0, sizeof(*sp));
	f->opts.count_later = true;	/* sampler_start() starts counting */
	f->opts.cells_windowed = true;	/* memory for the cells in use, not for --max-cells */
	/* Counted from their records: a ring buffer with room for a busy second. */
	if (so->kvm_events && f->opts.kvm_events && f->opts.ringbuf_kb < 4096)
		f->opts.ringbuf_kb = 4096;
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
	err = open_extras(sp, f, so);
	/* Every object is loaded (the wake programs last): the heap back to glibc's ways. */
	startup_heap_release();
	return err;
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
	/* A ring buffer left alone for a whole interval would fill up. An error here is the
	 * next sample's to report. */
	if (sp->ev.rb)
		kvm_event_counts_poll(&sp->ev, 0);
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
	/* Out of memory: said at the next sample, which fails the same way. */
	sampler_settle(sp);
	while (!exiting) {
		double now = sampler_now();

		sleep_s(sp->next - now < TICK_S ? sp->next - now : TICK_S);
		sampler_poll(sp);
		if (sp->so.qmp) {
			/* Keys are named only when a view shows them (stat's summary, top's screen),
			 * maybe after the guest quit: re-ask on the backoff, as record does, for the
			 * BARs and ports the firmware mapped since (a miss alone comes too late). */
			qmp_names_watch(&sp->qmp);
			qmp_names_tick(&sp->qmp, &sp->names, sampler_now());
		}
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

/*
 * After the cells: the kvm events read so far join the interval's rows (not t.cum: the
 * overhead per exit is against exits alone),
 * the key table is read (no exit is in the keys only), the kernel's stack table again.
 * 0, -ENOMEM, or the failed read's -errno (said).
 */
static int gather(struct sampler *sp)
{
	struct row_table *cur = sp->so.no_interval_rows ? NULL : &sp->rows;
	int err = 0;

	if (sp->ev.rb && cur) {
		err = kvm_event_counts_poll(&sp->ev, 0);
		err = err ? err : kvm_event_counts_take(&sp->ev, cur);
		if (err)
			return err;
	}
	if (sp->keys.map_fd >= 0) {
		err = key_rows_sample(&sp->keys, cur ? &sp->key_rows : NULL);
		if (err && err != -ENOMEM)
			fprintf(stderr, "vmexit: cannot read the key table: %s\n", strerror(-err));
		if (err)
			return err;
	}
	if (sp->so.stacks && sp->s.skel) {
		stack_table_free(&sp->stacks);
		/* A table that could not be read whole was said: the rest is still shown. */
		err = stack_read(&sp->s, sp->ksyms, &sp->stacks);
		stack_table_sort(&sp->stacks);
		if (err == -ENOMEM)
			return err;
	}
	if (sp->wake.skel) {
		struct wake_snapshot w;

		/* Cumulative in the kernel: the last read replaces the one before. */
		err = wake_progs_read(&sp->wake, &w);
		if (err)
			return err;
		wake_snapshot_sort(&w);
		wake_snapshot_free(&sp->wake_cells);
		sp->wake_cells = w;
	}
	sp->keep_due = sp->so.keep_ns > 0;
	return 0;
}

/* The sample the views read, over the tables just filled. */
static void fill_sample(struct sampler *sp)
{
	bool keys = sp->keys.map_fd >= 0;

	if (sp->s.skel)
		hooks_info(&sp->s.hooks, &sp->hooks);
	sp->sample = (struct sample){
		.rows = sp->so.no_interval_rows ? NULL : &sp->rows, .cum = &sp->t.cum,
		.key_rows = keys && !sp->so.no_interval_rows ? &sp->key_rows : NULL,
		.key_cum = keys ? &sp->keys.cum : NULL,
		.interval_s = sp->interval_s, .elapsed_s = sp->elapsed_s,
		.samples = sp->samples,
		.inflight = sp->t.inflight, .nr_inflight = sp->t.nr_inflight,
		.stuck = sp->t.stuck, .nr_stuck = sp->t.nr_stuck,
		.cum_stuck = sp->t.cum_stuck, .nr_cum_stuck = sp->t.nr_cum_stuck,
		.cum_ended = sp->t.cum_ended,
		.now_ns = (__u64)(sp->last * 1e9), .stuck_ns = sp->so.stuck_ns,
		.hooks = sp->s.skel ? &sp->hooks : NULL,
		.overhead = sp->overhead ? &sp->overhead->cost : NULL,
		.stacks = sp->so.stacks ? &sp->stacks : NULL,
		.names = &sp->names,
		.qmp = sp->so.qmp ? &sp->qmp : NULL,
		.wake = sp->wake.skel ? &sp->wake_cells : NULL,
	};
	memcpy(sp->sample.lost, sp->lost, sizeof(sp->lost));
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
	/* The sample sampler_start() takes before counting starts has nothing else to read. */
	if (sp->started) {
		int err = gather(sp);

		if (err)
			return err;
	}
	fill_sample(sp);
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

/* The VMMs (pid, start) of the rows since the start, and of those and the wake cells, sorted:
 * for wake_kept(). */
struct wake_vmms {
	struct guest_key *rows, *all;
	__u32 nr_rows, nr_all;
};

static int guest_key_cmp(const void *a, const void *b)
{
	const struct guest_key *x = a, *y = b;
	__u64 xs = (__u64)x->start_hi << 32 | x->start_lo;
	__u64 ys = (__u64)y->start_hi << 32 | y->start_lo;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return xs < ys ? -1 : xs > ys;
}

/*
 * A wake cell's VMM is kept while a row has it, or while its pid runs and no later VMM of that
 * pid is known (a VMM too new for rows): the cells of an ended VMM whose pid a new one reuses
 * go with its rows.
 */
static bool wake_kept(void *ctx, __u32 tgid, __u64 start)
{
	const struct wake_vmms *v = ctx;
	struct guest_key k = guest_key_of(tgid, start), next = guest_key_of(tgid, start + 1);
	const struct guest_key *e = v->all + v->nr_all;
	__u32 lo = 0, hi = v->nr_all;

	if (bsearch(&k, v->rows, v->nr_rows, sizeof(k), guest_key_cmp))
		return true;
	/* The first VMM after (tgid, start): if of the same pid, this one is not its newest. */
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (guest_key_cmp(&v->all[mid], &next) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (v->all + lo < e && v->all[lo].tgid == tgid)
		return false;
	return !kill((pid_t)tgid, 0) || errno == EPERM;
}

/* serve: the wake cells of the guests just forgotten leave the kernel's maps. */
static int wake_forget(struct sampler *sp)
{
	const struct wake_snapshot *w = &sp->wake_cells;
	__u32 nr = sampler_cum_nr(sp);
	struct wake_vmms v = {};
	int err;

	v.rows = malloc(((size_t)nr + 1) * sizeof(*v.rows));
	v.all = malloc(((size_t)nr + w->nr_wake + w->nr_hlt + 1) * sizeof(*v.all));
	if (!v.rows || !v.all) {
		free(v.rows);
		free(v.all);
		return -ENOMEM;
	}
	for (__u32 i = 0; i < nr; i++) {
		const struct row_key *k = sampler_cum_key(sp, i);

		v.rows[v.nr_rows++] = v.all[v.nr_all++] = guest_key_of(k->tgid, k->start);
	}
	for (size_t i = 0; i < w->nr_wake; i++)
		v.all[v.nr_all++] = guest_key_of(w->wkeys[i].tgid, w->wkeys[i].proc_start);
	for (size_t i = 0; i < w->nr_hlt; i++)
		v.all[v.nr_all++] = guest_key_of(w->hkeys[i].tgid, w->hkeys[i].proc_start);
	qsort(v.rows, v.nr_rows, sizeof(*v.rows), guest_key_cmp);
	qsort(v.all, v.nr_all, sizeof(*v.all), guest_key_cmp);
	err = wake_progs_forget(&sp->wake, wake_kept, &v);
	free(v.rows);
	free(v.all);
	/* A map that would not delete is no reason to stop forgetting the rest. */
	if (err && err != -ENOMEM)
		fprintf(stderr, "vmexit: --wake: cannot forget ended guests' cells: %s\n",
			strerror(-err));
	return err == -ENOMEM ? err : 0;
}

__u32 sampler_cum_nr(const struct sampler *sp)
{
	return sp->t.coarse ? sp->t.ccum.nr : sp->t.cum.nr;
}

const struct row_key *sampler_cum_key(const struct sampler *sp, __u32 i)
{
	return sp->t.coarse ? &coarse_rows_at(&sp->t.ccum, i)->key : &sp->t.cum.rows[i].key;
}

int sampler_forget(struct sampler *sp, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		   void *ctx)
{
	struct row_forget f = { gone, ctx };
	int err;

	__u32 before;

	pthread_mutex_lock(&sp->lock);
	before = sampler_cum_nr(sp);
	err = row_table_retain(&sp->t.cum, row_forget_kept, &f);
	if (!err)
		err = coarse_rows_retain(&sp->t.ccum, row_forget_kept, &f);
	if (!err)
		err = name_cache_prune(&sp->names, name_kept, &f);
	if (!err && sp->keys.map_fd >= 0)
		err = key_rows_forget(&sp->keys, gone, ctx, true);
	if (!err && sp->wake.skel && sampler_cum_nr(sp) < before)
		err = wake_forget(sp);
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int sampler_with_key_rows(struct sampler *sp,
			  int (*fn)(void *ctx, const struct row_table *key_cum), void *ctx)
{
	int err = 0;

	pthread_mutex_lock(&sp->lock);
	if (sp->keys.map_fd >= 0)
		err = fn(ctx, &sp->keys.cum);
	pthread_mutex_unlock(&sp->lock);
	return err;
}

int sampler_with_wake(struct sampler *sp,
		      int (*fn)(void *ctx, const struct wake_snapshot *w), void *ctx)
{
	int err = 0;

	pthread_mutex_lock(&sp->lock);
	if (sp->wake.skel)
		err = fn(ctx, &sp->wake_cells);
	pthread_mutex_unlock(&sp->lock);
	return err;
}

/* --keep counts on the sampler's clock: only the time since a guest ended matters here. */
static __u64 now_ms(void)
{
	return (__u64)(sampler_now() * 1000);
}

static bool guest_expired(void *ctx, __u32 tgid, __u64 start)
{
	return serve_guests_expired(ctx, tgid, start, now_ms());
}

/*
 * --keep, once the views are done with a sample: the guests over for longer join the (ended)
 * rows, and their keys leave the kernel's key table (their rows stay: the summary has them),
 * so that a long run keeps room for the guests that come.
 */
int sampler_settle(struct sampler *sp)
{
	struct serve_guests *g = &sp->kept;
	__u64 now = now_ms();
	int err;

	if (!sp->keep_due)
		return 0;
	sp->keep_due = false;
	if (!g->start_ms) {
		g->start_ms = (__u64)(sp->start * 1000);
		g->keep_ms = sp->so.keep_ns / 1000000;
	}
	err = serve_guests_learn(g, &sp->t.cum, now);
	serve_guests_check(g, now);
	if (!err)
		err = sampler_fold(sp, guest_expired, g);
	if (!err && sp->keys.map_fd >= 0)
		err = key_rows_forget(&sp->keys, guest_expired, g, false);
	return err ? err : serve_guests_prune(g, now);
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
	if (sp->ev.rb)
		kvm_event_counts_close(&sp->ev);
	key_rows_free(&sp->keys);
	row_table_free(&sp->key_rows);
	wake_snapshot_free(&sp->wake_cells);
	if (sp->wake.skel)
		wake_progs_close(&sp->wake);
	stack_table_free(&sp->stacks);
	symbol_map_free(sp->ksyms);
	if (sp->so.qmp)
		qmp_names_free(&sp->qmp);
	serve_guests_free(&sp->kept);
	tracker_free(&sp->t);
	row_table_free(&sp->rows);
	name_cache_free(&sp->names);
	pthread_mutex_destroy(&sp->lock);
	if (sp->s.skel)
		session_close(&sp->s);
	return rc;
}
