// SPDX-License-Identifier: GPL-2.0
/*
 * serve's memory over a long run: guests whose VMM ended more than --keep ago leave the
 * sampler's rows and names and the guest list at the owner's ticks, even when nobody scrapes;
 * running guests, and a new VMM on an old one's pid, stay. An ended VMM whose pid later ran a
 * VMM of the same guest label (names that differ only in ill-formed UTF-8 included) is not
 * exported twice under the same labels.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "check.h"
#include "exporter.h"

#define NR_FAKE 8

struct fake {
	struct cell cells[NR_FAKE];
	__u32 nr;
	__u32 epoch;
};

static __u32 fake_nr(void *ctx)
{
	return ((struct fake *)ctx)->nr;
}

static __u32 fake_turn_epoch(void *ctx)
{
	return ((struct fake *)ctx)->epoch++;
}

static void fake_lost(void *ctx, __u64 lost[NR_LOST])
{
	(void)ctx;
	memset(lost, 0, NR_LOST * sizeof(*lost));
}

/*
 * The processes running: pid 300 started at 2000 (the one of 1000 has ended), pid 400, and the
 * latest VMM on pids 500, 600 and 700.
 */
static bool fake_alive(void *ctx, __u32 tgid, __u64 start, __u64 *ms)
{
	(void)ctx;
	*ms = 0;
	return (tgid == 300 && start == 2000) || tgid == 400 || (tgid == 500 && start == 2) ||
	       (tgid == 600 && start == 2) || (tgid == 700 && start == 3);
}

/*
 * The -name of each VMM on pids 500, 600 and 700, in the order they start (each is asked once,
 * when its cell is found): pid 500's were both "same"; pid 600's differ only in a byte that is
 * not UTF-8 (both export as "bad\uFFFD"); pid 700's first two match, its last differs.
 */
static const char *const vmm_names[][3] = { { "same", "same" }, { "bad\xff", "bad\xfe" },
					    { "x", "x", "y" } };
static int asked[3];

static int fake_args(void *ctx, __u32 tgid, char *buf, size_t len)
{
	int pid = (int)tgid / 100 - 5;

	(void)ctx;
	if (pid < 0 || pid > 2 || asked[pid] > 2 || !vmm_names[pid][asked[pid]])
		return -2;
	return snprintf(buf, len, "qemu%c-name%c%s", 0, 0, vmm_names[pid][asked[pid]++]) + 1;
}

static void add_cell(struct fake *f, __u32 tgid, __u64 start, __u64 exits)
{
	struct cell *c = &f->cells[f->nr++];

	memset(c, 0, sizeof(*c));
	c->key.tgid = tgid;
	c->key.tid = tgid + f->nr;
	c->key.proc_start = start;
	c->key.isa = VMEXIT_ISA_USER;
	c->key.reason = 2;
	c->key.ready = 1;
	c->started = c->count = exits;
	c->min_ns = c->max_ns = c->total_ns = 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

/* The value of the series of line prefix in the exposition, and how many such lines. */
static int series(const struct expo_buf *b, const char *prefix, unsigned long long *val)
{
	int n = 0;

	for (const char *p = b->p; p && p < b->p + b->len; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, prefix, strlen(prefix)) && ++n)
			sscanf(strchr(p, '}') + 1, "%llu", val);
	return n;
}

static void test_same_name_on_reused_pid(void)
{
	struct fake f = {};
	struct sampler_source src = {
		.cells = { .cells = f.cells, .nr_cells = fake_nr, .ctx = &f },
		.turn_epoch = fake_turn_epoch,
		.lost = fake_lost,
		.proc_args = fake_args,
	};
	struct sampler_opts so = { .by = BY_VM, .interval = 1 };
	struct expo_buckets buckets = {};
	struct expo_buf b = {};
	unsigned long long v = 0;
	struct sampler sp;
	struct exporter x;

	add_cell(&f, 500, 1, 5);	/* ended */
	add_cell(&f, 500, 2, 7);	/* runs, same name, same pid */
	add_cell(&f, 600, 1, 3);	/* ended */
	add_cell(&f, 600, 2, 4);	/* runs, a name of the same label */
	add_cell(&f, 700, 1, 1);	/* ended */
	add_cell(&f, 700, 2, 2);	/* ended, same name */
	add_cell(&f, 700, 3, 6);	/* runs, another name */
	CHECK(sampler_init(&sp, &src, &so) == 0);
	CHECK(exporter_init(&x, &sp, &buckets, false, 60000, 1000000000) == 0);
	x.guests.alive = fake_alive;
	sampler_start(&sp);
	sampler_poll(&sp);
	CHECK(sampler_sample(&sp) == 0);
	exporter_tick(&x);
	CHECK(exporter_render(&x, EXPO_TEXT, &b) == 0);
	/* One series, the running VMM's, not two with the same labels. */
	CHECK_EQ_U64(series(&b, "vmexit_exits_total{guest=\"same\",pid=\"500\"", &v), 1);
	CHECK_EQ_U64(v, 7);
	CHECK_EQ_U64(series(&b, "vmexit_exits_total{guest=\"bad\xef\xbf\xbd\",pid=\"600\"", &v), 1);
	CHECK_EQ_U64(v, 4);
	CHECK_EQ_U64(series(&b, "vmexit_exits_total{guest=\"x\",pid=\"700\"", &v), 1);
	CHECK_EQ_U64(v, 2);
	CHECK_EQ_U64(series(&b, "vmexit_exits_total{guest=\"y\",pid=\"700\"", &v), 1);
	CHECK_EQ_U64(v, 6);
	expo_buf_free(&b);
	exporter_free(&x);
	sampler_close(&sp, 0);
}

int main(void)
{
	struct fake f = {};
	struct sampler_source src = {
		.cells = { .cells = f.cells, .nr_cells = fake_nr, .ctx = &f },
		.turn_epoch = fake_turn_epoch,
		.lost = fake_lost,
	};
	struct sampler_opts so = { .by = BY_VM, .interval = 1 };
	struct expo_buckets buckets = {};
	struct sampler sp;
	struct exporter x;

	add_cell(&f, 300, 1000, 5);	/* the old VMM on pid 300: over */
	add_cell(&f, 300, 2000, 7);	/* the new one on the same pid */
	add_cell(&f, 400, 3000, 9);
	CHECK(sampler_init(&sp, &src, &so) == 0);
	CHECK(exporter_init(&x, &sp, &buckets, false, 1 /* --keep 1 ms */, 1000000000) == 0);
	x.guests.alive = fake_alive;
	sampler_start(&sp);
	sampler_poll(&sp);
	CHECK(sampler_sample(&sp) == 0);
	CHECK_EQ_U64(sp.t.cum.nr, 3);

	/* No scrape at all: the ticks alone learn the guests and see the old one end... */
	exporter_tick(&x);
	CHECK_EQ_U64(x.guests.map.nr, 3);
	CHECK_EQ_U64(sp.t.cum.nr, 3);
	/* ...and, past --keep, forget it: its row, its name, its entry. */
	sleep_ms(5);
	exporter_tick(&x);
	CHECK_EQ_U64(x.guests.map.nr, 2);
	CHECK_EQ_U64(sp.t.cum.nr, 2);
	CHECK(!serve_guests_find(&x.guests, 300, 1000));
	CHECK(serve_guests_find(&x.guests, 300, 2000) != NULL);
	CHECK(serve_guests_find(&x.guests, 400, 3000) != NULL);
	for (__u32 i = 0; i < sp.t.cum.nr; i++)
		CHECK(sp.t.cum.rows[i].key.start != 1000);
	for (__u32 i = 0; i < sp.names.nr; i++)
		CHECK(sp.names.v[i].start != 1000);
	/* The running ones stay, tick after tick. */
	sleep_ms(5);
	exporter_tick(&x);
	CHECK_EQ_U64(sp.t.cum.nr, 2);
	CHECK_EQ_U64(x.guests.map.nr, 2);

	exporter_free(&x);
	sampler_close(&sp, 0);
	test_same_name_on_reused_pid();
	CHECK_DONE("exporter_guests");
}
