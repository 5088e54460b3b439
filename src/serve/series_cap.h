/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve --max-series: the per-guest series of one scrape held to a hard cap. A series is what
 * Prometheus stores as one: a sample line of the text formats, a native histogram as a whole.
 * The stuck exits in flight come first (the alarms), then the exit rows in their order, then
 * the --keys series, then --wake's delivery and halt series; each row goes whole (its counter,
 * histogram and --split states) or not at all, and so does each wake series. The
 * process-wide series (lost exits, BPF run time, build info, process_*) are outside the cap: a
 * fixed number, whatever the guests.
 */
#ifndef VMEXIT_SERIES_CAP_H
#define VMEXIT_SERIES_CAP_H

#include "prom_exposition.h"

#define SERIES_CAP_DEFAULT	30000

/* The series one exit row makes in a scrape of format fmt (protobuf: histograms as hists). */
__u32 series_per_row(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists);
/* The series one --wake delivery series / halt series makes (wake_exposition.c). */
__u32 series_per_wake(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists);
__u32 series_per_halt(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists);
/*
 * Cuts in's stuck exits in flight, rows, keys and wake series so that their series are at
 * most max; sets in->max_series and in->series_dropped (the series left out).
 */
void series_cap_apply(struct expo_input *in, enum expo_format fmt, enum expo_hists hists,
		      __u64 max);

#endif /* VMEXIT_SERIES_CAP_H */
