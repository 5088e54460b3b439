/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus protobuf exposition: length-delimited io.prometheus.client.MetricFamily
 * messages, the format a Prometheus started with --enable-feature=native-histograms asks for
 * first, and the only one that carries native histograms.
 */
#ifndef VMEXIT_PROM_PROTOBUF_H
#define VMEXIT_PROM_PROTOBUF_H

#include "pb_series_labels.h"
#include "prom_exposition.h"

struct pb;

#define EXPO_PROTOBUF_TYPE \
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; " \
	"encoding=delimited"

/*
 * Appends in's exposition to out: every family of the text format (the same names, labels and
 * values), the duration histograms as hists says: classic vmexit_exit_duration_seconds, native
 * vmexit_exit_duration_nanoseconds (native_hist.h; in->counts[i].native), or both.
 * 0, or -ENOMEM.
 */
int expo_render_protobuf(const struct expo_input *in, enum expo_hists hists, struct expo_buf *out);

/* What a renderer keeps from one scrape to the next (one render at a time): the buffer of the
 * text rendering it translates, and the exit series' encoded labels. Zeroed before the first. */
struct expo_pb_keep {
	struct expo_buf text;
	struct pb_series_labels labels;
};

/* expo_render_protobuf(), the same bytes, with keep's buffers and labels of the last call. */
int expo_render_protobuf_kept(const struct expo_input *in, enum expo_hists hists,
			      struct expo_pb_keep *keep, struct expo_buf *out);
void expo_pb_keep_free(struct expo_pb_keep *keep);

/* The labels of a sample line, `a="x",b="y"` (as the text renderer writes them), as LabelPair
 * fields of m. -EINVAL when malformed. */
int expo_pb_labels(struct pb *m, const char *s, size_t n);

#endif /* VMEXIT_PROM_PROTOBUF_H */
