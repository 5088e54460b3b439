// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf exposition. The counter and gauge families are translated from the text format's
 * rendering of the same input, so each of them, its labels and values are defined once (in
 * prom_exposition.c) and the two formats cannot drift apart. The histograms are encoded here
 * from the counts (a histogram is one message, not lines): classic from the cumulative bound
 * counts, native from each series' merged kernel buckets; their labels are the text format's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "native_hist.h"
#include "prom_protobuf.h"
#include "proto_enc.h"
#include "wake_exposition.h"

/* io.prometheus.client (client_model's metrics.proto) field numbers. */
enum { MF_NAME = 1, MF_HELP = 2, MF_TYPE = 3, MF_METRIC = 4 };
enum { MT_COUNTER = 0, MT_GAUGE = 1, MT_HISTOGRAM = 4 };
enum { M_LABEL = 1, M_GAUGE = 2, M_COUNTER = 3, M_HISTOGRAM = 7 };
enum { LP_NAME = 1, LP_VALUE = 2 };
enum { VALUE = 1 };	/* Gauge.value, Counter.value */
enum {
	H_COUNT = 1, H_SUM = 2, H_BUCKET = 3, H_SCHEMA = 5, H_ZERO_THRESHOLD = 6,
	H_ZERO_COUNT = 7, H_POSITIVE_SPAN = 12, H_POSITIVE_DELTA = 13,
};
enum { B_CUMULATIVE = 1, B_UPPER = 2 };
enum { SPAN_OFFSET = 1, SPAN_LENGTH = 2 };

/* One Metric message at most: an exit series' labels, 64 bounds or 39 native buckets. */
#define METRIC_MAX	(EXPO_LABELS_MAX * 2 + 4096)

static int append(struct expo_buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64 * 1024;
		char *q;

		while (cap < b->len + n)
			cap *= 2;
		q = realloc(b->p, cap);
		if (!q)
			return -ENOMEM;
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

static int append_varint(struct expo_buf *b, __u64 v)
{
	__u8 tmp[10];
	struct pb pb;

	pb_init(&pb, tmp, sizeof(tmp));
	pb_varint(&pb, v);
	return append(b, tmp, pb_len(&pb));
}

static __u64 zigzag(__s64 v)
{
	return ((__u64)v << 1) ^ (__u64)(v >> 63);
}

/* A family being built: its header, then its Metric messages as they come. */
struct family {
	struct expo_buf body;
	bool open;
	__u32 nr;		/* metrics in it */
};

static int family_start(struct family *f, const char *name, const char *help, int type)
{
	__u8 hdr[1024];
	struct pb pb;

	f->body.len = 0;
	f->open = true;
	f->nr = 0;
	pb_init(&pb, hdr, sizeof(hdr));
	pb_str(&pb, MF_NAME, name);
	pb_str(&pb, MF_HELP, help);
	pb_uint(&pb, MF_TYPE, type);
	return pb.full ? -EINVAL : append(&f->body, hdr, pb_len(&pb));
}

static int family_metric(struct family *f, const struct pb *m)
{
	__u8 tag = MF_METRIC << 3 | PB_LEN;

	if (m->full)
		return -EINVAL;
	f->nr++;
	if (append(&f->body, &tag, 1) || append_varint(&f->body, pb_len(m)))
		return -ENOMEM;
	return append(&f->body, m->buf, pb_len(m));
}

/* The family, length-delimited, onto out; none when it has no metric (as client_golang). */
static int family_end(struct family *f, struct expo_buf *out)
{
	if (!f->open)
		return 0;
	f->open = false;
	if (!f->nr)
		return 0;
	if (append_varint(out, f->body.len))
		return -ENOMEM;
	return append(out, f->body.p, f->body.len);
}

/* A label value or help text of the text format, unescaped (\\, \" and \n); the length. */
static size_t unescape(char *out, const char *s, size_t n)
{
	char *p = out;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			i++;
			*p++ = s[i] == 'n' ? '\n' : s[i];
		} else {
			*p++ = s[i];
		}
	}
	return p - out;
}

/* The labels of a sample line, `a="x",b="y"` (as the text renderer writes them), as LabelPair
 * fields of m. -EINVAL when malformed. */
static int put_labels(struct pb *m, const char *s, size_t n)
{
	char val[EXPO_LABELS_MAX];
	const char *end = s + n;

	while (s < end) {
		const char *eq = memchr(s, '=', end - s), *v, *q;
		__u8 *lp;

		if (!eq || eq + 1 >= end || eq[1] != '"')
			return -EINVAL;
		v = eq + 2;
		for (q = v; q < end && *q != '"'; q++)
			if (*q == '\\')
				q++;
		if (q >= end || (size_t)(q - v) > sizeof(val))
			return -EINVAL;
		lp = pb_open(m, M_LABEL);
		pb_bytes(m, LP_NAME, s, eq - s);
		pb_bytes(m, LP_VALUE, val, unescape(val, v, q - v));
		pb_close(m, lp);
		s = q + 1;
		if (s < end && *s == ',')
			s++;
	}
	return 0;
}

/* One sample line of a counter or gauge family into f. */
static int sample_line(const char *line, size_t n, int type, struct family *f)
{
	const char *sp = memrchr(line, ' ', n), *lb = memchr(line, '{', n), *labels = "";
	__u8 buf[METRIC_MAX], *val;
	size_t llen = 0;
	char num[64];
	struct pb m;

	if (!sp || (size_t)(line + n - sp - 1) >= sizeof(num))
		return -EINVAL;
	memcpy(num, sp + 1, line + n - sp - 1);
	num[line + n - sp - 1] = 0;
	if (lb && lb < sp) {
		labels = lb + 1;
		llen = sp - labels - 1;	/* up to the closing brace */
	}
	pb_init(&m, buf, sizeof(buf));
	if (put_labels(&m, labels, llen))
		return -EINVAL;
	val = pb_open(&m, type == MT_COUNTER ? M_COUNTER : M_GAUGE);
	pb_double(&m, VALUE, strtod(num, NULL));
	pb_close(&m, val);
	return family_metric(f, &m);
}

/* The text exposition text[0..len) (as prom_exposition.c writes it) as protobuf onto out. */
static int translate(const char *text, size_t len, struct expo_buf *out)
{
	struct family f = {};
	const char *p = text, *end = text + len;
	char name[256], help[1024];
	int type = MT_GAUGE, err = 0;

	while (!err && p < end) {
		const char *nl = memchr(p, '\n', end - p);
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n > 7 && !memcmp(p, "# HELP ", 7)) {
			const char *sp = memchr(p + 7, ' ', n - 7);
			size_t nn = sp ? (size_t)(sp - p - 7) : 0, hn;

			err = family_end(&f, out);
			if (!sp || nn >= sizeof(name) || n - 7 - nn - 1 >= sizeof(help)) {
				err = err ? err : -EINVAL;
				break;
			}
			memcpy(name, p + 7, nn);
			name[nn] = 0;
			hn = unescape(help, sp + 1, p + n - sp - 1);
			help[hn] = 0;
		} else if (n > 7 && !memcmp(p, "# TYPE ", 7)) {
			/* Counters and gauges: the histograms are encoded from the counts. */
			if (memmem(p, n, " histogram", 10))
				err = -EINVAL;
			type = memmem(p, n, " counter", 8) ? MT_COUNTER : MT_GAUGE;
			if (!err)
				err = family_start(&f, name, help, type);
		} else if (n && *p != '#') {
			err = f.open ? sample_line(p, n, type, &f) : -EINVAL;
		}
		p += n + 1;
	}
	if (!err)
		err = family_end(&f, out);
	expo_buf_free(&f.body);
	return err;
}

/* One histogram series: its labels as the text format writes them, and its counts. */
struct hist_series {
	const char *labels;
	size_t llen;
	const __u64 *le;	/* classic: the cumulative count of each bound, then all */
	const __u64 *native;	/* native: NATIVE_SLOTS counts */
	__u64 sum_ns;
};

/* A classic histogram (its bounds' cumulative counts) as a Metric of f. The values are the
 * doubles the text format's numbers read back as: le_format()'s shortest round trip of
 * ns / 1e9, and the sum's exact decimal. */
static int classic_metric(const struct expo_buckets *bk, const struct hist_series *hs,
			  struct family *f)
{
	__u8 buf[METRIC_MAX], *h, *b;
	struct pb m;

	pb_init(&m, buf, sizeof(buf));
	if (put_labels(&m, hs->labels, hs->llen))
		return -EINVAL;
	h = pb_open(&m, M_HISTOGRAM);
	pb_uint(&m, H_COUNT, hs->le[bk->nr]);	/* the +Inf bucket: sample_count, as in text */
	pb_double(&m, H_SUM, (double)hs->sum_ns / 1e9);
	for (__u32 j = 0; j < bk->nr; j++) {
		b = pb_open(&m, H_BUCKET);
		pb_uint(&m, B_CUMULATIVE, hs->le[j]);
		pb_double(&m, B_UPPER, (double)hist_bucket_low(bk->bucket[j]) / 1e9);
		pb_close(&m, b);
	}
	pb_close(&m, h);
	return family_metric(f, &m);
}

/* A native histogram (NATIVE_SLOTS counts, in nanoseconds) as a Metric of f. */
static int native_metric(const struct hist_series *hs, struct family *f)
{
	const __u64 *slot = hs->native;
	__u8 buf[METRIC_MAX], *h, *sp, *d;
	__u32 first = 0, last = 0;
	__u64 total = 0, prev = 0;
	struct pb m;

	pb_init(&m, buf, sizeof(buf));
	if (put_labels(&m, hs->labels, hs->llen))
		return -EINVAL;
	for (__u32 s = 0; s < NATIVE_SLOTS; s++) {
		total += slot[s];
		if (s && slot[s]) {
			first = first ? first : s;
			last = s;
		}
	}
	h = pb_open(&m, M_HISTOGRAM);
	pb_uint(&m, H_COUNT, total);
	pb_double(&m, H_SUM, (double)hs->sum_ns);
	pb_uint(&m, H_SCHEMA, zigzag(NATIVE_SCHEMA));
	pb_double(&m, H_ZERO_THRESHOLD, NATIVE_ZERO_THRESHOLD);
	pb_uint(&m, H_ZERO_COUNT, slot[0]);
	/*
	 * One span from the first bucket used to the last, empty ones between as deltas: a
	 * byte each, less than a span's four. None used: a no-op span, so that the histogram
	 * is native even to a parser that looks only at spans.
	 */
	sp = pb_open(&m, H_POSITIVE_SPAN);
	pb_uint(&m, SPAN_OFFSET, zigzag(first));
	pb_uint(&m, SPAN_LENGTH, first ? last - first + 1 : 0);
	pb_close(&m, sp);
	if (first) {
		d = pb_open(&m, H_POSITIVE_DELTA);	/* packed */
		for (__u32 s = first; s <= last; s++) {
			pb_varint(&m, zigzag((__s64)(slot[s] - prev)));
			prev = slot[s];
		}
		pb_close(&m, d);
	}
	pb_close(&m, h);
	return family_metric(f, &m);
}

static int render_histograms(const struct expo_input *in, bool native, struct expo_buf *out)
{
	char labels[EXPO_LABELS_MAX];
	struct family f = {};
	int err;

	if (native)
		err = family_start(&f, "vmexit_exit_duration_nanoseconds",
				   "Time in completed KVM exits, as a native histogram of schema 0 "
				   "in nanoseconds: the kernel's buckets merged exactly (a bucket "
				   "spans a factor of 2).", MT_HISTOGRAM);
	else
		err = family_start(&f, "vmexit_exit_duration_seconds", expo_duration_help,
				   MT_HISTOGRAM);
	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		const struct expo_counts *c = &in->counts[i];
		struct hist_series hs = { labels, expo_series_labels(in, i, labels), c->le,
					  c->native, c->total_ns };

		if (!native)
			err = classic_metric(in->buckets, &hs, &f);
		else
			err = c->native ? native_metric(&hs, &f) : -EINVAL;
	}
	if (!err)
		err = family_end(&f, out);
	expo_buf_free(&f.body);
	return err;
}

/* serve --wake: one histogram family of the delivery (halts false) or halt series. */
static int render_wake_family(const struct expo_input *in, bool halts, bool native,
			      struct expo_buf *out)
{
	const struct wake_series *ws = in->wake;
	__u32 nr = halts ? ws->nr_halt : ws->nr_wake;
	char labels[EXPO_LABELS_MAX], help[512];
	__u64 le[EXPO_MAX_BOUNDS + 1], slots[NATIVE_SLOTS];
	struct family f = {};
	int err;

	snprintf(help, sizeof(help), "%s%s", halts ? wake_halt_help : wake_delivery_help,
		 native ? " A native histogram of schema 0 in nanoseconds (native_hist.h)." : "");
	err = family_start(&f, native ? (halts ? WAKE_HALT_NATIVE : WAKE_DELIVERY_NATIVE) :
			   (halts ? WAKE_HALT_HIST : WAKE_DELIVERY_HIST), help, MT_HISTOGRAM);
	for (__u32 i = 0; !err && i < nr; i++) {
		const __u64 *hist = halts ? ws->halt[i].c.hist : ws->wake[i].c.hist;
		struct hist_series hs = {
			.labels = labels,
			.llen = halts ? halt_series_labels(ws, i, labels) :
					wake_series_labels(ws, i, labels),
			.le = le, .native = slots,
			.sum_ns = halts ? ws->halt[i].c.wake_sum_ns : ws->wake[i].c.sum_ns,
		};

		if (native) {
			native_hist_of(hist, slots);
			err = native_metric(&hs, &f);
		} else {
			expo_le_of_hist(hist, in->buckets, le);
			err = classic_metric(in->buckets, &hs, &f);
		}
	}
	if (!err)
		err = family_end(&f, out);
	expo_buf_free(&f.body);
	return err;
}

static int render_wake_histograms(const struct expo_input *in, enum expo_hists hists,
				  struct expo_buf *out)
{
	int err = 0;

	for (int halts = 0; !err && halts < 2; halts++) {
		if (hists != EXPO_HISTS_NATIVE)
			err = render_wake_family(in, halts, false, out);
		if (!err && hists != EXPO_HISTS_CLASSIC)
			err = render_wake_family(in, halts, true, out);
	}
	return err;
}

int expo_render_protobuf(const struct expo_input *in, enum expo_hists hists, struct expo_buf *out)
{
	struct expo_input t = *in;
	struct expo_buf text = {};
	int err;

	t.no_classic = true;
	err = expo_render(&t, EXPO_TEXT, &text);
	if (!err)
		err = translate(text.p, text.len, out);
	expo_buf_free(&text);
	if (!err && hists != EXPO_HISTS_NATIVE)
		err = render_histograms(in, false, out);
	if (!err && hists != EXPO_HISTS_CLASSIC)
		err = render_histograms(in, true, out);
	if (!err && in->wake)
		err = render_wake_histograms(in, hists, out);
	return err;
}
