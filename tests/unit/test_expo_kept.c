// SPDX-License-Identifier: GPL-2.0
/*
 * serve's protobuf scrapes with what the renderer keeps between them (prom_protobuf.h:
 * expo_pb_keep, pb_series_labels.h): each scrape's bytes equal a fresh render of the same input
 * while series change their counts, a guest its name, series go (the rest move up), come, shrink
 * to one and to none, --by vcpu adds a label, and the first series' labels grow (the others'
 * kept bytes move). And vmexit_exits, encoded from the kept
 * labels rather than translated from the text format, says what the text format's lines say.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "pb_varint.h"
#include "native_hist.h"
#include "prom_protobuf.h"

#define MAX	8

struct scrape {
	struct expo_series s[MAX];
	struct expo_counts c[MAX];
	__u64 le[MAX][EXPO_MAX_BOUNDS + 1];
	__u64 nat[MAX][NATIVE_SLOTS];
};

/* Series i of guest g (pid 40 + g), reason r, with n exits spread by i. */
static void series(struct scrape *sc, __u32 i, const char *guest, __u32 g, __u32 r, __u64 n)
{
	sc->s[i] = (struct expo_series){ .guest = guest, .created_ms = 1000 };
	sc->c[i] = (struct expo_counts){
		.key = { .tgid = 40 + g, .start = 9, .vcpu = (__s32)(i % 2), .isa = VMEXIT_ISA_VMX,
			 .reason = r },
		.count = n, .total_ns = n * 777,
		.le = sc->le[i], .native = sc->nat[i],
	};
	memset(sc->le[i], 0, sizeof(sc->le[i]));
	memset(sc->nat[i], 0, sizeof(sc->nat[i]));
	for (__u32 j = 0; j <= 24; j++)
		sc->le[i][j] = j > i ? n : 0;
	sc->nat[i][9 + i] = n;
}

static void input(struct expo_input *in, const struct expo_buckets *bk, struct scrape *sc,
		  __u32 nr)
{
	*in = (struct expo_input){ .series = sc->s, .counts = sc->c, .nr_series = nr,
				   .buckets = bk, .version = "v", .kernel = "k" };
}

/* A kept render of in equals a fresh one, byte for byte. */
static void same_as_fresh(const struct expo_input *in, struct expo_pb_keep *keep,
			  enum expo_hists hists, const char *what)
{
	struct expo_buf kept = {}, fresh = {};

	CHECK(!expo_render_protobuf_kept(in, hists, keep, &kept));
	CHECK(!expo_render_protobuf(in, hists, &fresh));
	if (kept.len != fresh.len || memcmp(kept.p, fresh.p, kept.len)) {
		fprintf(stderr, "%s: kept render differs from a fresh one\n", what);
		check_failures++;
	}
	expo_buf_free(&kept);
	expo_buf_free(&fresh);
}

static void test_kept(const struct expo_buckets *bk)
{
	static struct scrape sc;
	struct expo_pb_keep keep = {};
	struct expo_input in;

	series(&sc, 0, "web", 0, 1, 5);
	series(&sc, 1, "web", 0, 30, 6);
	series(&sc, 2, "db\"1", 1, 1, 7);
	series(&sc, 3, "db\"1", 1, 48, 8);
	input(&in, bk, &sc, 4);
	same_as_fresh(&in, &keep, EXPO_HISTS_BOTH, "first");
	sc.c[0].count = 50;
	sc.nat[2][12] = 3;
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "counts moved");
	sc.s[2].guest = sc.s[3].guest = "db-renamed";
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "a guest renamed");
	/* Series 0 gone: the others one place up, each at a place another had. */
	memmove(&sc.s[0], &sc.s[1], 3 * sizeof(sc.s[0]));
	memmove(&sc.c[0], &sc.c[1], 3 * sizeof(sc.c[0]));
	input(&in, bk, &sc, 3);
	same_as_fresh(&in, &keep, EXPO_HISTS_CLASSIC, "a series gone");
	series(&sc, 3, "new", 2, 12, 1);
	series(&sc, 4, "new", 2, 10, 2);
	input(&in, bk, &sc, 5);
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "series come");
	in.by_vcpu = true;
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "--by vcpu");
	sc.c[4].key.vcpu = 3;
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "a vCPU moved");
	in.nr_series = 1;
	same_as_fresh(&in, &keep, EXPO_HISTS_BOTH, "one series");
	in.nr_series = 0;
	same_as_fresh(&in, &keep, EXPO_HISTS_BOTH, "none");
	in.nr_series = 5;
	in.by_vcpu = false;
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "five again");
	/* The first series' labels longer: the others' kept bytes move along. */
	sc.s[0].guest = "db-renamed-once-more";
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "the first renamed");
	same_as_fresh(&in, &keep, EXPO_HISTS_NATIVE, "nothing changed");
	expo_pb_keep_free(&keep);
}

/* A label value as the text format escapes it. */
static char *escape(char *o, const __u8 *v, __u64 n)
{
	for (__u64 i = 0; i < n; i++) {
		if (v[i] == '\\' || v[i] == '"')
			*o++ = '\\';
		if (v[i] == '\n') {
			*o++ = '\\';
			*o++ = 'n';
			continue;
		}
		*o++ = v[i];
	}
	return o;
}

/*
 * One Metric of a counter family as the text format's line: name{a="x",...} value, its labels
 * escaped back, its value printed as an integer (exits are counted, whole).
 */
static void metric_line(const __u8 *p, const __u8 *end, const char *name, char *line)
{
	char *o = line + sprintf(line, "%s{", name);
	double value = -1;
	bool first = true;

	while (p < end) {
		__u64 tag = varint(&p, end), n = varint(&p, end);
		const __u8 *q = p, *qend = p + n;

		if (tag == (1 << 3 | 2)) {		/* LabelPair */
			o += sprintf(o, "%s", first ? "" : ",");
			first = false;
			while (q < qend) {
				__u64 t = varint(&q, qend), l = varint(&q, qend);

				if (t == (1 << 3 | 2)) {
					memcpy(o, q, l);
					o += l;
					*o++ = '=';
				} else {
					*o++ = '"';
					o = escape(o, q, l);
					*o++ = '"';
				}
				q += l;
			}
		} else if (tag == (3 << 3 | 2)) {	/* Counter { value } */
			if (n == 9 && q[0] == (1 << 3 | 1))
				memcpy(&value, q + 1, 8);
		}
		p += n;
	}
	sprintf(o, "} %.0f", value);
}

/* vmexit_exits_total's Metrics, as lines, against the text format's lines for the same input. */
static void test_exits_family(const struct expo_buckets *bk)
{
	static struct scrape sc;
	struct expo_input in;
	struct expo_buf pb = {}, text = {};
	char line[2048];
	int found = 0;

	series(&sc, 0, "a\\b\"c", 0, 1, 12345678901ULL);
	series(&sc, 1, "x", 1, 48, 0);
	series(&sc, 2, "x", 1, 30, (1ULL << 53) + 2);
	input(&in, bk, &sc, 3);
	CHECK(!expo_render_protobuf(&in, EXPO_HISTS_NATIVE, &pb));
	CHECK(!expo_render(&in, EXPO_TEXT, &text));
	CHECK(text.p && (text.p[text.len - 1] = 0, true));
	for (const __u8 *p = (const __u8 *)pb.p, *end = p + pb.len; p < end;) {
		__u64 n = varint(&p, end);
		const __u8 *q = p, *fend = p + n;
		bool exits = false;

		while (q < fend) {
			__u64 tag = varint(&q, fend), l = varint(&q, fend);

			if (tag == (1 << 3 | 2))
				exits = l == 18 && !memcmp(q, "vmexit_exits_total", 18);
			if (tag == (4 << 3 | 2) && exits) {
				metric_line(q, q + l, "vmexit_exits_total", line);
				if (!strstr(text.p, line))
					fprintf(stderr, "not in the text format: %s\n", line);
				CHECK(strstr(text.p, line) != NULL);
				found++;
			}
			q += l;
		}
		p += n;
	}
	CHECK_EQ_U64(found, 3);
	expo_buf_free(&pb);
	expo_buf_free(&text);
}

int main(void)
{
	struct expo_buckets bk;

	expo_buckets_default(&bk);
	test_kept(&bk);
	test_exits_family(&bk);
	CHECK_DONE("expo_kept");
}
