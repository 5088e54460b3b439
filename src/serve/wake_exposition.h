/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve --wake's families (README, "Interrupt delivery and halts"): interrupt delivery latency
 * per guest x source as a histogram with its parts as counters, the halted exits' counts and
 * parts, the halts' wake-up times as a histogram (what a halt-poll window would catch), KVM's
 * halt_poll_ns, and what the kernel side could not keep.
 */
#ifndef VMEXIT_WAKE_EXPOSITION_H
#define VMEXIT_WAKE_EXPOSITION_H

#include "prom_exposition.h"
#include "wake_series.h"

/*
 * Appends ws's families to out in the text format or OpenMetrics; the two histograms only
 * with classic (a protobuf scrape encodes them itself, prom_protobuf.c). 0 or -ENOMEM.
 */
int expo_render_wake(const struct wake_series *ws, const struct expo_buckets *bk,
		     enum expo_format fmt, bool classic, struct expo_buf *out);

/* The labels of delivery series i / halt series i, as the text format writes them, into out
 * (EXPO_LABELS_MAX); the length. */
size_t wake_series_labels(const struct wake_series *ws, __u32 i, char *out);
size_t halt_series_labels(const struct wake_series *ws, __u32 i, char *out);

/* vmexit_halts' outcome label: polled, poll_slept, slept. */
#define WAKE_HALT_OUTCOMES	3

/* The histograms' names and help, for both renderers. */
#define WAKE_DELIVERY_HIST	"vmexit_irq_delivery_seconds"
#define WAKE_DELIVERY_NATIVE	"vmexit_irq_delivery_nanoseconds"
#define WAKE_HALT_HIST		"vmexit_halt_wakeup_seconds"
#define WAKE_HALT_NATIVE	"vmexit_halt_wakeup_nanoseconds"
extern const char wake_delivery_help[];
extern const char wake_halt_help[];

#endif /* VMEXIT_WAKE_EXPOSITION_H */
