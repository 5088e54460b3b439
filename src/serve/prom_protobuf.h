/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus protobuf exposition: length-delimited io.prometheus.client.MetricFamily
 * messages, the format a Prometheus started with --enable-feature=native-histograms asks for
 * first, and the only one that carries native histograms.
 */
#ifndef VMEXIT_PROM_PROTOBUF_H
#define VMEXIT_PROM_PROTOBUF_H

#include "prom_exposition.h"

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

#endif /* VMEXIT_PROM_PROTOBUF_H */
