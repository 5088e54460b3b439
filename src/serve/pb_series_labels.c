// SPDX-License-Identifier: GPL-2.0
/* Exit series' protobuf labels kept across scrapes (pb_series_labels.h says why). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pb_series_labels.h"
#include "prom_protobuf.h"
#include "proto_enc.h"

/* One series' LabelPairs at most: each label's name and value with their tags and lengths. */
#define LABELS_PB_MAX	(EXPO_LABELS_MAX + 256)

static int room(struct expo_buf *b, size_t n)
{
	size_t cap = b->cap ? b->cap : 64 * 1024;
	char *p;

	if (b->len + n <= b->cap)
		return 0;
	while (cap < b->len + n)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/* Series i is the one sl held at i last time (the same labels). */
static bool same(const struct pb_series_label *l, const struct expo_input *in, __u32 i)
{
	const struct row_key *k = &in->counts[i].key;
	const char *guest = in->series[i].guest ? in->series[i].guest : "";

	return l->kept && l->tgid == k->tgid && l->isa == k->isa && l->reason == k->reason &&
	       l->by_vcpu == in->by_vcpu && (!in->by_vcpu || l->vcpu == k->vcpu) &&
	       !strcmp(l->guest, guest);
}

/* Series i's labels made afresh at the end of b, as the text format writes and reads them. */
static int labels_fresh(struct pb_series_label *l, const struct expo_input *in, __u32 i,
			struct expo_buf *b)
{
	const struct row_key *k = &in->counts[i].key;
	const char *guest = in->series[i].guest ? in->series[i].guest : "";
	char text[EXPO_LABELS_MAX];
	size_t n = expo_series_labels(in, i, text);
	struct pb pb;

	pb_init(&pb, b->p + b->len, LABELS_PB_MAX);
	if (expo_pb_labels(&pb, text, n) || pb.full)
		return -EINVAL;
	l->tgid = k->tgid;
	l->vcpu = k->vcpu;
	l->isa = k->isa;
	l->reason = k->reason;
	l->by_vcpu = in->by_vcpu;
	l->kept = strlen(guest) < sizeof(l->guest);
	if (l->kept)
		strcpy(l->guest, guest);
	l->off = b->len;
	l->len = pb_len(&pb);
	b->len += l->len;
	return 0;
}

int pb_series_labels_make(struct pb_series_labels *sl, const struct expo_input *in)
{
	struct expo_buf next = sl->last;
	__u32 was = sl->nr;
	int err = 0;

	if (in->nr_series > sl->cap) {
		struct pb_series_label *s = reallocarray(sl->s, in->nr_series, sizeof(*s));

		if (!s)
			return -ENOMEM;
		sl->s = s;
		sl->cap = in->nr_series;
	}
	next.len = 0;
	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		struct pb_series_label *l = &sl->s[i];

		if (room(&next, LABELS_PB_MAX)) {
			err = -ENOMEM;
		} else if (i < was && same(l, in, i)) {
			memcpy(next.p + next.len, sl->bytes.p + l->off, l->len);
			l->off = next.len;
			next.len += l->len;
		} else {
			err = labels_fresh(l, in, i, &next);
		}
	}
	/* The last scrape's bytes are the next one's room; on error nothing is kept. */
	sl->last = sl->bytes;
	sl->bytes = next;
	sl->nr = err ? 0 : in->nr_series;
	return err;
}

void pb_series_labels_free(struct pb_series_labels *sl)
{
	free(sl->s);
	expo_buf_free(&sl->bytes);
	expo_buf_free(&sl->last);
	memset(sl, 0, sizeof(*sl));
}
