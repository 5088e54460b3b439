/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each exit series' labels as the LabelPair fields of its protobuf Metric, kept from one scrape
 * to the next: a series whose guest name, pid, vCPU and reason are those of the series at its
 * place last time takes the bytes made then, not its labels formatted, escaped and parsed
 * again (at 10,000 series, twice a scrape: its vmexit_exits counter and its histogram).
 */
#ifndef VMEXIT_PB_SERIES_LABELS_H
#define VMEXIT_PB_SERIES_LABELS_H

#include "prom_exposition.h"

struct pb_series_label {
	__u32 tgid;
	__s32 vcpu;
	__u32 isa, reason;
	bool by_vcpu;
	bool kept;		/* guest is the whole name: the next scrape may compare it */
	char guest[64];
	size_t off, len;	/* its bytes in the labels' buffer */
};

struct pb_series_labels {
	struct pb_series_label *s;
	__u32 nr, cap;
	struct expo_buf bytes;	/* this scrape's */
	struct expo_buf last;	/* the last one's, the next one's room */
};

/* The labels of in's series (in->nr_series of them) into sl, the last scrape's reused where
 * they are the same. 0, -ENOMEM, or -EINVAL (labels that do not parse). */
int pb_series_labels_make(struct pb_series_labels *sl, const struct expo_input *in);

static inline const char *pb_series_labels_at(const struct pb_series_labels *sl, __u32 i,
					      size_t *len)
{
	*len = sl->s[i].len;
	return sl->bytes.p + sl->s[i].off;
}

void pb_series_labels_free(struct pb_series_labels *sl);

#endif
