// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top --wake`'s level (src/output/top_wake.c, src/model/wake_delta.c): two hand-made
 * snapshots of the kernel's wake cells, 2 s apart, give the interval and the totals, rendered
 * as worked out by hand below; and w toggles the level from where it was pressed.
 *
 * At the start (base) and at the last sample (now), pid 100 (web01):
 *   vCPU 0 timer 0x40: 10 then 30 deliveries; the 20 new ones are 10 of 1000 ns and 10 of
 *       3000 ns, 40 us in all: 10 us polled, 20 us slept, 6 us run-queue, 4 us on CPU.
 *   vCPU 1 msi 0x41: 5 deliveries then 5: none in the interval.
 *   vCPU 0 halts: 4 then 14: the 10 new ones 6 polled, 1 polled then slept, 3 slept; the
 *       halted exits' 100 us: 25 us poll, 50 us sleep, 15 us run-queue, 10 us other.
 * pid 200 (db02) vCPU 0 ipi 0xfd: none at the start, 4 of 35000 ns now, all of it in guest.
 * Rates over 2 s: 10/s and 2/s. Percentiles (include/hist.h's buckets): 1000 ns lies in
 * [960, 1024), 3000 ns in [2816, 3072), 35000 ns in [32768, 36864): the interval's P50 is the
 * 10th of 20 values, 1000 ns's bucket, shown as its middle 992 ns; the P99 3000 ns's bucket,
 * its middle 2944 ns (2.9us as fmt_duration() puts it); db02's both 35000 ns's bucket, its
 * middle 34816 ns, under the cell's max (percentiles are clamped to it).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "hist.h"
#include "top_view.h"
#include "wake_delta.h"

static void alloc(struct wake_snapshot *s, size_t nw, size_t nh)
{
	s->nr_wake = nw;
	s->wkeys = calloc(nw, sizeof(*s->wkeys));
	s->wcells = calloc(nw, sizeof(*s->wcells));
	s->nr_hlt = nh;
	s->hkeys = calloc(nh, sizeof(*s->hkeys));
	s->hcells = calloc(nh, sizeof(*s->hcells));
	if (!s->wkeys || !s->wcells || !s->hkeys || !s->hcells)
		abort();
}

static void snapshots(struct wake_snapshot *base, struct wake_snapshot *now)
{
	struct wake_cell *t;

	alloc(base, 2, 1);
	base->wkeys[0] = (struct wake_key){ 100, 0, WAKE_SRC_TIMER, 0x40, 7 };
	t = &base->wcells[0];
	t->count = 10;
	t->sum_ns = t->max_ns = 10 * 500;
	t->parts[WAKE_PART_GUEST] = t->sum_ns;
	t->hist[hist_bucket(500)] = 10;
	base->wkeys[1] = (struct wake_key){ 100, 1, WAKE_SRC_MSI, 0x41, 7 };
	base->wcells[1] = (struct wake_cell){ .count = 5, .sum_ns = 5000, .max_ns = 1000,
					      .parts = { [WAKE_PART_EXIT] = 5000 } };
	base->wcells[1].hist[hist_bucket(1000)] = 5;
	base->wcells[1].posted = 2;	/* and 2 posted with no exit */
	base->hkeys[0] = (struct hlt_key){ 100, 0, 7 };
	base->hcells[0] = (struct hlt_cell){ .exits = 4, .halts = 4, .polled = 4, .sum_ns = 8000,
					     .parts = { 8000, 0, 0, 0 } };
	base->lost[WAKE_LOST_SLOTS] = 1;

	alloc(now, 3, 1);
	memcpy(now->wkeys, base->wkeys, 2 * sizeof(*now->wkeys));
	memcpy(now->wcells, base->wcells, 2 * sizeof(*now->wcells));
	t = &now->wcells[0];
	t->count += 20;
	t->sum_ns += 40000;
	t->max_ns = 3000;
	t->parts[WAKE_PART_POLLED] += 10000;
	t->parts[WAKE_PART_SLEPT] += 20000;
	t->parts[WAKE_PART_RUNQ] += 6000;
	t->parts[WAKE_PART_ONCPU] += 4000;
	t->hist[hist_bucket(1000)] += 10;
	t->hist[hist_bucket(3000)] += 10;
	now->wcells[1].posted += 3;	/* vCPU 1's MSI: 3 more posted, none timed */
	now->wkeys[2] = (struct wake_key){ 200, 0, WAKE_SRC_IPI, 0xfd, 9 };
	now->wcells[2] = (struct wake_cell){ .count = 4, .sum_ns = 140000, .max_ns = 35000,
					     .parts = { [WAKE_PART_GUEST] = 140000 } };
	now->wcells[2].hist[hist_bucket(35000)] = 4;
	now->hkeys[0] = base->hkeys[0];
	now->hcells[0] = (struct hlt_cell){ .exits = 14, .halts = 14, .polled = 10,
					    .poll_slept = 1, .slept = 3, .sum_ns = 108000,
					    .parts = { 33000, 50000, 15000, 10000 } };
	now->lost[WAKE_LOST_SLOTS] = 1;
}

struct fixture {
	struct wake_snapshot base, now, cur, tot;
	struct name_cache names;
	struct row_table rows;
	struct top_data d;
	struct top_ui ui;
	struct top_view v;
};

static void setup(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	snapshots(&f->base, &f->now);
	/* As top_cmd.c does: the interval since the sample before, the totals since start. */
	CHECK(!wake_snapshot_delta(&f->cur, &f->now, &f->base));
	CHECK(!wake_snapshot_delta(&f->tot, &f->now, NULL));
	row_table_init(&f->rows);
	name_cache_set_at(&f->names, 100, 7, "web01");
	/* pid 100 reused since by another VMM: the rows, of the one that started at 7, say web01. */
	CHECK(!name_cache_born(&f->names, 100, 8));
	name_cache_set_at(&f->names, 100, 8, "web02");
	name_cache_set_at(&f->names, 200, 9, "db02");
	f->d = (struct top_data){ .cur = &f->rows, .tot = &f->rows, .interval_s = 2,
				  .since_s = 65, .elapsed_s = 65, .names = &f->names,
				  .host = "hv1", .kernel = "6.1.0", .filters = "",
				  .wake_cur = &f->cur, .wake_tot = &f->tot };
	top_ui_init(&f->ui);
	f->ui.level = LV_WAKE;
	f->ui.width = 131;
}

static void teardown(struct fixture *f)
{
	top_view_free(&f->v);
	top_ui_free(&f->ui);
	row_table_free(&f->rows);
	name_cache_free(&f->names);
	wake_snapshot_free(&f->base);
	wake_snapshot_free(&f->now);
	wake_snapshot_free(&f->cur);
	wake_snapshot_free(&f->tot);
}

static void build(struct fixture *f)
{
	CHECK(top_view_build(&f->v, &f->d, &f->ui) == 0);
}

static void key(struct fixture *f, int k)
{
	top_ui_key(&f->ui, k, &f->v, &f->d);
	build(f);
}

static int find(const struct top_view *v, const char *prefix)
{
	for (int i = 0; i < v->nr_lines; i++)
		if (!strncmp(v->lines[i].text, prefix, strlen(prefix)))
			return i;
	return -1;
}

/* The interval's growth: what each cell gained, every key of now kept, in its order. */
static void test_delta(void)
{
	struct fixture f;

	setup(&f);
	CHECK_EQ_U64(f.cur.nr_wake, 3);
	CHECK_EQ_U64(f.cur.wcells[0].count, 20);
	CHECK_EQ_U64(f.cur.wcells[0].sum_ns, 40000);
	CHECK_EQ_U64(f.cur.wcells[0].parts[WAKE_PART_GUEST], 0);
	CHECK_EQ_U64(f.cur.wcells[0].hist[hist_bucket(500)], 0);
	CHECK_EQ_U64(f.cur.wcells[1].count, 0);
	CHECK_EQ_U64(f.cur.wcells[1].posted, 3);
	CHECK_EQ_U64(f.tot.wcells[1].posted, 5);
	CHECK_EQ_U64(f.cur.wcells[2].count, 4);
	CHECK_EQ_U64(f.cur.hcells[0].halts, 10);
	CHECK_EQ_U64(f.cur.hcells[0].parts[HLT_PART_POLL], 25000);
	CHECK_EQ_U64(f.cur.lost[WAKE_LOST_SLOTS], 0);
	CHECK_EQ_U64(f.tot.wcells[0].count, 30);
	CHECK_EQ_U64(f.tot.lost[WAKE_LOST_SLOTS], 1);
	/* A cell that shrank was forgotten and made again: it counts whole. */
	f.base.wcells[1].count = 9;
	wake_snapshot_free(&f.cur);
	CHECK(!wake_snapshot_delta(&f.cur, &f.now, &f.base));
	CHECK_EQ_U64(f.cur.wcells[1].count, 5);
	teardown(&f);
}

static void test_render(void)
{
	struct fixture f;
	int h;

	setup(&f);
	build(&f);
	CHECK_STR(f.v.lines[1].text, "View: interrupt deliveries and halts of all VMs");
	h = find(&f.v, "     Total");
	CHECK(h == 3 && (f.v.lines[h].attr & TOP_A_REVERSE));
	CHECK_STR(f.v.lines[h].text, "     Total    Posted  Current     P50     P99  guest   exit "
		  "polled  slept   runq  oncpu  Guest/pid vCPU source vector: parts %");
	CHECK_STR(f.v.lines[h + 1].text, "        30         0       10   992ns   2.9us    0.0 "
		  "   0.0   25.0   50.0   15.0   10.0  web01/100 vCPU 0 timer 0x40");
	/* No timed delivery in the interval: no rate, latency or shares; 5 posted since start. */
	CHECK_STR(f.v.lines[h + 2].text, "         5         5        0       -       -      - "
		  "     -      -      -      -      -  web01/100 vCPU 1 msi 0x41");
	CHECK_STR(f.v.lines[h + 3].text, "         4         0        2  34.8us  34.8us  100.0 "
		  "   0.0    0.0    0.0    0.0    0.0  db02/200 vCPU 0 ipi 0xfd");
	CHECK_STR(f.v.lines[h + 4].text, "");
	CHECK(f.v.lines[h + 5].attr & TOP_A_REVERSE);
	CHECK_STR(f.v.lines[h + 5].text, "     Halts  Current polled p+slpt  slept   poll  sleep "
		  "  runq  other  Guest/pid vCPU: halts' kinds %, halted exits' time %");
	/* 10 halts in 2 s: 6, 1 and 3 of them; 25, 50, 15, 10 us of the 100. */
	CHECK_STR(f.v.lines[h + 6].text, "        14        5   60.0   10.0   30.0   25.0   50.0 "
		  "  15.0   10.0  web01/100 vCPU 0");
	/* Lost since start, never silent. */
	CHECK(f.v.lines[h + 7].attr & TOP_A_ALERT);
	CHECK_STR(f.v.lines[h + 7].text, "Lost: 1 pending interrupts past the vCPU's slots");
	CHECK_EQ_U64(f.v.nr_lines, h + 8);
	/*
	 * -z: the msi row, none timed in the interval but 3 posted, stays; idle (none posted
	 * either), it goes (a Filters line comes under the view's); -f: rows by guest, source or
	 * vector.
	 */
	f.ui.skip_zero = true;
	build(&f);
	h = find(&f.v, "     Total");
	CHECK(h == 4 && strstr(f.v.lines[h + 2].text, " web01/100 vCPU 1 msi 0x41") != NULL);
	f.cur.wcells[1].posted = 0;
	build(&f);
	h = find(&f.v, "     Total");
	CHECK(h == 4 && find(&f.v, "         5") < 0);
	CHECK(strstr(f.v.lines[h + 1].text, " web01/100 vCPU 0 timer 0x40") != NULL);
	CHECK(strstr(f.v.lines[h + 2].text, " db02/200 vCPU 0 ipi 0xfd") != NULL);
	CHECK_STR(f.v.lines[h + 3].text, "");
	f.ui.skip_zero = false;
	CHECK(!top_ui_set_filter(&f.ui, "ipi", NULL, 0));
	build(&f);
	CHECK(find(&f.v, "     Total") == h);
	CHECK_STR(f.v.lines[h + 1].text + 89, "db02/200 vCPU 0 ipi 0xfd");
	CHECK_STR(f.v.lines[h + 2].text, "");
	CHECK_STR(f.v.lines[h + 4].text, "  (no halt matches the filter)");
	CHECK(!top_ui_set_filter(&f.ui, "no-such-guest", NULL, 0));
	build(&f);
	CHECK_STR(f.v.lines[h + 1].text, "  (no delivery matches the filter)");
	CHECK(!top_ui_set_filter(&f.ui, "", NULL, 0));
	teardown(&f);
}

/* w from a level and back; the scope kept (a VM, a vCPU); no --wake: said. */
static void test_keys(void)
{
	struct fixture f;

	setup(&f);
	f.ui.level = LV_REASONS;
	f.ui.tgid = 100;
	f.ui.start = 7;	/* web01, not the pid's latest VMM */
	f.ui.vcpu = 0;
	f.ui.interactive = true;
	f.ui.height = 24;
	f.ui.width = 120;
	build(&f);
	key(&f, 'w');
	CHECK(f.ui.level == LV_WAKE && f.ui.tgid == 100 && f.ui.vcpu == 0);
	CHECK_STR(f.v.lines[1].text, "View: interrupt deliveries and halts of web01 (pid 100) "
		  "vCPU 0");
	/* Only web01's vCPU 0: its timer row and its halts. */
	CHECK(strstr(f.v.lines[4].text, "web01/100 vCPU 0 timer 0x40") != NULL);
	CHECK_STR(f.v.lines[5].text, "");
	CHECK(strstr(f.v.lines[7].text, "web01/100 vCPU 0") != NULL);
	CHECK(find(&f.v, "Lost:") == 8);
	key(&f, TK_ENTER);
	CHECK_STR(f.ui.msg, "wake-ups have no level below (w: back)");
	key(&f, 'w');
	CHECK(f.ui.level == LV_REASONS && f.ui.tgid == 100 && f.ui.vcpu == 0);
	/* From the VMs' list, all VMs; Left goes back to it. */
	f.ui.level = LV_VMS;
	f.ui.tgid = 0;
	f.ui.vcpu = -1;
	key(&f, 'w');
	CHECK(f.ui.level == LV_WAKE && f.ui.tgid == 0);
	key(&f, TK_LEFT);
	CHECK(f.ui.level == LV_VMS);
	/* Scrolling: 10 lines show 5 of its 7 (3 deliveries, a blank, the halts' header, 1 halt,
	 * Lost) under 3 header lines and the column's, over the status line. */
	key(&f, 'w');
	f.ui.height = 10;
	key(&f, TK_RESIZE);
	CHECK(strstr(f.v.lines[9].text, "  [1-5/7]") != NULL);
	key(&f, TK_END);
	CHECK_STR(f.v.lines[8].text, "Lost: 1 pending interrupts past the vCPU's slots");
	f.d.wake_cur = f.d.wake_tot = NULL;
	key(&f, 'w');
	CHECK(f.ui.level == LV_VMS);
	key(&f, 'w');
	CHECK(f.ui.level == LV_VMS);
	CHECK_STR(f.ui.msg, "no wake-up statistics: start top with --wake");
	teardown(&f);
}

int main(void)
{
	test_delta();
	test_render();
	test_keys();
	CHECK_DONE("test_top_wake");
}
