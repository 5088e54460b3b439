// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf exposition. The counter and gauge families are translated from the text format's
 * rendering of the same input, so each of them, its labels and values are defined once (in
 * prom_exposition.c) and the two formats cannot drift apart. The histograms are encoded here
 * from the counts (a histogram is one message, not lines): classic from the cumulative bound
 * counts, native from each series' merged kernel buckets; their labels are the text format's,
 * parsed once per series and kept across scrapes (pb_series_labels.h), and so are those of
 * vmexit_exits, the one counter family with a line per series, encoded here from the same
 * labels and counts. Each family is written straight into the output, its length filled in
 * at its end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "native_hist.h"
#include "pb_series_labels.h"
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

/* Room for n more bytes at the end of b. */
static int reserve(struct expo_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 64 * 1024;
	char *q;

	if (b->len + n <= b->cap)
		return 0;
	while (cap < b->len + n)
		cap *= 2;
	q = realloc(b->p, cap);
	if (!q)
		return -ENOMEM;
	b->p = q;
	b->cap = cap;
	return 0;
}

static __u64 zigzag(__s64 v)
{
	return ((__u64)v << 1) ^ (__u64)(v >> 63);
}

/* Room for a family's length ahead of it: 5 varint bytes hold 32 GB. */
#define FAMILY_LEN_BYTES	5

/*
 * A family being written straight into out: its length's room, its header, then its Metric
 * messages, each encoded in place; its length is filled in (and the family moved down onto
 * the bytes it does not need) when it ends.
 */
struct family {
	struct expo_buf *out;
	size_t at;		/* where its length goes in out */
	bool open;
	__u32 nr;		/* metrics in it */
};

static int family_start(struct family *f, struct expo_buf *out, const char *name,
			const char *help, int type)
{
	struct pb pb;

	f->out = out;
	f->at = out->len;
	f->open = true;
	f->nr = 0;
	if (reserve(out, FAMILY_LEN_BYTES + 1024 + 2 * 256))
		return -ENOMEM;
	pb_init(&pb, out->p + out->len + FAMILY_LEN_BYTES, 1024 + 2 * 256);
	pb_str(&pb, MF_NAME, name);
	pb_str(&pb, MF_HELP, help);
	pb_uint(&pb, MF_TYPE, type);
	if (pb.full)
		return -EINVAL;
	out->len += FAMILY_LEN_BYTES + pb_len(&pb);
	return 0;
}

/* A Metric of f begins: m writes it at the end of f's output, mark for metric_end(). */
static int metric_begin(struct family *f, struct pb *m, __u8 **mark)
{
	if (reserve(f->out, METRIC_MAX + 8))
		return -ENOMEM;
	pb_init(m, f->out->p + f->out->len, METRIC_MAX + 8);
	*mark = pb_open(m, MF_METRIC);
	return 0;
}

static int metric_end(struct family *f, struct pb *m, __u8 *mark)
{
	pb_close(m, mark);
	if (m->full)
		return -EINVAL;
	f->out->len += pb_len(m);
	f->nr++;
	return 0;
}

/* The family, length-delimited, in out; none when it has no metric (as client_golang). */
static int family_end(struct family *f)
{
	struct expo_buf *out = f->out;
	size_t body, n;
	__u8 len[10];
	struct pb pb;

	if (!f->open)
		return 0;
	f->open = false;
	if (!f->nr) {
		out->len = f->at;
		return 0;
	}
	body = out->len - f->at - FAMILY_LEN_BYTES;
	pb_init(&pb, len, sizeof(len));
	pb_varint(&pb, body);
	n = pb_len(&pb);
	if (n > FAMILY_LEN_BYTES)
		return -EINVAL;
	memmove(out->p + f->at + n, out->p + f->at + FAMILY_LEN_BYTES, body);
	memcpy(out->p + f->at, len, n);
	out->len = f->at + n + body;
	return 0;
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

int expo_pb_labels(struct pb *m, const char *s, size_t n)
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
	__u8 *mark, *val;
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
	if (metric_begin(f, &m, &mark))
		return -ENOMEM;
	if (expo_pb_labels(&m, labels, llen))
		return -EINVAL;
	val = pb_open(&m, type == MT_COUNTER ? M_COUNTER : M_GAUGE);
	pb_double(&m, VALUE, strtod(num, NULL));
	pb_close(&m, val);
	return metric_end(f, &m, mark);
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

			err = family_end(&f);
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
				err = family_start(&f, out, name, help, type);
		} else if (n && *p != '#') {
			err = f.open ? sample_line(p, n, type, &f) : -EINVAL;
		}
		p += n + 1;
	}
	if (!err)
		err = family_end(&f);
	return err;
}

/* One histogram series: its labels (encoded, or as the text format writes them), its counts. */
struct hist_series {
	const char *labels;
	size_t llen;
	bool encoded;		/* labels are LabelPair fields already (pb_series_labels.h) */
	const __u64 *le;	/* classic: the cumulative count of each bound, then all */
	const __u64 *native;	/* native: NATIVE_SLOTS counts */
	__u64 sum_ns;
};

static int put_series_labels(struct pb *m, const struct hist_series *hs)
{
	if (!hs->encoded)
		return expo_pb_labels(m, hs->labels, hs->llen);
	pb_raw(m, hs->labels, hs->llen);
	return 0;
}

/* A classic histogram (its bounds' cumulative counts) as a Metric of f. The values are the
 * doubles the text format's numbers read back as: le_format()'s shortest round trip of
 * ns / 1e9, and the sum's exact decimal. */
static int classic_metric(const struct expo_buckets *bk, const struct hist_series *hs,
			  struct family *f)
{
	__u8 *mark, *h, *b;
	struct pb m;

	if (metric_begin(f, &m, &mark))
		return -ENOMEM;
	if (put_series_labels(&m, hs))
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
	return metric_end(f, &m, mark);
}

/* A native histogram (NATIVE_SLOTS counts, in nanoseconds) as a Metric of f. */
static int native_metric(const struct hist_series *hs, struct family *f)
{
	const __u64 *slot = hs->native;
	__u8 *mark, *h, *sp, *d;
	__u32 first = 0, last = 0;
	__u64 total = 0, prev = 0;
	struct pb m;

	if (metric_begin(f, &m, &mark))
		return -ENOMEM;
	if (put_series_labels(&m, hs))
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
	return metric_end(f, &m, mark);
}

/*
 * vmexit_exits, as the text format's vmexit_exits_total translated (translate()) but from the
 * series' kept labels: the same name, help, labels and values (the count's decimal read back
 * is the double nearest the count, which the conversion gives).
 */
static int render_exits(const struct expo_input *in, const struct pb_series_labels *sl,
			struct expo_buf *out)
{
	struct family f = {};
	int err = family_start(&f, out, "vmexit_exits_total", expo_exits_help, MT_COUNTER);

	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		__u8 *mark, *val;
		const char *labels;
		size_t llen;
		struct pb m;

		if (metric_begin(&f, &m, &mark))
			return -ENOMEM;
		labels = pb_series_labels_at(sl, i, &llen);
		pb_raw(&m, labels, llen);
		val = pb_open(&m, M_COUNTER);
		pb_double(&m, VALUE, (double)in->counts[i].count);
		pb_close(&m, val);
		err = metric_end(&f, &m, mark);
	}
	if (!err)
		err = family_end(&f);
	return err;
}

static int render_histograms(const struct expo_input *in, bool native,
			     const struct pb_series_labels *sl, struct expo_buf *out)
{
	struct family f = {};
	int err;

	if (native)
		err = family_start(&f, out, "vmexit_exit_duration_nanoseconds",
				   "Time in completed KVM exits, as a native histogram of schema 0 "
				   "in nanoseconds: the kernel's buckets merged exactly (a bucket "
				   "spans a factor of 2).", MT_HISTOGRAM);
	else
		err = family_start(&f, out, "vmexit_exit_duration_seconds", expo_duration_help,
				   MT_HISTOGRAM);
	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		const struct expo_counts *c = &in->counts[i];
		struct hist_series hs = { .encoded = true, .le = c->le, .native = c->native,
					  .sum_ns = c->total_ns };

		hs.labels = pb_series_labels_at(sl, i, &hs.llen);
		if (!native)
			err = classic_metric(in->buckets, &hs, &f);
		else
			err = c->native ? native_metric(&hs, &f) : -EINVAL;
	}
	if (!err)
		err = family_end(&f);
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
	err = family_start(&f, out, native ? (halts ? WAKE_HALT_NATIVE : WAKE_DELIVERY_NATIVE) :
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
		err = family_end(&f);
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

int expo_render_protobuf_kept(const struct expo_input *in, enum expo_hists hists,
			      struct expo_pb_keep *keep, struct expo_buf *out)
{
	struct expo_input t = *in;
	int err;

	/* The exit series' families from their kept labels; the others translated. */
	t.no_classic = true;
	t.no_exits = true;
	keep->text.len = 0;
	err = pb_series_labels_make(&keep->labels, in);
	if (!err)
		err = render_exits(in, &keep->labels, out);
	if (!err)
		err = expo_render(&t, EXPO_TEXT, &keep->text);
	if (!err)
		err = translate(keep->text.p, keep->text.len, out);
	if (!err && hists != EXPO_HISTS_NATIVE)
		err = render_histograms(in, false, &keep->labels, out);
	if (!err && hists != EXPO_HISTS_CLASSIC)
		err = render_histograms(in, true, &keep->labels, out);
	if (!err && in->wake)
		err = render_wake_histograms(in, hists, out);
	return err;
}

void expo_pb_keep_free(struct expo_pb_keep *keep)
{
	expo_buf_free(&keep->text);
	pb_series_labels_free(&keep->labels);
}

int expo_render_protobuf(const struct expo_input *in, enum expo_hists hists, struct expo_buf *out)
{
	struct expo_pb_keep keep = {};
	int err = expo_render_protobuf_kept(in, hists, &keep, out);

	expo_pb_keep_free(&keep);
	return err;
}
