/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a protobuf scrape's bytes go, read back from the bytes themselves (bench_serve_scale):
 * the delimited MetricFamily messages of a scrape walked field by field, and of one family its
 * header, each Metric's labels, its histogram message, and the framing around them. The
 * histogram messages of a family are also copied out back to back, so that their gzipped size
 * can be measured apart from the labels'.
 */
#ifndef VMEXIT_EXPO_BYTES_H
#define VMEXIT_EXPO_BYTES_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

struct expo_bytes {
	size_t family;		/* the family whole: its length prefix, header and metrics */
	size_t labels;		/* the Metric's label fields, tag and length included */
	size_t hist;		/* the Metric's histogram field, tag and length included */
	size_t other;		/* the rest: each Metric's own tag and length, other fields */
	__u32 metrics;
	char *hist_copy;	/* the histogram fields back to back (hist bytes); free() it */
	char *family_copy;	/* the family's bytes as in the scrape (family bytes) */
};

/* A varint at *p (below end): its value, *p moved past it; false if cut short. */
static inline bool eb_varint(const __u8 **p, const __u8 *end, __u64 *v)
{
	*v = 0;
	for (int s = 0; s < 64 && *p < end; s += 7) {
		__u8 b = *(*p)++;

		*v |= (__u64)(b & 0x7f) << s;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* One field at *p: its number and wire type, and where its value (of a length-delimited field:
 * its bytes) lies; *p moved past it. false if the bytes are not protobuf. */
static inline bool eb_field(const __u8 **p, const __u8 *end, __u32 *num, const __u8 **val,
			    size_t *len)
{
	__u64 key, v;

	if (!eb_varint(p, end, &key))
		return false;
	*num = key >> 3;
	*val = *p;
	switch (key & 7) {
	case 0:
		if (!eb_varint(p, end, &v))
			return false;
		break;
	case 1:
		*p += 8;
		break;
	case 2:
		if (!eb_varint(p, end, &v) || v > (size_t)(end - *p))
			return false;
		*val = *p;
		*p += v;
		break;
	case 5:
		*p += 4;
		break;
	default:
		return false;
	}
	*len = *p - *val;
	return *p <= end;
}

/* The bytes of family `name` in the scrape buf (len): 0, or -1 if absent or not protobuf. */
static inline int expo_bytes_of(const char *buf, size_t len, const char *name,
				struct expo_bytes *eb)
{
	const __u8 *p = (const __u8 *)buf, *end = p + len;

	memset(eb, 0, sizeof(*eb));
	while (p < end) {
		const __u8 *fam = p, *f, *fend, *val;
		bool match = false;
		size_t n, hist_at = 0;
		__u64 flen;
		__u32 num;

		if (!eb_varint(&p, end, &flen) || flen > (size_t)(end - p))
			return -1;
		f = p;
		fend = p + flen;
		p = fend;
		while (f < fend) {
			const __u8 *field = f;

			if (!eb_field(&f, fend, &num, &val, &n))
				return -1;
			if (num == 1)
				match = n == strlen(name) && !memcmp(val, name, n);
			if (num != 4 || !match)
				continue;
			/* A Metric: tag and length (other), then its fields. */
			eb->metrics++;
			eb->other += val - field;
			for (const __u8 *m = val, *mend = val + n; m < mend;) {
				const __u8 *at = m, *mv;
				size_t mn;
				__u32 mnum;

				if (!eb_field(&m, mend, &mnum, &mv, &mn))
					return -1;
				if (mnum == 1) {
					eb->labels += m - at;
				} else if (mnum == 7) {
					char *c = realloc(eb->hist_copy, hist_at + (m - at));

					if (!c)
						return -1;
					eb->hist_copy = c;
					memcpy(c + hist_at, at, m - at);
					hist_at += m - at;
					eb->hist += m - at;
				} else {
					eb->other += m - at;
				}
			}
		}
		if (match) {
			eb->family = p - fam;
			eb->family_copy = malloc(eb->family);
			if (!eb->family_copy)
				return -1;
			memcpy(eb->family_copy, fam, eb->family);
			return 0;
		}
	}
	return -1;
}

/*
 * The same family in the text format: its lines (# HELP, # TYPE and the samples of `name`,
 * `name`_bucket, _sum, _count) copied into eb->family_copy, their bytes in eb->family. 0 or -1.
 */
static inline int expo_text_family(const char *buf, size_t len, const char *name,
				   struct expo_bytes *eb)
{
	size_t nl = strlen(name), at = 0;
	const char *p = buf, *end = buf + len;

	memset(eb, 0, sizeof(*eb));
	eb->family_copy = malloc(len ? len : 1);
	if (!eb->family_copy)
		return -1;
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *s = p;

		eol = eol ? eol + 1 : end;
		if (!strncmp(s, "# HELP ", 7) || !strncmp(s, "# TYPE ", 7))
			s += 7;
		if ((size_t)(eol - s) > nl && !memcmp(s, name, nl) &&
		    (s[nl] == ' ' || s[nl] == '{' || s[nl] == '_')) {
			memcpy(eb->family_copy + at, p, eol - p);
			at += eol - p;
		}
		p = eol;
	}
	eb->family = at;
	return at ? 0 : -1;
}

static inline void expo_bytes_free(struct expo_bytes *eb)
{
	free(eb->hist_copy);
	free(eb->family_copy);
}

#endif /* VMEXIT_EXPO_BYTES_H */
