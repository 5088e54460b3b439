// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's exposition: bucket bounds, escaping, counts, both formats. With a directory
 * argument it also writes both renderings there (text.prom, openmetrics.prom) for promtool.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "expo_lines.h"
#include "hist.h"
#include "expo_accept.h"
#include "prom_exposition.h"

static void add_exit(struct row *r, __u64 ns)
{
	r->hist[hist_bucket(ns)]++;
	r->completed++;
	r->count++;
	r->total_ns += ns;
}

static void test_buckets(void)
{
	struct expo_buckets b, d;
	char err[256];

	expo_buckets_default(&d);
	CHECK_EQ_U64(d.nr, 24);
	CHECK_STR(d.le[0], "2.56e-07");
	CHECK_STR(d.le[2], "1.024e-06");
	CHECK_STR(d.le[23], "2.147483648");
	for (__u32 i = 0; i < d.nr; i++)
		CHECK_EQ_U64(hist_bucket_low(d.bucket[i]), 1ULL << (8 + i));

	/* Units, unsorted input with a duplicate; a bare number is refused as every duration. */
	CHECK(!expo_buckets_parse("1.024us,256ns,0.000256ms,2.147483648s", &b, err, sizeof(err)));
	CHECK_EQ_U64(b.nr, 3);
	CHECK(expo_buckets_parse("256ns,0.5", &b, err, sizeof(err)) == -1);
	CHECK_STR(err, "invalid --buckets bound '0.5': give a duration with its unit (ns, us, ms, "
		  "s, m or h) from 1ns to 137.438953472s, e.g. 500ms or 2s");
	/* 1 ms lies between 2^19 + 7 * 2^16 ns and 2^20 ns. */
	CHECK(expo_buckets_parse("1ms", &b, err, sizeof(err)) == -1);
	CHECK(strstr(err, "983.04us and 1.048576ms"));

	CHECK(!expo_buckets_parse("256ns,1.024us,2.147483648s", &b, err, sizeof(err)));
	CHECK_EQ_U64(b.nr, 3);
	CHECK_STR(b.le[0], "2.56e-07");
	CHECK_STR(b.le[1], "1.024e-06");
	CHECK_STR(b.le[2], "2.147483648");
	/* Exact edges below 16 ns, and 2^37 ns, the overflow bucket's start. */
	CHECK(!expo_buckets_parse("1ns,15ns,137.438953472s", &b, err, sizeof(err)));
	CHECK_EQ_U64(b.nr, 3);
	CHECK_EQ_U64(b.bucket[2], NR_BUCKETS - 1);

	/* 1 us lies between the edges 960 ns and 1024 ns (512 ns cut in eighths of 64 ns). */
	CHECK(expo_buckets_parse("256ns,1us", &b, err, sizeof(err)) == -1);
	CHECK(strstr(err, "1us is not an edge") && strstr(err, "960ns") &&
	      strstr(err, "1.024us"));
	CHECK(expo_buckets_parse("fast", &b, err, sizeof(err)) == -1);
	CHECK(strstr(err, "invalid --buckets bound 'fast': give a duration with its unit"));
	CHECK(expo_buckets_parse("1h", &b, err, sizeof(err)) == -1);
	CHECK(expo_buckets_parse("-1s", &b, err, sizeof(err)) == -1);
	CHECK(expo_buckets_parse("200s", &b, err, sizeof(err)) == -1);
	CHECK(strstr(err, "to 137.438953472s"));
	CHECK(expo_buckets_parse("", &b, err, sizeof(err)) == -1);
	CHECK(expo_buckets_parse(",,", &b, err, sizeof(err)) == -1);
	CHECK(expo_buckets_parse("0.5ns", &b, err, sizeof(err)) == -1);
}

static void test_negotiate(void)
{
	/* What Prometheus 2.x sends. */
	CHECK(expo_negotiate("application/openmetrics-text;version=1.0.0,application/"
			     "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
			     "q=0.5,*/*;q=0.1") == EXPO_OPENMETRICS);
	CHECK(expo_negotiate(NULL) == EXPO_TEXT);
	CHECK(expo_negotiate("") == EXPO_TEXT);
	CHECK(expo_negotiate("*/*") == EXPO_TEXT);
	CHECK(expo_negotiate("text/plain") == EXPO_TEXT);
	CHECK(expo_negotiate("application/openmetrics-text") == EXPO_OPENMETRICS);
	CHECK(expo_negotiate("Application/OpenMetrics-Text; version=1.0.0") == EXPO_OPENMETRICS);
	CHECK(expo_negotiate("application/openmetrics-text;version=0.0.1") == EXPO_TEXT);
	CHECK(expo_negotiate("application/openmetrics-text;q=0.3,text/plain;q=0.5") == EXPO_TEXT);
	CHECK(expo_negotiate("text/plain;q=0.5,application/openmetrics-text;q=0.6") ==
	      EXPO_OPENMETRICS);
	CHECK(expo_negotiate("application/openmetrics-text;q=0") == EXPO_TEXT);
	/* Prometheus with native histograms on: protobuf first. */
	CHECK(expo_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client."
			     "MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;"
			     "q=0.3,*/*;q=0.2") == EXPO_PROTOBUF);
	CHECK(expo_negotiate("application/vnd.google.protobuf; proto=io.prometheus.client."
			     "MetricFamily; encoding=delimited ; q=0.5, application/openmetrics-"
			     "text;version=1.0.0;q=0.4") == EXPO_PROTOBUF);
	/* Not the delimited MetricFamily stream, or offered less than text: not protobuf. */
	CHECK(expo_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client."
			     "MetricFamily;encoding=text") == EXPO_TEXT);
	CHECK(expo_negotiate("application/vnd.google.protobuf;encoding=delimited") == EXPO_TEXT);
	CHECK(expo_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client."
			     "MetricFamily;encoding=delimited;q=0.2,text/plain;q=0.5") == EXPO_TEXT);
	CHECK(expo_negotiate("application/*") == EXPO_TEXT);
	CHECK(!strcmp(expo_content_type(EXPO_PROTOBUF), "application/vnd.google.protobuf; "
		      "proto=io.prometheus.client.MetricFamily; encoding=delimited"));
}

/*
 * The exit series' families whole, byte for byte, for one series and two bounds, and for two
 * series of one guest with --by vcpu (the second series' lines follow the first's in each
 * family): the layout every scrape repeats 10,000 times, written out from the formats' rules.
 */
/* The numbers of n rows as serve hands them to the exposition (expo_counts_of()). */
struct taken_counts {
	struct expo_counts c[3];
	__u64 le[3][EXPO_MAX_BOUNDS + 1];
};

static void take_counts(struct expo_input *in, const struct row *rows, int n,
			struct taken_counts *t)
{
	for (int i = 0; i < n; i++) {
		expo_counts_of(&t->c[i], &rows[i], in->buckets, t->le[i]);
		t->c[i].le = t->le[i];
	}
	in->counts = t->c;
}

static void test_whole_exit_families(void)
{
	static const char want_text[] =
		"# HELP vmexit_exits_total KVM exits seen, counted when they start.\n"
		"# TYPE vmexit_exits_total counter\n"
		"vmexit_exits_total{guest=\"g\\\"1\",pid=\"7\",kind=\"kernel\",isa=\"vmx\","
		"reason=\"EPT_VIOLATION\"} 4\n"
		"# HELP vmexit_exit_duration_seconds Time in completed KVM exits: kvm_exit to "
		"kvm_entry (kernel), kvm_userspace_exit to the next KVM_RUN (user).\n"
		"# TYPE vmexit_exit_duration_seconds histogram\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\\\"1\",pid=\"7\",kind=\"kernel\","
		"isa=\"vmx\",reason=\"EPT_VIOLATION\",le=\"2.56e-07\"} 1\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\\\"1\",pid=\"7\",kind=\"kernel\","
		"isa=\"vmx\",reason=\"EPT_VIOLATION\",le=\"1.024e-06\"} 2\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\\\"1\",pid=\"7\",kind=\"kernel\","
		"isa=\"vmx\",reason=\"EPT_VIOLATION\",le=\"+Inf\"} 3\n"
		"vmexit_exit_duration_seconds_count{guest=\"g\\\"1\",pid=\"7\",kind=\"kernel\","
		"isa=\"vmx\",reason=\"EPT_VIOLATION\"} 3\n"
		"vmexit_exit_duration_seconds_sum{guest=\"g\\\"1\",pid=\"7\",kind=\"kernel\","
		"isa=\"vmx\",reason=\"EPT_VIOLATION\"} 0.000002400\n"
		"# HELP vmexit_lost_exits_total ";
	static const char want_om[] =
		"# HELP vmexit_exits KVM exits seen, counted when they start.\n"
		"# TYPE vmexit_exits counter\n"
		"vmexit_exits_total{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\",isa=\"user\","
		"reason=\"IO\"} 2\n"
		"vmexit_exits_created{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\","
		"isa=\"user\",reason=\"IO\"} 1763884800.005\n"
		"vmexit_exits_total{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\",isa=\"user\","
		"reason=\"IO\"} 0\n"
		"vmexit_exits_created{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\","
		"isa=\"user\",reason=\"IO\"} 1763884800.005\n"
		"# HELP vmexit_exit_duration_seconds Time in completed KVM exits: kvm_exit to "
		"kvm_entry (kernel), kvm_userspace_exit to the next KVM_RUN (user).\n"
		"# TYPE vmexit_exit_duration_seconds histogram\n"
		"# UNIT vmexit_exit_duration_seconds seconds\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\","
		"isa=\"user\",reason=\"IO\",le=\"2.56e-07\"} 1\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\","
		"isa=\"user\",reason=\"IO\",le=\"1.024e-06\"} 1\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\","
		"isa=\"user\",reason=\"IO\",le=\"+Inf\"} 2\n"
		"vmexit_exit_duration_seconds_count{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\","
		"isa=\"user\",reason=\"IO\"} 2\n"
		"vmexit_exit_duration_seconds_sum{guest=\"g\",pid=\"7\",vcpu=\"0\",kind=\"user\","
		"isa=\"user\",reason=\"IO\"} 12.000000002\n"
		"vmexit_exit_duration_seconds_created{guest=\"g\",pid=\"7\",vcpu=\"0\","
		"kind=\"user\",isa=\"user\",reason=\"IO\"} 1763884800.005\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\","
		"isa=\"user\",reason=\"IO\",le=\"2.56e-07\"} 0\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\","
		"isa=\"user\",reason=\"IO\",le=\"1.024e-06\"} 0\n"
		"vmexit_exit_duration_seconds_bucket{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\","
		"isa=\"user\",reason=\"IO\",le=\"+Inf\"} 0\n"
		"vmexit_exit_duration_seconds_count{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\","
		"isa=\"user\",reason=\"IO\"} 0\n"
		"vmexit_exit_duration_seconds_sum{guest=\"g\",pid=\"7\",vcpu=\"1\",kind=\"user\","
		"isa=\"user\",reason=\"IO\"} 0.000000000\n"
		"vmexit_exit_duration_seconds_created{guest=\"g\",pid=\"7\",vcpu=\"1\","
		"kind=\"user\",isa=\"user\",reason=\"IO\"} 1763884800.005\n"
		"# HELP vmexit_lost_exits ";
	struct expo_buckets bk;
	struct row r[2] = {};
	struct expo_series s[2];
	struct expo_input in = {};
	struct expo_buf b = {};
	struct taken_counts tc;
	char err[256];

	CHECK(!expo_buckets_parse("256ns,1.024us", &bk, err, sizeof(err)));
	r[0].key = (struct row_key){ .tgid = 7, .vcpu = -1, .isa = VMEXIT_ISA_VMX, .reason = 48 };
	add_exit(&r[0], 100);
	add_exit(&r[0], 300);
	add_exit(&r[0], 2000);
	r[0].count++;		/* in flight */
	s[0] = (struct expo_series){ "g\"1", 0 };
	in.series = s;
	in.nr_series = 1;
	in.buckets = &bk;
	in.version = "v";
	in.kernel = "k";
	take_counts(&in, r, 1, &tc);
	CHECK(!expo_render(&in, EXPO_TEXT, &b));
	CHECK(b.len > sizeof(want_text) && !memcmp(b.p, want_text, sizeof(want_text) - 1));
	if (b.len > sizeof(want_text) && memcmp(b.p, want_text, sizeof(want_text) - 1))
		fprintf(stderr, "got:\n%.*s\n", (int)(sizeof(want_text) + 40), b.p);

	/* Two vCPUs' user IO exits (2 ns, under the first bound, and 12 s), one vCPU without
	 * any: zeros, not left out. */
	memset(r, 0, sizeof(r));
	r[0].key = (struct row_key){ .tgid = 7, .vcpu = 0, .isa = VMEXIT_ISA_USER, .reason = 2 };
	r[1].key = (struct row_key){ .tgid = 7, .vcpu = 1, .isa = VMEXIT_ISA_USER, .reason = 2 };
	add_exit(&r[0], 2);
	add_exit(&r[0], 12000000000ULL);
	s[0] = (struct expo_series){ "g", 1763884800005ULL };
	s[1] = (struct expo_series){ "g", 1763884800005ULL };
	in.nr_series = 2;
	in.by_vcpu = true;
	take_counts(&in, r, 2, &tc);
	b.len = 0;
	CHECK(!expo_render(&in, EXPO_OPENMETRICS, &b));
	CHECK(b.len > sizeof(want_om) && !memcmp(b.p, want_om, sizeof(want_om) - 1));
	if (b.len > sizeof(want_om) && memcmp(b.p, want_om, sizeof(want_om) - 1))
		fprintf(stderr, "got:\n%.*s\n", (int)(sizeof(want_om) + 40), b.p);

	/* --split: each series' time in the three states, in both formats. */
	r[1].oncpu_ns = 5;
	r[1].blocked_ns = 6000000000ULL;
	r[1].runq_ns = 7;
	in.split = true;
	take_counts(&in, r, 2, &tc);
	for (int fmt = EXPO_TEXT; fmt <= EXPO_OPENMETRICS; fmt++) {
		b.len = 0;
		CHECK(!expo_render(&in, fmt, &b));
		CHECK(memmem(b.p, b.len, "state=\"blocked\"} 6.000000000", 28));
		CHECK(memmem(b.p, b.len, "state=\"runq\"} 0.000000007", 25));
		CHECK(families_grouped(&b));
	}
	expo_buf_free(&b);
}

/* serve --keys: a device's span (key_groups.h) in its key label, a key alone as before. */
static void test_key_labels(void)
{
	struct expo_key k[2] = {
		{ .guest = "vga", .key = { .tgid = 7, .vcpu = -1, .isa = VMEXIT_ISA_USER,
					  .reason = 6, .key = { .key = 0xa0000, .kind = KEY_MMIO,
								.dir = KEY_DIR_WRITE },
					  .key_end = 0xbffff },
		  .name = "vga-lowmem", .count = 376, .total_ns = 752000 },
		{ .guest = "vga", .key = { .tgid = 7, .vcpu = -1, .isa = VMEXIT_ISA_USER,
					  .reason = 2, .key = { .key = 0x402, .kind = KEY_PORT,
								.dir = KEY_DIR_OUT } },
		  .name = "unmapped", .count = 5 },
	};
	struct expo_input in = { .keys_on = true, .keys = k, .nr_keys = 2, .version = "v",
				 .kernel = "k" };
	struct expo_buckets bk;
	struct expo_buf b = {};
	char err[256];

	CHECK(!expo_buckets_parse("256ns,1.024us", &bk, err, sizeof(err)));
	in.buckets = &bk;
	CHECK(!expo_render(&in, EXPO_TEXT, &b));
	CHECK(b.p && memmem(b.p, b.len, "key=\"0xa0000-0xbffff\",key_dir=\"write\","
			    "key_name=\"vga-lowmem\"} 376\n", 65));
	CHECK(b.p && memmem(b.p, b.len, "key=\"0x402\",key_dir=\"out\",key_name=\"unmapped\"} 5\n",
			    49));
	if (b.p && !memmem(b.p, b.len, "0xa0000-0xbffff", 15))
		fprintf(stderr, "got:\n%.*s\n", (int)b.len, b.p);
	expo_buf_free(&b);
}

int main(int argc, char **argv)
{
	struct expo_buckets bk;
	struct row rows[3] = {};
	struct expo_series series[3];
	struct taken_counts tc;
	/* In flight for 2.5 s at now: 1000 ns on CPU, then asleep, then 1000 ns runnable. */
	const __u64 now = 100 * 1000000000ULL;
	struct inflight_exit stuck[] = {
		{ .tgid = 42, .tid = 45, .proc_start = 7, .vcpu = 1, .isa = VMEXIT_ISA_USER,
		  .reason = 2 /* KVM_EXIT_IO */, .start_ns = now - 2500000000ULL,
		  .blocked_ns = 2499998000ULL, .runq_ns = 1000 },
		/* Below --stuck (1 s), and one its thread exited in: neither is exported. */
		{ .tgid = 42, .tid = 46, .proc_start = 7, .vcpu = 2, .isa = VMEXIT_ISA_USER,
		  .reason = 2, .start_ns = now - 999999999ULL },
		{ .tgid = 42, .tid = 47, .proc_start = 7, .vcpu = 3, .isa = VMEXIT_ISA_USER,
		  .reason = 2, .start_ns = now - 5000000000ULL, .end_ns = now - 1 },
	};
	struct name_cache names = { 0 };
	struct expo_prog prog = { .name = "on_kvm_exit", .run_ns = 1500, .run_cnt = 7 };
	struct process_stats self = { .cpu_ns = 1250000000ULL, .resident_bytes = 12 << 20,
				      .virtual_bytes = 160 << 20, .open_fds = 38, .max_fds = 1024,
				      .start_ms = 1763884798500ULL };
	struct expo_input in = {};
	struct expo_buf text = {}, om = {};

	test_key_labels();
	test_buckets();
	test_negotiate();
	test_whole_exit_families();

	expo_buckets_default(&bk);
	/* A guest name with every character the formats escape, and a byte that is not UTF-8. */
	rows[0].key = (struct row_key){ .tgid = 42, .vcpu = -1, .isa = VMEXIT_ISA_USER,
					.reason = 2 };
	add_exit(&rows[0], 100);		/* below 256 ns */
	add_exit(&rows[0], 300);		/* 256..512 */
	add_exit(&rows[0], 1000);		/* 512..1024 */
	add_exit(&rows[0], 3000000000ULL);	/* above 2.15 s */
	/* --split: 3000001400 ns = 1400 on CPU + 2999999000 blocked + 1000 runq. */
	rows[0].oncpu_ns = 1400;
	rows[0].blocked_ns = 2999999000ULL;
	rows[0].runq_ns = 1000;
	rows[0].count++;			/* one exit still in flight: seen, not completed */
	rows[1].key = (struct row_key){ .tgid = 43, .vcpu = -1, .isa = VMEXIT_ISA_SVM,
					.reason = 0x400 };
	add_exit(&rows[1], 256);		/* exactly on an edge: counts above it */
	rows[2].key = (struct row_key){ .tgid = 44, .vcpu = -1, .isa = VMEXIT_ISA_VMX,
					.reason = 48 };
	series[0] = (struct expo_series){ "web\"01\\a\nb\xff", 1763884800123ULL };
	series[1] = (struct expo_series){ "db", 1763884801000ULL };
	series[2] = (struct expo_series){ "idle", 1763884802005ULL };
	in.series = series;
	in.nr_series = 3;
	in.buckets = &bk;
	take_counts(&in, rows, 3, &tc);
	CHECK(!name_cache_set_at(&names, 42, 7, "web\"01"));
	in.export_stuck = true;
	in.inflight = stuck;
	in.nr_inflight = 3;
	in.now_ns = now;
	in.stuck_ns = 1000000000ULL;
	in.names = &names;
	in.lost[LOST_CELLS_FULL] = 5;
	in.lost[LOST_KEYS_FULL] = 9;
	in.progs = &prog;
	in.nr_progs = 1;
	in.guests = 2;
	in.version = "0.1";
	in.kernel = "6.1.0-test";
	in.start_ms = 1763884799000ULL;
	in.split = true;
	in.sample_ns = 12345678;
	in.sample_ms = 1763884900250ULL;
	in.self = &self;
	CHECK(!expo_render(&in, EXPO_TEXT, &text));
	CHECK(!expo_render(&in, EXPO_OPENMETRICS, &om));

#define L0 "guest=\"web\\\"01\\\\a\\nb\xef\xbf\xbd\",pid=\"42\"," \
	   "kind=\"user\",isa=\"user\",reason=\"IO\""
#define L1 "guest=\"db\",pid=\"43\",kind=\"kernel\",isa=\"svm\",reason=\"npf\""
	CHECK(has_line(&text, "# TYPE vmexit_exits_total counter"));
	CHECK(has_line(&text, "vmexit_exits_total{" L0 "} 5"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L0 ",le=\"2.56e-07\"} 1"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L0 ",le=\"5.12e-07\"} 2"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L0 ",le=\"1.024e-06\"} 3"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L0 ",le=\"2.147483648\"} 3"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L0 ",le=\"+Inf\"} 4"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_count{" L0 "} 4"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_sum{" L0 "} 3.000001400"));
	/* 256 ns itself lies in the bucket that starts at 256 ns: le=2.56e-07 counts < 256 ns. */
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L1 ",le=\"2.56e-07\"} 0"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_bucket{" L1 ",le=\"5.12e-07\"} 1"));
	CHECK(has_line(&text, "vmexit_exit_duration_seconds_sum{" L1 "} 0.000000256"));
	CHECK(has_line(&text, "vmexit_exits_total{guest=\"idle\",pid=\"44\",kind=\"kernel\","
			      "isa=\"vmx\",reason=\"EPT_VIOLATION\"} 0"));
	CHECK(has_line(&text, "vmexit_exits_in_flight{guest=\"web\\\"01\",pid=\"42\",vcpu=\"1\","
			      "kind=\"user\",reason=\"IO\"} 1"));
	CHECK(has_line(&text, "vmexit_exit_in_flight_seconds{guest=\"web\\\"01\",pid=\"42\","
			      "vcpu=\"1\",kind=\"user\",reason=\"IO\"} 2.500000000"));
	/* --split: the stuck exit so far, asleep (a VMM blocked in its handler). */
	CHECK(has_line(&text, "# TYPE vmexit_exit_in_flight_state_seconds gauge"));
	CHECK(has_line(&text, "vmexit_exit_in_flight_state_seconds{guest=\"web\\\"01\",pid=\"42\","
			      "vcpu=\"1\",kind=\"user\",reason=\"IO\",state=\"blocked\"} 2.499998000"));
	CHECK(has_line(&text, "vmexit_exit_in_flight_state_seconds{guest=\"web\\\"01\",pid=\"42\","
			      "vcpu=\"1\",kind=\"user\",reason=\"IO\",state=\"runq\"} 0.000001000"));
	CHECK(has_line(&text, "vmexit_exit_in_flight_state_seconds{guest=\"web\\\"01\",pid=\"42\","
			      "vcpu=\"1\",kind=\"user\",reason=\"IO\",state=\"oncpu\"} 0.000001000"));
	/* Younger than --stuck, or over with its thread: not stuck. */
	CHECK(!memmem(text.p, text.len, "vcpu=\"2\"", 8));
	CHECK(!memmem(text.p, text.len, "vcpu=\"3\"", 8));
	CHECK(has_line(&text, "# TYPE vmexit_exit_state_seconds_total counter"));
	CHECK(has_line(&text, "vmexit_exit_state_seconds_total{" L0 ",state=\"oncpu\"} "
			      "0.000001400"));
	CHECK(has_line(&text, "vmexit_exit_state_seconds_total{" L0 ",state=\"blocked\"} "
			      "2.999999000"));
	CHECK(has_line(&text, "vmexit_exit_state_seconds_total{" L0 ",state=\"runq\"} "
			      "0.000001000"));
	CHECK(has_line(&text, "vmexit_exit_state_seconds_total{" L1 ",state=\"oncpu\"} "
			      "0.000000000"));
	CHECK(has_line(&text, "vmexit_lost_exits_total{cause=\"cells_full\"} 5"));
	CHECK(has_line(&text, "vmexit_lost_exits_total{cause=\"ringbuf_full\"} 0"));
	/* A key not kept loses no exit: its own family, never summed into lost exits. */
	CHECK(has_line(&text, "vmexit_lost_details_total{cause=\"keys_full\"} 9"));
	CHECK(has_line(&text, "vmexit_lost_details_total{cause=\"stacks_full\"} 0"));
	CHECK(!memmem(text.p, text.len, "exits_total{cause=\"keys_full", 28));
	CHECK(!memmem(text.p, text.len, "details_total{cause=\"cells_full", 31));
	CHECK(has_line(&text, "vmexit_bpf_run_seconds_total{program=\"on_kvm_exit\"} "
			      "0.000001500"));
	CHECK(has_line(&text, "vmexit_bpf_runs_total{program=\"on_kvm_exit\"} 7"));
	CHECK(has_line(&text, "vmexit_guests 2"));
	CHECK(has_line(&text, "# TYPE vmexit_build_info gauge"));
	CHECK(has_line(&text, "vmexit_build_info{version=\"0.1\",kernel=\"6.1.0-test\"} 1"));
	/* The exporter's own: its sample, and process_* as client libraries name them. */
	CHECK(has_line(&text, "# TYPE vmexit_sample_duration_seconds gauge"));
	CHECK(has_line(&text, "vmexit_sample_duration_seconds 0.012345678"));
	CHECK(has_line(&text, "vmexit_last_sample_timestamp_seconds 1763884900.250"));
	CHECK(has_line(&text, "# TYPE process_cpu_seconds_total counter"));
	CHECK(has_line(&text, "process_cpu_seconds_total 1.250000000"));
	CHECK(has_line(&text, "process_resident_memory_bytes 12582912"));
	CHECK(has_line(&text, "process_virtual_memory_bytes 167772160"));
	CHECK(has_line(&text, "process_open_fds 38"));
	CHECK(has_line(&text, "process_max_fds 1024"));
	CHECK(has_line(&text, "process_start_time_seconds 1763884798.500"));
	CHECK(!memmem(text.p, text.len, "_created", 8));
	CHECK(!memmem(text.p, text.len, "# EOF", 5));
	CHECK(!memmem(text.p, text.len, "# UNIT", 6));

	CHECK(has_line(&om, "# TYPE vmexit_exits counter"));
	CHECK(has_line(&om, "vmexit_exits_total{" L0 "} 5"));
	CHECK(has_line(&om, "vmexit_exits_created{" L0 "} 1763884800.123"));
	CHECK(has_line(&om, "# UNIT vmexit_exit_duration_seconds seconds"));
	CHECK(has_line(&om, "vmexit_exit_duration_seconds_created{" L1 "} 1763884801.000"));
	CHECK(has_line(&om, "vmexit_lost_exits_created{cause=\"cells_full\"} 1763884799.000"));
	CHECK(has_line(&om, "# UNIT vmexit_exit_state_seconds seconds"));
	CHECK(has_line(&om, "vmexit_exit_state_seconds_created{" L1 ",state=\"runq\"} "
			    "1763884801.000"));
	CHECK(has_line(&om, "# TYPE process_cpu_seconds counter"));
	CHECK(has_line(&om, "# UNIT process_cpu_seconds seconds"));
	CHECK(has_line(&om, "process_cpu_seconds_total 1.250000000"));
	CHECK(has_line(&om, "process_cpu_seconds_created 1763884798.500"));
	CHECK(has_line(&om, "# UNIT process_resident_memory_bytes bytes"));
	CHECK(has_line(&om, "# TYPE vmexit_build_info gauge"));
	CHECK(has_line(&om, "vmexit_build_info{version=\"0.1\",kernel=\"6.1.0-test\"} 1"));
	CHECK(om.len > 6 && !memcmp(om.p + om.len - 6, "# EOF\n", 6));

	/* No in-flight data, no --split, /proc unread: the families are left out, not exported
	 * empty. */
	in.export_stuck = false;
	in.split = false;
	in.self = NULL;
	expo_buf_free(&text);
	CHECK(!expo_render(&in, EXPO_TEXT, &text));
	CHECK(!memmem(text.p, text.len, "in_flight", 9));
	CHECK(!memmem(text.p, text.len, "state_seconds", 13));
	CHECK(!memmem(text.p, text.len, "process_", 8));
	in.self = &self;
	/* No BPF session (--source kvm): no hooks metric. */
	CHECK(!memmem(text.p, text.len, "exit_hooks", 10));

	/* The kvm_exit pair in use, and the path it makes: a raw tracepoint is the fast one. */
	{
		struct hooks_info fast = { .kvm_exit = "tp_btf/kvm_exit",
					   .kvm_entry = "tp_btf/kvm_entry" };
		struct hooks_info classic = { .kvm_exit = "kvm:kvm_exit",
					      .kvm_entry = "kvm:kvm_entry" };

		in.hooks = &fast;
		expo_buf_free(&text);
		CHECK(!expo_render(&in, EXPO_TEXT, &text));
		CHECK(has_line(&text, "# TYPE vmexit_exit_hooks_info gauge"));
		CHECK(has_line(&text, "vmexit_exit_hooks_info{path=\"fast\",kvm_exit=\"tp_btf/kvm_exit\","
				      "kvm_entry=\"tp_btf/kvm_entry\"} 1"));
		in.hooks = &classic;
		expo_buf_free(&text);
		CHECK(!expo_render(&in, EXPO_TEXT, &text));
		CHECK(has_line(&text, "vmexit_exit_hooks_info{path=\"classic\",kvm_exit=\"kvm:kvm_exit\","
				      "kvm_entry=\"kvm:kvm_entry\"} 1"));
		in.hooks = NULL;
	}

	if (argc > 1) {
		char path[4096];
		FILE *f;

		in.export_stuck = true;
		in.split = true;
		expo_buf_free(&text);
		CHECK(!expo_render(&in, EXPO_TEXT, &text));
		snprintf(path, sizeof(path), "%s/text.prom", argv[1]);
		f = fopen(path, "w");
		CHECK(f && fwrite(text.p, 1, text.len, f) == text.len && !fclose(f));
		snprintf(path, sizeof(path), "%s/openmetrics.prom", argv[1]);
		f = fopen(path, "w");
		CHECK(f && fwrite(om.p, 1, om.len, f) == om.len && !fclose(f));
	}
	expo_buf_free(&text);
	expo_buf_free(&om);
	name_cache_free(&names);
	CHECK_DONE("test_prom_exposition");
}
