// SPDX-License-Identifier: GPL-2.0
/*
 * serve --wake: the kernel's wake cells summed into series (per guest x source, per vCPU with
 * --by vcpu; only the guests the scrape exports), rendered in the text format, OpenMetrics
 * (promtool reads the text) and protobuf (decoded here: the families, their metrics and each
 * histogram's count).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "pb_varint.h"
#include "expo_lines.h"
#include "hist.h"
#include "prom_protobuf.h"
#include "series_cap.h"
#include "wake_exposition.h"

/* Only pid 42 is exported (pid 43's exit series are not: serve -g, --keep). */
static bool guest_of(void *ctx, __u32 tgid, __u64 start, const char **guest, __u64 *created_ms)
{
	(void)ctx;
	if (tgid != 42 || start)
		return false;
	*guest = "web\"01";
	*created_ms = 1763884800123ULL;
	return true;
}

static void add(struct wake_cell *c, __u64 ns, const __u64 parts[NR_WAKE_PARTS])
{
	c->count++;
	c->sum_ns += ns;
	c->max_ns = ns > c->max_ns ? ns : c->max_ns;
	c->hist[hist_bucket(ns)]++;
	for (int p = 0; p < NR_WAKE_PARTS; p++)
		c->parts[p] += parts[p];
}

/* Cells as the kernel keeps them (sorted by pid, vCPU, source, vector). */
static void snapshot(struct wake_snapshot *s)
{
	static struct wake_key wk[5];
	static struct wake_cell wc[5];
	static struct hlt_key hk[3];
	static struct hlt_cell hc[3];

	memset(wc, 0, sizeof(wc));
	memset(hc, 0, sizeof(hc));
	wk[0] = (struct wake_key){ 42, 0, WAKE_SRC_MSI, 0x41, 0 };
	add(&wc[0], 1000, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_SLEPT] = 900,
							  [WAKE_PART_ONCPU] = 100 });
	add(&wc[0], 2000, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_POLLED] = 2000 });
	wk[1] = (struct wake_key){ 42, 0, WAKE_SRC_MSI, 0x42, 0 };
	add(&wc[1], 300, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_GUEST] = 300 });
	wc[1].posted = 5;	/* 0x42: 5 more KVM posted; with vCPU 1's 2: 7 for msi */
	wk[2] = (struct wake_key){ 42, 0, WAKE_SRC_TIMER, 0x40, 0 };
	add(&wc[2], 5000000, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_SLEPT] = 4999000,
							     [WAKE_PART_RUNQ] = 1000 });
	wk[3] = (struct wake_key){ 42, 1, WAKE_SRC_MSI, 0x41, 0 };
	add(&wc[3], 700, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_EXIT] = 700 });
	wc[3].posted = 2;
	wk[4] = (struct wake_key){ 43, 0, WAKE_SRC_IPI, 0xfd, 0 };
	add(&wc[4], 100, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_GUEST] = 100 });
	hk[0] = (struct hlt_key){ 42, 0, 0 };
	hc[0] = (struct hlt_cell){ .exits = 3, .halts = 4, .polled = 1, .poll_slept = 1,
				   .slept = 2, .invalid = 1, .sum_ns = 9000, .halt_ns = 8000,
				   .wake_sum_ns = 7000,
				   .parts = { [HLT_PART_POLL] = 1000, [HLT_PART_SLEEP] = 6000,
					      [HLT_PART_RUNQ] = 500, [HLT_PART_OTHER] = 1500 } };
	hc[0].hist[hist_bucket(1000)] = 2;
	hc[0].hist[hist_bucket(2500)] = 2;
	hk[1] = (struct hlt_key){ 42, 1, 0 };
	hc[1] = (struct hlt_cell){ .exits = 1, .halts = 1, .slept = 1, .sum_ns = 100,
				   .wake_sum_ns = 60, .parts = { [HLT_PART_SLEEP] = 100 } };
	hc[1].hist[hist_bucket(60)] = 1;
	hk[2] = (struct hlt_key){ 43, 0, 0 };
	hc[2] = (struct hlt_cell){ .exits = 1, .halts = 1, .polled = 1 };
	*s = (struct wake_snapshot){ .wkeys = wk, .wcells = wc, .nr_wake = 5, .hkeys = hk,
				     .hcells = hc, .nr_hlt = 3, .lost = { [WAKE_LOST_SLOTS] = 2 },
				     .halt_poll_ns = 200000 };
}

#define G "guest=\"web\\\"01\",pid=\"42\""

static void test_by_guest(const struct expo_buckets *bk)
{
	struct wake_series ws = {};
	struct wake_snapshot s;
	struct expo_buf b = {};

	snapshot(&s);
	CHECK(!wake_series_take(&ws, &s, guest_of, NULL));
	/* pid 42's MSIs of both vCPUs and vectors in one series, its timer in another. */
	CHECK_EQ_U64(ws.nr_wake, 2);
	CHECK_EQ_U64(ws.wake[0].source, WAKE_SRC_MSI);
	CHECK_EQ_U64(ws.wake[0].c.count, 4);
	CHECK_EQ_U64(ws.wake[0].c.sum_ns, 4000);
	CHECK_EQ_U64(ws.wake[0].c.max_ns, 2000);
	CHECK_EQ_U64(ws.wake[1].source, WAKE_SRC_TIMER);
	CHECK_EQ_U64(ws.nr_halt, 1);
	CHECK_EQ_U64(ws.halt[0].c.halts, 5);
	CHECK_EQ_U64(ws.halt[0].c.wake_sum_ns, 7060);

	CHECK(!expo_render_wake(&ws, bk, EXPO_TEXT, true, &b));
	CHECK(has_line(&b, "# TYPE vmexit_irq_delivery_seconds histogram"));
	/* 300 and 700 ns below 1.024 us, 1000 ns too; 2000 ns not. */
	CHECK(has_line(&b, "vmexit_irq_delivery_seconds_bucket{" G ",source=\"msi\","
			   "le=\"1.024e-06\"} 3"));
	CHECK(has_line(&b, "vmexit_irq_delivery_seconds_bucket{" G ",source=\"msi\","
			   "le=\"+Inf\"} 4"));
	CHECK(has_line(&b, "vmexit_irq_delivery_seconds_count{" G ",source=\"msi\"} 4"));
	CHECK(has_line(&b, "vmexit_irq_delivery_seconds_sum{" G ",source=\"msi\"} 0.000004000"));
	CHECK(has_line(&b, "vmexit_irq_delivery_seconds_sum{" G ",source=\"timer\"} "
			   "0.005000000"));
	CHECK(has_line(&b, "# TYPE vmexit_irq_delivery_part_seconds_total counter"));
	CHECK(has_line(&b, "vmexit_irq_delivery_part_seconds_total{" G ",source=\"msi\","
			   "part=\"polled\"} 0.000002000"));
	CHECK(has_line(&b, "vmexit_irq_delivery_part_seconds_total{" G ",source=\"msi\","
			   "part=\"exit\"} 0.000000700"));
	CHECK(has_line(&b, "vmexit_irq_delivery_part_seconds_total{" G ",source=\"timer\","
			   "part=\"runq\"} 0.000001000"));
	/* Posted per guest and source, vCPUs and vectors summed: 5 + 2 msi, no timer. */
	CHECK(has_line(&b, "# TYPE vmexit_irq_posted_total counter"));
	CHECK(has_line(&b, "vmexit_irq_posted_total{" G ",source=\"msi\"} 7"));
	CHECK(has_line(&b, "vmexit_irq_posted_total{" G ",source=\"timer\"} 0"));
	CHECK(has_line(&b, "vmexit_halted_exits_total{" G "} 4"));
	CHECK(has_line(&b, "vmexit_halts_total{" G ",outcome=\"polled\"} 1"));
	CHECK(has_line(&b, "vmexit_halts_total{" G ",outcome=\"slept\"} 3"));
	CHECK(has_line(&b, "vmexit_halt_invalid_wakeups_total{" G "} 1"));
	CHECK(has_line(&b, "vmexit_halted_exit_part_seconds_total{" G ",part=\"sleep\"} "
			   "0.000006100"));
	CHECK(has_line(&b, "vmexit_halt_wakeup_seconds_count{" G "} 5"));
	CHECK(has_line(&b, "vmexit_halt_wakeup_seconds_sum{" G "} 0.000007060"));
	CHECK(has_line(&b, "vmexit_kvm_halt_poll_seconds 0.000200000"));
	CHECK(has_line(&b, "vmexit_wake_lost_total{cause=\"slots\"} 2"));
	CHECK(has_line(&b, "vmexit_wake_lost_total{cause=\"cells\"} 0"));
	CHECK(families_grouped(&b));
	CHECK(!memmem(b.p, b.len, "untimed", 7));	/* not known: no family */
	/* Untimed interrupts known (the kernel's count read): a family of its own. */
	ws.untimed = 9;
	ws.untimed_known = true;
	b.len = 0;
	CHECK(!expo_render_wake(&ws, bk, EXPO_TEXT, true, &b));
	CHECK(has_line(&b, "# TYPE vmexit_wake_untimed_total counter"));
	CHECK(has_line(&b, "vmexit_wake_untimed_total 9"));
	CHECK(has_line(&b, "vmexit_wake_lost_total{cause=\"slots\"} 2"));
	CHECK(families_grouped(&b));
	/* pid 43 is not exported; no _created in the text format. */
	CHECK(!memmem(b.p, b.len, "pid=\"43\"", 8));
	CHECK(!memmem(b.p, b.len, "_created", 8));

	/* A protobuf scrape's text part: the counters, not the histograms. */
	b.len = 0;
	CHECK(!expo_render_wake(&ws, bk, EXPO_TEXT, false, &b));
	CHECK(!memmem(b.p, b.len, "histogram", 9));
	CHECK(memmem(b.p, b.len, "vmexit_halts_total", 18));

	b.len = 0;
	CHECK(!expo_render_wake(&ws, bk, EXPO_OPENMETRICS, true, &b));
	CHECK(has_line(&b, "# TYPE vmexit_irq_delivery_part_seconds counter"));
	CHECK(has_line(&b, "# UNIT vmexit_irq_delivery_seconds seconds"));
	CHECK(has_line(&b, "vmexit_irq_delivery_seconds_created{" G ",source=\"msi\"} "
			   "1763884800.123"));
	CHECK(has_line(&b, "vmexit_halts_created{" G ",outcome=\"polled\"} 1763884800.123"));
	CHECK(has_line(&b, "# TYPE vmexit_wake_untimed counter"));
	CHECK(families_grouped(&b));
	expo_buf_free(&b);
	wake_series_free(&ws);
}

static void test_by_vcpu(const struct expo_buckets *bk, struct expo_buf *b)
{
	struct wake_series ws = { .by_vcpu = true };
	struct wake_snapshot s;

	snapshot(&s);
	CHECK(!wake_series_take(&ws, &s, guest_of, NULL));
	CHECK_EQ_U64(ws.nr_wake, 3);		/* vCPU 0 msi, timer; vCPU 1 msi */
	CHECK_EQ_U64(ws.nr_halt, 2);
	CHECK(!expo_render_wake(&ws, bk, EXPO_TEXT, true, b));
	CHECK(has_line(b, "vmexit_irq_delivery_seconds_count{" G ",vcpu=\"0\",source=\"msi\"} 3"));
	CHECK(has_line(b, "vmexit_irq_delivery_seconds_count{" G ",vcpu=\"1\",source=\"msi\"} 1"));
	CHECK(has_line(b, "vmexit_halts_total{" G ",vcpu=\"1\",outcome=\"slept\"} 1"));
	wake_series_free(&ws);
}

/* The first field `field` of wire type 0 or 2 in [p, end): its varint, or its bytes. */
static bool field(const __u8 *p, const __u8 *end, __u32 want, __u64 *v, const __u8 **at,
		  __u64 *len)
{
	while (p < end) {
		__u64 tag = varint(&p, end), n = 0;

		switch (tag & 7) {
		case 0:
			n = varint(&p, end);
			if (tag >> 3 == want) {
				*v = n;
				return true;
			}
			break;
		case 1:
			p += 8;
			break;
		case 2:
			n = varint(&p, end);
			if (n > (__u64)(end - p))
				return false;
			if (tag >> 3 == want) {
				*at = p;
				*len = n;
				return true;
			}
			p += n;
			break;
		case 5:
			p += 4;
			break;
		default:
			return false;
		}
	}
	return false;
}

/* Each family of the delimited stream: its name, metrics, and its first histogram's count. */
static void test_protobuf(const struct expo_buckets *bk)
{
	static const struct { const char *name; __u64 metrics, count; } want[] = {
		{ "vmexit_irq_delivery_seconds", 2, 4 },
		{ "vmexit_irq_delivery_nanoseconds", 2, 4 },
		{ "vmexit_halt_wakeup_seconds", 1, 5 },
		{ "vmexit_halt_wakeup_nanoseconds", 1, 5 },
	};
	struct wake_series ws = {};
	struct wake_snapshot s;
	struct expo_input in = { .buckets = bk, .version = "v", .kernel = "k", .wake = &ws };
	struct expo_buf b = {};
	int found[4] = {}, counters = 0;

	snapshot(&s);
	CHECK(!wake_series_take(&ws, &s, guest_of, NULL));
	CHECK(!expo_render_protobuf(&in, EXPO_HISTS_BOTH, &b));
	for (const __u8 *p = (const __u8 *)b.p, *end = p + b.len; p < end;) {
		__u64 n = varint(&p, end), v = 0, len = 0, metrics = 0, hlen = 0, count = ~0ULL;
		const __u8 *at = NULL, *m, *h = NULL, *q;
		char name[64] = "";

		if (n > (__u64)(end - p)) {
			CHECK(!"a family runs past the stream's end");
			break;
		}
		if (field(p, p + n, 1, &v, &at, &len) && len < sizeof(name))
			memcpy(name, at, len);
		/* Its metrics: every field 4; the first one's histogram (field 7) count (1). */
		for (q = p; field(q, p + n, 4, &v, &m, &len); q = m + len) {
			if (!metrics++ && field(m, m + len, 7, &v, &h, &hlen))
				field(h, h + hlen, 1, &count, &at, &len);
		}
		for (size_t i = 0; i < 4; i++)
			if (!strcmp(name, want[i].name)) {
				found[i]++;
				CHECK_EQ_U64(metrics, want[i].metrics);
				CHECK_EQ_U64(count, want[i].count);
			}
		counters += !strcmp(name, "vmexit_irq_delivery_part_seconds_total") ||
			    !strcmp(name, "vmexit_halts_total");
		p += n;
	}
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_U64(found[i], 1);
	CHECK_EQ_U64(counters, 2);	/* translated from the text format */
	expo_buf_free(&b);
	wake_series_free(&ws);
}

/* Pid 42 reused: the VMM started at 1000 ended ("old"), the one started at 2000 runs ("new"). */
static bool reused_guest(void *ctx, __u32 tgid, __u64 start, const char **guest,
			 __u64 *created_ms)
{
	bool both = *(const bool *)ctx;

	if (tgid != 42 || (start != 2000 && !(both && start == 1000)))
		return false;
	*guest = start == 2000 ? "new" : "old";
	*created_ms = start;
	return true;
}

/* A pid's new VMM starts series of its own: nothing of the ended one's cells adds to them. */
static void test_pid_reuse(void)
{
	struct wake_key wk[4] = {
		{ 42, 0, WAKE_SRC_MSI, 0x41, 2000 }, { 42, 0, WAKE_SRC_MSI, 0x41, 1000 },
		{ 42, 1, WAKE_SRC_MSI, 0x41, 1000 }, { 42, 1, WAKE_SRC_MSI, 0x41, 2000 },
	};
	struct hlt_key hk[2] = { { 42, 0, 2000 }, { 42, 0, 1000 } };
	struct wake_snapshot s = { .nr_wake = 4, .nr_hlt = 2, .halt_poll_ns = -1 };
	struct wake_series ws = {};
	bool both = false;

	s.wkeys = malloc(sizeof(wk));
	s.wcells = calloc(4, sizeof(*s.wcells));
	s.hkeys = malloc(sizeof(hk));
	s.hcells = calloc(2, sizeof(*s.hcells));
	CHECK(s.wkeys && s.wcells && s.hkeys && s.hcells);
	if (!s.wkeys || !s.wcells || !s.hkeys || !s.hcells)
		return;
	memcpy(s.wkeys, wk, sizeof(wk));
	memcpy(s.hkeys, hk, sizeof(hk));
	/* The new VMM: 2 + 3 deliveries, 1 halted exit; the old one: 5 + 7, and 4. */
	for (int i = 0; i < 2; i++)
		add(&s.wcells[0], 100, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_GUEST] = 100 });
	for (int i = 0; i < 5; i++)
		add(&s.wcells[1], 100, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_GUEST] = 100 });
	for (int i = 0; i < 7; i++)
		add(&s.wcells[2], 100, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_GUEST] = 100 });
	for (int i = 0; i < 3; i++)
		add(&s.wcells[3], 100, (const __u64[NR_WAKE_PARTS]){ [WAKE_PART_GUEST] = 100 });
	s.hcells[0].exits = 1;
	s.hcells[1].exits = 4;
	wake_snapshot_sort(&s);
	CHECK(!wake_series_take(&ws, &s, reused_guest, &both));
	CHECK_EQ_U64(ws.nr_wake, 1);
	CHECK_EQ_U64(ws.wake[0].c.count, 5);
	CHECK_EQ_U64(ws.nr_halt, 1);
	CHECK_EQ_U64(ws.halt[0].c.exits, 1);
	/* Both exported (another guest label: still within --keep): each its own. */
	both = true;
	CHECK(!wake_series_take(&ws, &s, reused_guest, &both));
	CHECK_EQ_U64(ws.nr_wake, 2);
	CHECK_EQ_U64(ws.nr_halt, 2);
	for (__u32 i = 0; i < ws.nr_wake; i++)
		CHECK_EQ_U64(ws.wake[i].c.count, strcmp(ws.wake[i].guest, "new") ? 12 : 5);
	for (__u32 i = 0; i < ws.nr_halt; i++)
		CHECK_EQ_U64(ws.halt[i].c.exits, strcmp(ws.halt[i].guest, "new") ? 4 : 1);
	wake_series_free(&ws);
	wake_snapshot_free(&s);
}

/* The guests' wake series in a text scrape: sample lines of the delivery and halt families
 * (vmexit_kvm_halt_poll_seconds and vmexit_wake_lost are process-wide, outside the cap). */
static __u64 wake_lines(const struct expo_buf *b)
{
	__u64 n = 0;

	for (const char *p = b->p, *end = b->p + b->len; p < end;) {
		const char *nl = memchr(p, '\n', end - p);

		if (!strncmp(p, "vmexit_irq_delivery", 19) || !strncmp(p, "vmexit_halt", 11))
			n++;
		p = nl ? nl + 1 : end;
	}
	return n;
}

/* One text scrape of the wake series alone, capped at max: its wake lines and the dropped. */
static __u64 capped_scrape(const struct expo_buckets *bk, __u64 max, __u64 *dropped)
{
	struct wake_series ws = { .by_vcpu = true };
	struct wake_snapshot s;
	struct expo_input in = { .buckets = bk, .version = "v", .kernel = "k", .wake = &ws };
	struct expo_buf b = {};
	char line[64];
	__u64 n;

	snapshot(&s);
	CHECK(!wake_series_take(&ws, &s, guest_of, NULL));
	series_cap_apply(&in, EXPO_TEXT, EXPO_HISTS_NATIVE, max);
	CHECK(!expo_render(&in, EXPO_TEXT, &b));
	n = wake_lines(&b);
	*dropped = in.series_dropped;
	snprintf(line, sizeof(line), "vmexit_series_dropped %llu", (unsigned long long)*dropped);
	CHECK(has_line(&b, line));
	expo_buf_free(&b);
	wake_series_free(&ws);
	return n;
}

/* --max-series counts the wake series: a scrape keeps at most the cap, says what it left out. */
static void test_series_cap(const struct expo_buckets *bk)
{
	struct expo_input in = { .buckets = bk };
	__u64 all, dropped, n;
	const __u64 per_wake = series_per_wake(&in, EXPO_TEXT, EXPO_HISTS_NATIVE);
	const __u64 per_halt = series_per_halt(&in, EXPO_TEXT, EXPO_HISTS_NATIVE);

	all = capped_scrape(bk, ~0ULL, &dropped);
	CHECK_EQ_U64(dropped, 0);
	/* pid 42 by vCPU: MSI and timer on vCPU 0, MSI on vCPU 1; halts on both. */
	CHECK_EQ_U64(all, 3 * per_wake + 2 * per_halt);
	for (__u64 max = 1; max < all; max += 7) {
		n = capped_scrape(bk, max, &dropped);
		CHECK(n <= max);
		CHECK_EQ_U64(dropped, all - n);
	}
	/* Whole series: room for two delivery series and a bit keeps exactly two. */
	n = capped_scrape(bk, 2 * per_wake + 1, &dropped);
	CHECK_EQ_U64(n, 2 * per_wake);
}

int main(void)
{
	struct expo_buckets bk;
	struct expo_buf b = {};
	char err[256];
	FILE *f;

	CHECK(!expo_buckets_parse("256ns,1.024us,2.048us", &bk, err, sizeof(err)));
	test_by_guest(&bk);
	test_protobuf(&bk);
	test_series_cap(&bk);
	test_pid_reuse();
	test_by_vcpu(&bk, &b);
	/* promtool (tools/install-deps.sh installs it) parses the text format and lints it. */
	f = popen("promtool check metrics", "w");
	CHECK(f && fwrite(b.p, 1, b.len, f) == b.len);
	CHECK(f && pclose(f) == 0);
	expo_buf_free(&b);
	CHECK_DONE("test_wake_exposition");
}
