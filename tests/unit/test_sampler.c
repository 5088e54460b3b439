// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling loop over hand-made cells: rows per interval and since the start, guests named
 * from the kernel's copy of their command line, epochs, the schedule after a stop, the end on
 * a signal, snapshots taken by another thread while the owner samples, a pid reused by a new
 * VMM (two guests, never merged), forgetting guests or folding them into (ended) rows, rows
 * since the start only (serve), and min/max of an interval whose epoch a cell missed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "hist.h"
#include "sampler_share.h"
#include "signals.h"

#define NR_FAKE	4

struct fake {
	struct cell cells[NR_FAKE];
	__u32 nr;
	__u32 epoch;
	__u64 lost[NR_LOST];
	int args_calls;
	bool reused;		/* pid 300 is now the VMM "new" (else "old") */
	bool bump;		/* two more exits in cell 0 at every epoch turn (every sample) */
};

static __u32 fake_nr(void *ctx)
{
	return ((struct fake *)ctx)->nr;
}

static __u32 fake_turn_epoch(void *ctx)
{
	struct fake *f = ctx;

	if (f->bump) {
		f->cells[0].started += 2;
		f->cells[0].count += 2;
	}
	return f->epoch++;
}

static void fake_lost(void *ctx, __u64 lost[NR_LOST])
{
	memcpy(lost, ((struct fake *)ctx)->lost, sizeof(((struct fake *)ctx)->lost));
}

/* tgid 100 ran as qemu -name guest=web01; any other VMM left nothing. */
static int fake_args(void *ctx, __u32 tgid, char *buf, size_t len)
{
	static const char args[] = "qemu-system-x86_64\0-name\0guest=web01";

	struct fake *f = ctx;

	f->args_calls++;
	if (tgid == 300)
		return snprintf(buf, len, "qemu%c-name%cguest=%s", 0, 0,
				f->reused ? "new" : "old") + 1;
	if (tgid != 100 || len < sizeof(args))
		return -2;
	memcpy(buf, args, sizeof(args));
	return sizeof(args);
}

static void add_cell(struct fake *f, __u32 tgid, __u32 tid, __s32 vcpu, __u32 reason)
{
	struct cell *c = &f->cells[f->nr++];

	memset(c, 0, sizeof(*c));
	c->key.tgid = tgid;
	c->key.tid = tid;
	c->key.vcpu = vcpu;
	c->key.isa = VMEXIT_ISA_VMX;
	c->key.reason = reason;
	c->key.ready = 1;
	c->min_ns = ~0ULL;
}

/* n exits of ns each, completed in the current epoch. */
static void exits(struct fake *f, int i, __u64 n, __u64 ns)
{
	struct cell *c = &f->cells[i];

	c->started += n;
	c->count += n;
	c->total_ns += n * ns;
	c->min_ns = c->min_ns < ns ? c->min_ns : ns;
	c->max_ns = c->max_ns > ns ? c->max_ns : ns;
	c->iv_epoch = f->epoch;
	c->iv_min_ns = ns;
	c->iv_max_ns = ns;
	c->hist[ns < HIST_EXACT ? ns : HIST_EXACT - 1] += (__u32)n;
}

static void open_fake(struct sampler *sp, struct fake *f, enum group_by by, double interval)
{
	struct sampler_source src = {
		.cells = { .cells = f->cells, .nr_cells = fake_nr, .ctx = f },
		.turn_epoch = fake_turn_epoch,
		.lost = fake_lost,
		.proc_args = fake_args,
	};
	struct sampler_opts so = { .by = by, .interval = interval };

	CHECK(sampler_init(sp, &src, &so) == 0);
}

/* A snapshot's take(): each row it hands over, kept in a table of the test's. */
static int keep_row(void *ctx, const struct row *r)
{
	struct row *c = row_table_get(ctx, &r->key);

	if (!c)
		return -ENOMEM;
	*c = *r;
	return 0;
}

/* sampler_snapshot() with the rows it hands over in rows (emptied first). */
static int snapshot(struct sampler *sp, bool fresh, struct sampler_snapshot *snap,
		    struct row_table *rows)
{
	row_table_reset(rows);
	snap->take = keep_row;
	snap->take_ctx = rows;
	return sampler_snapshot(sp, fresh, snap);
}

static __u64 total_count(const struct row_table *rt)
{
	__u64 n = 0;

	for (__u32 i = 0; i < rt->nr; i++)
		n += rt->rows[i].count;
	return n;
}

static void test_rows_and_names(void)
{
	struct fake f = {};
	struct sampler sp;
	struct sampler_snapshot snap;
	struct row_table rows;
	const struct row *r;

	add_cell(&f, 100, 101, 0, 30);
	add_cell(&f, 100, 102, 1, 30);
	add_cell(&f, 200, 201, 0, 48);
	open_fake(&sp, &f, BY_VM, 0);
	sampler_start(&sp);
	sampler_poll(&sp);
	/* Named while the VMM lives: asked once per guest, not per cell or per lookup. */
	CHECK_EQ_U64(f.args_calls, 2);
	CHECK_STR(name_cache_get(&sp.names, 100), "web01");
	CHECK_STR(name_cache_get(&sp.names, 200), "200");

	exits(&f, 0, 3, 10);
	exits(&f, 1, 2, 12);
	exits(&f, 2, 5, 7);
	f.lost[LOST_CELLS_FULL] = 4;
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.samples, 1);
	CHECK_EQ_U64(f.epoch, 1);	/* the sample turned the epoch once */
	CHECK_EQ_U64(sp.rows.nr, 2);	/* by VM: the two vCPUs of 100 merge */
	r = row_table_get(&sp.rows, &(struct row_key){ .tgid = 100, .vcpu = -1,
						   .isa = VMEXIT_ISA_VMX, .reason = 30 });
	CHECK(r && r->count == 5 && r->total_ns == 3 * 10 + 2 * 12);
	CHECK(r && r->min_ns == 10 && r->max_ns == 12);
	CHECK_EQ_U64(sp.lost[LOST_CELLS_FULL], 4);
	CHECK(sp.interval_s >= 0 && sp.elapsed_s >= sp.interval_s);

	/* An interval with nothing new: no rows; the whole run stays in t.cum. */
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.rows.nr, 0);
	CHECK_EQ_U64(total_count(&sp.t.cum), 10);

	exits(&f, 2, 1, 9);
	sampler_snapshot_init(&snap);
	row_table_init(&rows);
	CHECK(snapshot(&sp, false, &snap, &rows) == 0);
	CHECK_EQ_U64(total_count(&rows), 10);	/* as of the last sample */
	CHECK_EQ_U64(snap.s.samples, 2);
	CHECK(snapshot(&sp, true, &snap, &rows) == 0);	/* a scrape: sample first */
	CHECK_EQ_U64(total_count(&rows), 11);
	CHECK_EQ_U64(snap.s.samples, 3);
	CHECK_EQ_U64(snap.s.lost[LOST_CELLS_FULL], 4);
	CHECK_STR(name_cache_get(&snap.names, 100), "web01");
	CHECK_STR(name_cache_get(&snap.names, 200), "200");
	CHECK_EQ_U64(f.args_calls, 2);	/* the snapshot never asks again */
	CHECK_EQ_U64(snap.s.nr_inflight, 0);

	/* An exit in flight in cell 2 since a known start: a snapshot lists it with its cell's
	 * key and the clock to read its age against. */
	f.cells[2].started++;
	f.cells[2].inflight_ts = 1000;
	CHECK(snapshot(&sp, true, &snap, &rows) == 0);
	CHECK_EQ_U64(snap.s.nr_inflight, 1);
	CHECK(snap.s.nr_inflight == 1 && snap.s.inflight[0].tgid == 200 &&
	      snap.s.inflight[0].tid == 201 && snap.s.inflight[0].reason == 48 &&
	      snap.s.inflight[0].start_ns == 1000 && snap.s.inflight[0].end_ns == 0);
	CHECK(snap.s.now_ns > 1000);
	f.cells[2].inflight_ts = 0;	/* completed */
	CHECK(snapshot(&sp, true, &snap, &rows) == 0);
	CHECK_EQ_U64(snap.s.nr_inflight, 0);
	sampler_snapshot_free(&snap);
	row_table_free(&rows);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

static void test_by_vcpu_and_reason(void)
{
	struct fake f = {};
	struct sampler sp;

	add_cell(&f, 100, 101, 0, 30);
	add_cell(&f, 100, 102, 1, 30);
	add_cell(&f, 200, 201, 0, 30);
	open_fake(&sp, &f, BY_VCPU, 0);
	sampler_start(&sp);
	exits(&f, 0, 1, 5);
	exits(&f, 1, 1, 5);
	exits(&f, 2, 1, 5);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.rows.nr, 3);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);

	open_fake(&sp, &f, BY_REASON, 0);
	sampler_start(&sp);
	exits(&f, 0, 1, 5);
	exits(&f, 2, 2, 5);
	CHECK(sampler_sample(&sp) == 0);	/* a new sampler counts the cells' whole life */
	CHECK_EQ_U64(sp.rows.nr, 1);
	CHECK_EQ_U64(total_count(&sp.rows), 6);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

/*
 * Guest A's vCPU 1 (tid 101, its kvm_exit said) is still being read when guest B's vCPU 0 gets
 * tid 101 (its name says, its user exits do not): B's row is vCPU 0, not A's vCPU of that tid.
 */
static void test_reused_tid(void)
{
	struct fake f = {};
	struct sampler sp;
	bool b0 = false;

	add_cell(&f, 100, 101, 1, 30);
	add_cell(&f, 200, 101, -1, 30);
	f.cells[1].key.isa = VMEXIT_ISA_USER;
	f.cells[1].key.reason = 2;
	memcpy(f.cells[1].key.comm, "CPU 0/KVM", 10);
	open_fake(&sp, &f, BY_VCPU, 0);
	sampler_start(&sp);
	exits(&f, 0, 1, 5);
	exits(&f, 1, 1, 5);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.rows.nr, 2);
	for (__u32 i = 0; i < sp.rows.nr; i++) {
		const struct row_key *k = &sp.rows.rows[i].key;

		CHECK(k->tgid == 200 ? k->vcpu == 0 : k->vcpu == 1);
		b0 |= k->tgid == 200;
	}
	CHECK(b0);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

static void test_schedule(void)
{
	struct fake f = {};
	struct sampler sp;
	struct timespec stop = { 0, 300 * 1000 * 1000 };
	struct sampler_snapshot snap;
	struct row_table rows;

	open_fake(&sp, &f, BY_VM, 0.1);
	sampler_start(&sp);
	CHECK(sampler_due_in(&sp) > 0 && sampler_due_in(&sp) <= 0.1);
	CHECK(sampler_wait(&sp) == SAMPLER_DUE);
	CHECK(sampler_due_in(&sp) <= 0);
	CHECK(sampler_sample(&sp) == 0);
	CHECK(sampler_due_in(&sp) > 0);
	/* Stopped for three intervals: one sample is due, then the next a whole interval later. */
	nanosleep(&stop, NULL);
	CHECK(sampler_due_in(&sp) <= 0);
	CHECK(sampler_sample(&sp) == 0);
	CHECK(sampler_due_in(&sp) > 0 && sampler_due_in(&sp) <= 0.1);
	CHECK(sp.interval_s >= 0.3);
	/*
	 * Scrapes sample afresh, as often as they like: the owner's next sample stays due when
	 * it was (serve's upkeep runs at it), and comes due all the same.
	 */
	sampler_snapshot_init(&snap);
	row_table_init(&rows);
	for (int i = 0; i < 20; i++)
		CHECK(snapshot(&sp, true, &snap, &rows) == 0);
	sampler_snapshot_free(&snap);
	row_table_free(&rows);
	CHECK_EQ_U64(sp.samples, 22);
	CHECK(sampler_due_in(&sp) <= 0.1);
	CHECK(sampler_wait(&sp) == SAMPLER_DUE);
	CHECK(sampler_sample(&sp) == 0);
	/* A new interval counts from the last sample. */
	sampler_set_interval(&sp, 5);
	CHECK(sampler_due_in(&sp) > 4 && sampler_due_in(&sp) <= 5);
	/* Without an interval nothing is ever due: only a signal ends the wait. */
	sampler_set_interval(&sp, 0);
	CHECK(sampler_due_in(&sp) > 1e6);
	exiting = 1;
	CHECK(sampler_wait(&sp) == SAMPLER_SIGNALLED);
	exiting = 0;
	CHECK_EQ_U64(sampler_close(&sp, -ENOMEM), 1);	/* -ENOMEM: said, and exit status 1 */
}

struct reader {
	struct sampler *sp;
	int bad;
	int rounds;
};

/* Each snapshot must hold exactly as many exits as samples taken before it (one per sample). */
static void *read_snapshots(void *arg)
{
	struct reader *rd = arg;
	struct sampler_snapshot snap;
	struct row_table rows;

	sampler_snapshot_init(&snap);
	row_table_init(&rows);
	for (int i = 0; i < rd->rounds; i++) {
		if (snapshot(rd->sp, i % 7 == 0, &snap, &rows) ||
		    total_count(&rows) != snap.s.samples * 2 ||
		    strcmp(name_cache_get(&snap.names, 100), "web01"))
			rd->bad++;
	}
	sampler_snapshot_free(&snap);
	row_table_free(&rows);
	return NULL;
}

static void test_snapshot_from_another_thread(void)
{
	struct fake f = {};
	struct sampler sp;
	struct reader rd = { .sp = &sp, .rounds = 2000 };
	pthread_t th;

	add_cell(&f, 100, 101, 0, 30);
	open_fake(&sp, &f, BY_VM, 0);
	sampler_start(&sp);
	/* Every sample, the owner's or a fresh snapshot's, sees exactly two more exits. */
	f.bump = true;
	CHECK(pthread_create(&th, NULL, read_snapshots, &rd) == 0);
	for (int i = 0; i < 2000; i++) {
		sampler_poll(&sp);
		if (i % 3 == 0)
			CHECK(sampler_sample(&sp) == 0);
	}
	pthread_join(th, NULL);
	CHECK_EQ_U64(rd.bad, 0);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

static bool old_vmm_gone(void *ctx, __u32 tgid, __u64 start)
{
	(void)ctx;
	return tgid == 300 && start == 1000;
}

static __u64 count_of(const struct row_table *rt, __u32 tgid, __u64 start)
{
	for (__u32 i = 0; i < rt->nr; i++)
		if (rt->rows[i].key.tgid == tgid && rt->rows[i].key.start == start)
			return rt->rows[i].count;
	return ~0ULL;
}

/* Pid 300 ran the VMM "old", which exited; "new" then got the same pid. */
static void test_reused_pid(void)
{
	struct fake f = {};
	struct sampler sp;
	struct sampler_snapshot snap;
	struct row_table rows;

	add_cell(&f, 300, 301, 0, 30);
	f.cells[0].key.proc_start = 1000;
	open_fake(&sp, &f, BY_VM, 0);
	sampler_start(&sp);
	sampler_poll(&sp);
	exits(&f, 0, 5, 10);
	CHECK(sampler_sample(&sp) == 0);
	f.reused = true;
	add_cell(&f, 300, 305, 0, 30);
	f.cells[1].key.proc_start = 2000;
	sampler_poll(&sp);
	exits(&f, 1, 7, 10);
	CHECK(sampler_sample(&sp) == 0);
	/* Two guests on one pid: each its own row since the start, and its own name. */
	CHECK_EQ_U64(sp.t.cum.nr, 2);
	CHECK_EQ_U64(count_of(&sp.t.cum, 300, 1000), 5);
	CHECK_EQ_U64(count_of(&sp.t.cum, 300, 2000), 7);
	CHECK_STR(name_cache_get_at(&sp.names, 300, 1000), "old");
	CHECK_STR(name_cache_get_at(&sp.names, 300, 2000), "new");
	CHECK_STR(name_cache_get(&sp.names, 300), "new");
	sampler_snapshot_init(&snap);
	row_table_init(&rows);
	CHECK(snapshot(&sp, false, &snap, &rows) == 0);
	CHECK_EQ_U64(rows.nr, 2);
	CHECK_STR(name_cache_get_at(&snap.names, 300, 1000), "old");
	CHECK_STR(name_cache_get_at(&snap.names, 300, 2000), "new");

	/* The old one is forgotten (serve, past --keep): its row and name go, the new stay. */
	CHECK(sampler_forget(&sp, old_vmm_gone, NULL) == 0);
	CHECK_EQ_U64(sp.t.cum.nr, 1);
	CHECK_EQ_U64(count_of(&sp.t.cum, 300, 2000), 7);
	CHECK(snapshot(&sp, false, &snap, &rows) == 0);
	CHECK_EQ_U64(rows.nr, 1);
	CHECK_EQ_U64(snap.names.nr, 1);
	CHECK_STR(name_cache_get_at(&snap.names, 300, 2000), "new");
	/* More exits of the new one still add to its row. */
	exits(&f, 1, 2, 10);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(count_of(&sp.t.cum, 300, 2000), 9);
	sampler_snapshot_free(&snap);
	row_table_free(&rows);
	sampler_close(&sp, 0);
}

struct taken {
	__u64 count;		/* of the rows handed over */
	int rows;
	int fail_at;		/* that row's take fails (0: none) */
};

static int take_row(void *ctx, const struct row *r)
{
	struct taken *t = ctx;

	if (++t->rows == t->fail_at)
		return -ENOMEM;
	t->count += r->count;
	return 0;
}

/* serve's sampler: rows since the start only, their rows moved by forgetting a guest. */
static void test_cum_only_and_forget(void)
{
	struct fake f = {};
	struct sampler sp;
	struct sampler_snapshot snap;
	struct row_table rows;
	struct sampler_source src = {
		.cells = { .cells = f.cells, .nr_cells = fake_nr, .ctx = &f },
		.turn_epoch = fake_turn_epoch,
		.lost = fake_lost,
		.proc_args = fake_args,
	};

	add_cell(&f, 300, 301, 0, 30);
	f.cells[0].key.proc_start = 1000;
	add_cell(&f, 400, 401, 0, 30);
	add_cell(&f, 500, 501, 0, 30);
	CHECK(sampler_init(&sp, &src, &(struct sampler_opts){ .by = BY_VM,
							     .no_interval_rows = true }) == 0);
	sampler_start(&sp);
	exits(&f, 0, 5, 10);
	exits(&f, 1, 7, 10);
	exits(&f, 2, 9, 10);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.rows.nr, 0);		/* no interval rows */
	CHECK_EQ_U64(sp.t.cum.nr, 3);
	CHECK_EQ_U64(count_of(&sp.t.cum, 500, 0), 9);

	sampler_snapshot_init(&snap);
	row_table_init(&rows);
	CHECK(snapshot(&sp, false, &snap, &rows) == 0);
	CHECK_EQ_U64(rows.nr, 3);
	CHECK_EQ_U64(count_of(&rows, 400, 0), 7);

	/* Rows handed to take(): each once; its error ends the snapshot. */
	{
		struct sampler_snapshot tk;
		struct taken t = {};

		sampler_snapshot_init(&tk);
		tk.take = take_row;
		tk.take_ctx = &t;
		CHECK(sampler_snapshot(&sp, false, &tk) == 0);
		CHECK_EQ_U64(t.rows, 3);
		CHECK_EQ_U64(t.count, 5 + 7 + 9);
		CHECK_STR(name_cache_get_at(&tk.names, 400, 0), "400");
		t = (struct taken){ .fail_at = 2 };
		CHECK(sampler_snapshot(&sp, false, &tk) == -ENOMEM);
		CHECK_EQ_U64(t.rows, 2);
		sampler_snapshot_free(&tk);
	}

	/* 300 goes: 400 and 500 move up a row each, and their next exits still find theirs. */
	CHECK(sampler_forget(&sp, old_vmm_gone, NULL) == 0);
	CHECK_EQ_U64(sp.t.cum.nr, 2);
	exits(&f, 1, 1, 10);
	exits(&f, 2, 2, 10);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.t.cum.nr, 2);
	CHECK_EQ_U64(count_of(&sp.t.cum, 400, 0), 8);
	CHECK_EQ_U64(count_of(&sp.t.cum, 500, 0), 11);
	CHECK(snapshot(&sp, true, &snap, &rows) == 0);
	CHECK_EQ_U64(rows.nr, 2);
	CHECK_EQ_U64(count_of(&rows, 500, 0), 11);
	sampler_snapshot_free(&snap);
	row_table_free(&rows);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

static const struct row *row_at(const struct row_table *rt, __u32 tgid, __s32 vcpu, __u32 reason)
{
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row_key *k = &rt->rows[i].key;

		if (k->tgid == tgid && k->vcpu == vcpu && k->reason == reason)
			return &rt->rows[i];
	}
	return NULL;
}

/* stat --keep: an ended guest's rows join its reasons' (ended) rows, every count kept. */
static void test_fold(void)
{
	struct fake f = {};
	struct sampler sp;
	const struct row *r;

	add_cell(&f, 300, 301, 0, 30);
	add_cell(&f, 300, 302, 1, 30);
	add_cell(&f, 300, 302, 1, 48);
	add_cell(&f, 400, 401, 0, 30);
	for (int i = 0; i < 3; i++)
		f.cells[i].key.proc_start = 1000;
	open_fake(&sp, &f, BY_VCPU, 0);
	sampler_start(&sp);
	exits(&f, 0, 5, 10);
	exits(&f, 1, 3, 14);
	exits(&f, 2, 2, 7);
	exits(&f, 3, 4, 12);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.t.cum.nr, 4);
	CHECK_STR(name_cache_get_at(&sp.names, 300, 1000), "old");

	CHECK(sampler_fold(&sp, old_vmm_gone, NULL) == 0);
	/* One row per reason of guest 0, no vCPU; 400's as it was. */
	CHECK_EQ_U64(sp.t.cum.nr, 3);
	r = row_at(&sp.t.cum, 0, -1, 30);
	CHECK(r && r->count == 8 && r->completed == 8 && r->total_ns == 5 * 10 + 3 * 14 &&
	      r->min_ns == 10 && r->max_ns == 14 && r->hist[10] == 5 && r->hist[14] == 3);
	r = row_at(&sp.t.cum, 0, -1, 48);
	CHECK(r && r->count == 2 && r->total_ns == 14 && r->min_ns == 7 && r->max_ns == 7);
	r = row_at(&sp.t.cum, 400, 0, 30);
	CHECK(r && r->count == 4);
	CHECK_EQ_U64(total_count(&sp.t.cum), 5 + 3 + 2 + 4);
	CHECK_STR(name_cache_get_at(&sp.names, 0, 0), SAMPLER_ENDED_NAME);
	/* The ended guest's name went with its rows. */
	for (__u32 i = 0; i < sp.names.nr; i++)
		CHECK(sp.names.v[i].tgid != 300);

	/* Nothing more to fold: nothing changes; the rows left still count. */
	CHECK(sampler_fold(&sp, old_vmm_gone, NULL) == 0);
	CHECK_EQ_U64(sp.t.cum.nr, 3);
	exits(&f, 3, 2, 12);
	CHECK(sampler_sample(&sp) == 0);
	r = row_at(&sp.t.cum, 400, 0, 30);
	CHECK(r && r->count == 6);
	CHECK_EQ_U64(total_count(&sp.t.cum), 5 + 3 + 2 + 6);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

/*
 * Exits that completed while the epoch turned: the cell's interval extremes are of another
 * epoch, so the interval's min and max come from the first and last bucket that moved,
 * narrowed by the cell's lifetime extremes.
 */
static void test_minmax_across_epoch_turn(void)
{
	struct fake f = {};
	struct sampler sp;
	const struct row *r;
	__u32 lo = hist_bucket(300), hi = hist_bucket(5000);

	add_cell(&f, 100, 101, 0, 30);
	add_cell(&f, 200, 201, 0, 30);
	open_fake(&sp, &f, BY_VM, 0);
	sampler_start(&sp);
	for (int i = 0; i < 2; i++) {
		struct cell *c = &f.cells[i];

		c->started = c->count = 2;
		c->total_ns = 5300;
		c->hist[lo]++;
		c->hist[hi]++;
		c->iv_epoch = f.epoch + 7;	/* not the epoch this sample closes */
		c->iv_min_ns = 1;
		c->iv_max_ns = 2;
	}
	/* 100's lifetime is wider than the buckets; 200's is the two exits themselves. */
	f.cells[0].min_ns = 5;
	f.cells[0].max_ns = 1000000;
	f.cells[1].min_ns = 300;
	f.cells[1].max_ns = 5000;
	CHECK(sampler_sample(&sp) == 0);
	r = row_table_get(&sp.rows, &(struct row_key){ .tgid = 100, .vcpu = -1,
						   .isa = VMEXIT_ISA_VMX, .reason = 30 });
	CHECK(r && r->min_ns == hist_bucket_low(lo) && r->max_ns == hist_bucket_high(hi) - 1);
	r = row_table_get(&sp.rows, &(struct row_key){ .tgid = 200, .vcpu = -1,
						   .isa = VMEXIT_ISA_VMX, .reason = 30 });
	CHECK(r && r->min_ns == 300 && r->max_ns == 5000);
	CHECK(lo != hi && hist_bucket_low(lo) < 300 && hist_bucket_high(hi) - 1 > 5000);
	CHECK_EQ_U64(sampler_close(&sp, 0), 0);
}

static const struct row *row_of(struct row_table *rt, __u32 tgid)
{
	__u32 *at = row_index_find(&rt->index, &(struct row_key){ .tgid = tgid, .vcpu = -1,
				   .isa = VMEXIT_ISA_VMX, .reason = 30 });

	return at ? &rt->rows[*at] : NULL;
}

static int sample_at(struct tracker *t, struct fake *f, __u64 now_ns, struct row_table *rows)
{
	t->now_ns = now_ns;
	return tracker_sample(t, f->epoch++, rows);
}

/*
 * TIME% counts the part of each exit inside the interval: an interval row's inflight_ns is the
 * ages at its end of its exits in flight then minus their ages at its start, also for a cell
 * with no row of its own (its exit spans the interval) once the row exists; no row is made for
 * it. Rows since the start and every other field stay as they were.
 */
static void test_time_inside_interval(void)
{
	struct fake f = {};
	struct cell_source src = { .cells = f.cells, .nr_cells = fake_nr, .ctx = &f };
	struct row_table rows;
	struct tracker t;
	const struct row *r;

	add_cell(&f, 100, 101, 0, 30);	/* A */
	add_cell(&f, 100, 102, 1, 30);	/* B: the same row (by VM) */
	add_cell(&f, 200, 201, 0, 30);	/* C: alone */
	row_table_init(&rows);
	CHECK(tracker_init(&t, &src, BY_VM, -1, false) == 0);
	f.cells[0].started = 1;
	f.cells[0].inflight_ts = 900;
	CHECK(sample_at(&t, &f, 1000, &rows) == 0);
	tracker_restart(&t);

	/* A's exit completes at 1500 (600 ns) and another starts at 1800: 500 + 200 inside. */
	exits(&f, 0, 1, 600);
	f.cells[0].started++;
	f.cells[0].inflight_ts = 1800;
	f.cells[2].started = 1;
	f.cells[2].inflight_ts = 1950;
	CHECK(sample_at(&t, &f, 2000, &rows) == 0);
	r = row_of(&rows, 100);
	CHECK(r && r->total_ns == 600 && (__s64)r->total_ns + r->inflight_ns == 700);
	r = row_of(&rows, 200);
	CHECK(r && r->count == 1 && r->total_ns == 0 && r->inflight_ns == 50);

	/* A's exit spans the interval, B makes one of 50 ns: the row has both. C's spans it too,
	 * with no exit started or completed: no row. */
	exits(&f, 1, 1, 50);
	CHECK(sample_at(&t, &f, 3000, &rows) == 0);
	CHECK_EQ_U64(rows.nr, 1);
	r = row_of(&rows, 100);
	CHECK(r && r->count == 1 && r->total_ns == 50 && r->inflight_ns == 1000);

	/* A's exit completes at 3500 (1700 ns): only its last 500 ns are in this interval. */
	exits(&f, 0, 1, 1700);
	f.cells[0].started--;	/* exits() counts a start: this one started before */
	f.cells[0].inflight_ts = 0;
	CHECK(sample_at(&t, &f, 4000, &rows) == 0);
	r = row_of(&rows, 100);
	CHECK(r && r->count == 0 && r->completed == 1 && r->total_ns == 1700 &&
	      (__s64)r->total_ns + r->inflight_ns == 500);

	/* C's exit completes at 4100 (2150 ns), another starts at 4200, and its thread exits in
	 * it at 4500, read between samples: 100 + 300 inside, the second's age at its end. */
	exits(&f, 2, 1, 2150);
	f.cells[2].inflight_ts = 4200;
	f.cells[2].ended_ts = 4500;
	f.cells[2].ended = 1;
	CHECK(tracker_reap(&t) == 0);
	CHECK(sample_at(&t, &f, 5000, &rows) == 0);
	r = row_of(&rows, 200);
	CHECK(r && r->count == 1 && r->total_ns == 2150 &&
	      (__s64)r->total_ns + r->inflight_ns == 400);

	/* Since the start: the completed exits' latencies only. */
	r = row_of(&t.cum, 100);
	CHECK(r && r->count == 3 && r->total_ns == 600 + 50 + 1700 && r->inflight_ns == 0);
	r = row_of(&t.cum, 200);
	CHECK(r && r->count == 2 && r->total_ns == 2150 && r->inflight_ns == 0);
	tracker_free(&t);
	row_table_free(&rows);
}

/*
 * A cell copied while its thread began and completed an exit: the copy may hold the exit in
 * count (read last) and not in started (read first). Never more completed than begun, in the
 * interval or since the start; the next copy adds the start it missed no second time.
 */
static void test_torn_copy(void)
{
	struct fake f = {};
	struct cell_source src = { .cells = f.cells, .nr_cells = fake_nr, .ctx = &f };
	struct row_table rows;
	struct tracker t;
	const struct row *r;

	add_cell(&f, 100, 101, 0, 30);
	row_table_init(&rows);
	CHECK(tracker_init(&t, &src, BY_VM, -1, false) == 0);
	exits(&f, 0, 4, 100);
	CHECK(sample_at(&t, &f, 1000, &rows) == 0);
	/* The fifth exit, as a torn copy shows it: completed, not begun. */
	exits(&f, 0, 1, 100);
	f.cells[0].started--;
	CHECK(sample_at(&t, &f, 2000, &rows) == 0);
	r = row_of(&rows, 100);
	CHECK(r && r->count == 1 && r->completed == 1);
	/* The copy is whole again, a sixth exit in flight. */
	f.cells[0].started += 2;
	f.cells[0].inflight_ts = 2500;
	CHECK(sample_at(&t, &f, 3000, &rows) == 0);
	r = row_of(&rows, 100);
	CHECK(r && r->count == 1 && r->completed == 0);
	r = row_of(&t.cum, 100);
	CHECK(r && r->count == 6 && r->completed == 5);
	tracker_free(&t);
	row_table_free(&rows);
}

int main(void)
{
	test_rows_and_names();
	test_by_vcpu_and_reason();
	test_reused_tid();
	test_schedule();
	test_snapshot_from_another_thread();
	test_reused_pid();
	test_cum_only_and_forget();
	test_fold();
	test_minmax_across_epoch_turn();
	test_time_inside_interval();
	test_torn_copy();
	CHECK_DONE("sampler");
}
