// SPDX-License-Identifier: GPL-2.0
/* The --max-series cut (series_cap.h). */
#include "series_cap.h"
#include "wake_exposition.h"

/* Each key makes vmexit_key_exits_total and vmexit_key_exit_seconds_total. */
#define SERIES_PER_KEY		2

static bool classic_rendered(enum expo_format fmt, enum expo_hists hists)
{
	return fmt != EXPO_PROTOBUF || hists != EXPO_HISTS_NATIVE;
}

/* A histogram: classic (the bounds, +Inf, _count, _sum) and/or native (one). */
static __u32 per_hist(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists)
{
	return (classic_rendered(fmt, hists) ? in->buckets->nr + 3 : 0) +
	       (fmt == EXPO_PROTOBUF && hists != EXPO_HISTS_CLASSIC);
}

__u32 series_per_wake(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists)
{
	/* vmexit_irq_delivery_seconds, vmexit_irq_delivery_part_seconds by part */
	return per_hist(in, fmt, hists) + NR_WAKE_PARTS;
}

__u32 series_per_halt(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists)
{
	/* vmexit_halted_exits, _part_seconds by part, vmexit_halts by outcome,
	 * vmexit_halt_invalid_wakeups, vmexit_halt_wakeup_seconds */
	return 1 + NR_HLT_PARTS + WAKE_HALT_OUTCOMES + 1 + per_hist(in, fmt, hists);
}

/* The first of nr items of per series each that fit in max - *used; the rest into *dropped. */
static __u32 cut(__u32 nr, __u32 per, __u64 max, __u64 *used, __u64 *dropped)
{
	__u64 room = max > *used ? (max - *used) / per : 0;
	__u32 keep = room < nr ? (__u32)room : nr;

	*used += (__u64)keep * per;
	*dropped += (__u64)(nr - keep) * per;
	return keep;
}

__u32 series_per_row(const struct expo_input *in, enum expo_format fmt, enum expo_hists hists)
{
	__u32 n = 1;				/* vmexit_exits_total */

	if (classic_rendered(fmt, hists))
		n += in->buckets->nr + 3;	/* the bounds, +Inf, _count, _sum */
	if (fmt == EXPO_PROTOBUF && hists != EXPO_HISTS_CLASSIC)
		n += 1;				/* the native histogram */
	if (in->split)
		n += 3;				/* vmexit_exit_state_seconds_total by state */
	return n;
}

void series_cap_apply(struct expo_input *in, enum expo_format fmt, enum expo_hists hists,
		      __u64 max)
{
	__u32 per_row = series_per_row(in, fmt, hists);
	__u32 per_stuck = in->split ? 5 : 2;	/* count and age, their three states */
	__u64 used = 0, dropped = 0;
	__u32 keep, i;

	in->max_series = max;
	for (i = 0; in->export_stuck && i < in->nr_inflight; i++) {
		if (!inflight_stuck(&in->inflight[i], in->now_ns, in->stuck_ns))
			continue;
		if (used + per_stuck > max)
			break;
		used += per_stuck;
	}
	/* Those after the first left out: the array is cut there. */
	for (__u32 j = i; in->export_stuck && j < in->nr_inflight; j++)
		if (inflight_stuck(&in->inflight[j], in->now_ns, in->stuck_ns))
			dropped += per_stuck;
	if (in->export_stuck)
		in->nr_inflight = i;

	keep = (max - used) / per_row < in->nr_series ? (__u32)((max - used) / per_row)
						      : in->nr_series;
	dropped += (__u64)(in->nr_series - keep) * per_row;
	used += (__u64)keep * per_row;
	in->nr_series = keep;

	if (in->keys_on)
		in->nr_keys = cut(in->nr_keys, SERIES_PER_KEY, max, &used, &dropped);
	if (in->wake) {
		in->wake->nr_wake = cut(in->wake->nr_wake, series_per_wake(in, fmt, hists), max,
					&used, &dropped);
		in->wake->nr_halt = cut(in->wake->nr_halt, series_per_halt(in, fmt, hists), max,
					&used, &dropped);
	}
	in->series_dropped = dropped;
}
