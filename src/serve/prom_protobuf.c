// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf exposition. Every family but the native histogram is translated from the text
 * format's rendering of the same input, so each family, label and value is defined once (in
 * prom_exposition.c) and the two formats cannot drift apart. The native histograms have no text
 * form: they are encoded here, from each series' merged kernel buckets.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "native_hist.h"
#include "prom_protobuf.h"
#include "proto_enc.h"

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

/* One Metric message at most: an exit series' labels, 65 buckets or 39 native ones. */
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

/*
 * The labels of a sample line, `a="x",b="y"` (as the text renderer writes them), as LabelPair
 * fields of m; the le label, when there is one, goes to *le instead. -EINVAL when malformed.
 */
static int put_labels(struct pb *m, const char *s, size_t n, const char **le, size_t *le_len)
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
		if (le && eq - s == 2 && !memcmp(s, "le", 2)) {
			*le = v;
			*le_len = q - v;
		} else {
			lp = pb_open(m, M_LABEL);
			pb_bytes(m, LP_NAME, s, eq - s);
			pb_bytes(m, LP_VALUE, val, unescape(val, v, q - v));
			pb_close(m, lp);
		}
		s = q + 1;
		if (s < end && *s == ',')
			s++;
	}
	return 0;
}

/* A classic histogram series being gathered from its _bucket, _count and _sum lines. */
struct classic {
	bool on;
	char labels[EXPO_LABELS_MAX];	/* without le */
	size_t llen;
	__u32 nr;
	double upper[EXPO_MAX_BOUNDS];
	__u64 cum[EXPO_MAX_BOUNDS];
	__u64 count;
	double sum;
};

static int classic_flush(struct classic *c, struct family *f)
{
	__u8 buf[METRIC_MAX], *h, *bk;
	struct pb m;

	if (!c->on)
		return 0;
	c->on = false;
	pb_init(&m, buf, sizeof(buf));
	if (put_labels(&m, c->labels, c->llen, NULL, NULL))
		return -EINVAL;
	h = pb_open(&m, M_HISTOGRAM);
	pb_uint(&m, H_COUNT, c->count);
	pb_double(&m, H_SUM, c->sum);
	/* +Inf is not a bucket of the protobuf format: it is sample_count. */
	for (__u32 j = 0; j < c->nr; j++) {
		bk = pb_open(&m, H_BUCKET);
		pb_uint(&m, B_CUMULATIVE, c->cum[j]);
		pb_double(&m, B_UPPER, c->upper[j]);
		pb_close(&m, bk);
	}
	pb_close(&m, h);
	return family_metric(f, &m);
}

static bool has_suffix(const char *s, size_t n, const char *suffix, size_t *base)
{
	size_t k = strlen(suffix);

	if (n < k || memcmp(s + n - k, suffix, k))
		return false;
	*base = n - k;
	return true;
}

/* One sample line of family type into f (classic histograms gathered in c). */
static int sample_line(const char *line, size_t n, int type, struct family *f, struct classic *c)
{
	const char *sp = memrchr(line, ' ', n), *lb = memchr(line, '{', n), *labels = "";
	size_t name_len, llen = 0, base;
	char num[64];
	double v;

	if (!sp || (size_t)(line + n - sp - 1) >= sizeof(num))
		return -EINVAL;
	memcpy(num, sp + 1, line + n - sp - 1);
	num[line + n - sp - 1] = 0;
	v = strtod(num, NULL);
	if (lb && lb < sp) {
		name_len = lb - line;
		labels = lb + 1;
		llen = sp - labels - 1;	/* up to the closing brace */
	} else {
		name_len = sp - line;
	}
	if (type != MT_HISTOGRAM) {
		__u8 buf[METRIC_MAX], *val;
		struct pb m;

		pb_init(&m, buf, sizeof(buf));
		if (put_labels(&m, labels, llen, NULL, NULL))
			return -EINVAL;
		val = pb_open(&m, type == MT_COUNTER ? M_COUNTER : M_GAUGE);
		pb_double(&m, VALUE, v);
		pb_close(&m, val);
		return family_metric(f, &m);
	}
	if (has_suffix(line, name_len, "_bucket", &base)) {
		/* le is the last label: the series is what comes before it. */
		const char *le = llen >= 6 ? memmem(labels, llen, "le=\"", 4) : NULL;
		size_t slen;

		while (le && memmem(le + 1, labels + llen - le - 1, ",le=\"", 5))
			le = memmem(le + 1, labels + llen - le - 1, ",le=\"", 5) + 1;
		if (!le)
			return -EINVAL;
		slen = le > labels ? (size_t)(le - labels - 1) : 0;
		if (c->on && (slen != c->llen || memcmp(labels, c->labels, slen))) {
			int err = classic_flush(c, f);

			if (err)
				return err;
		}
		if (!c->on) {
			if (slen > sizeof(c->labels))
				return -EINVAL;
			memset(c, 0, sizeof(*c));
			c->on = true;
			memcpy(c->labels, labels, slen);
			c->llen = slen;
		}
		if (!strncmp(le + 4, "+Inf\"", 5))
			return 0;
		if (c->nr == EXPO_MAX_BOUNDS)
			return -EINVAL;
		c->upper[c->nr] = strtod(le + 4, NULL);
		c->cum[c->nr++] = (__u64)v;
		return 0;
	}
	if (!c->on || llen != c->llen || memcmp(labels, c->labels, llen))
		return -EINVAL;
	if (has_suffix(line, name_len, "_count", &base))
		c->count = (__u64)v;
	else if (has_suffix(line, name_len, "_sum", &base))
		c->sum = v;
	return 0;
}

/* The text exposition text[0..len) (as prom_exposition.c writes it) as protobuf onto out. */
static int translate(const char *text, size_t len, struct expo_buf *out)
{
	struct classic c = {};
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

			err = classic_flush(&c, &f);
			if (!err)
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
			type = memmem(p, n, " counter", 8) ? MT_COUNTER :
			       memmem(p, n, " histogram", 10) ? MT_HISTOGRAM : MT_GAUGE;
			err = family_start(&f, name, help, type);
		} else if (n && *p != '#') {
			err = f.open ? sample_line(p, n, type, &f, &c) : -EINVAL;
		}
		p += n + 1;
	}
	if (!err)
		err = classic_flush(&c, &f);
	if (!err)
		err = family_end(&f, out);
	expo_buf_free(&f.body);
	return err;
}

/* Series i's native histogram (NATIVE_SLOTS counts) as a Metric of f. */
static int native_metric(const struct expo_input *in, __u32 i, struct family *f)
{
	const __u64 *slot = in->counts[i].native;
	__u8 buf[METRIC_MAX], *h, *sp, *d;
	char labels[EXPO_LABELS_MAX];
	__u32 first = 0, last = 0;
	__u64 total = 0, prev = 0;
	struct pb m;

	pb_init(&m, buf, sizeof(buf));
	if (put_labels(&m, labels, expo_series_labels(in, i, labels), NULL, NULL))
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
	pb_double(&m, H_SUM, (double)in->counts[i].total_ns);
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

static int render_native(const struct expo_input *in, struct expo_buf *out)
{
	struct family f = {};
	int err;

	err = family_start(&f, "vmexit_exit_duration_nanoseconds",
			   "Time in completed KVM exits, as a native histogram of schema 0 in "
			   "nanoseconds: the kernel's buckets merged exactly (a bucket spans a "
			   "factor of 2).", MT_HISTOGRAM);
	for (__u32 i = 0; !err && i < in->nr_series; i++)
		err = in->counts[i].native ? native_metric(in, i, &f) : -EINVAL;
	if (!err)
		err = family_end(&f, out);
	expo_buf_free(&f.body);
	return err;
}

int expo_render_protobuf(const struct expo_input *in, enum expo_hists hists, struct expo_buf *out)
{
	struct expo_input t = *in;
	struct expo_buf text = {};
	int err;

	t.no_classic = hists == EXPO_HISTS_NATIVE;
	err = expo_render(&t, EXPO_TEXT, &text);
	if (!err)
		err = translate(text.p, text.len, out);
	expo_buf_free(&text);
	if (!err && hists != EXPO_HISTS_CLASSIC)
		err = render_native(in, out);
	return err;
}
