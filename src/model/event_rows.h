/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-event helpers shared by stream, record and report: the userspace event filter (report
 * applies -p/-g/-c/-r/--min-latency itself; stream and record only need the vCPU part, for
 * exits whose vCPU the kernel did not know), and the rows that `vmexit stat`'s output prints,
 * built from events instead of kernel cells.
 */
#ifndef VMEXIT_EVENT_ROWS_H
#define VMEXIT_EVENT_ROWS_H

#include <stdbool.h>
#include "vmexit.h"
#include "reasons.h"
#include "event_filter.h"
#include "rows.h"

/*
 * Adds one exit to the row it belongs to under `by` (the same keys the tracker uses: tgid 0
 * for BY_REASON, vcpu -1 unless BY_VCPU): counted, and with its latency when it completed (an
 * exit flagged VMEXIT_EV_IN_FLIGHT is counted only, as stat counts it). start is its VMM
 * process's start time (row_key.start; name_cache_start_at_time()), 0 if unknown: the exits
 * of two VMMs on one pid stay apart. keys: a row per key as well (report --by key of a
 * recording made with --keys). TSC offset and kvm events are not exits and are ignored.
 * 0, or -ENOMEM.
 */
int event_rows_add(struct row_table *rt, enum group_by by, const struct vmexit_event *ev,
		   __u64 start, bool keys);
/* The same into the row of key (--by rip: rip_rows.h). */
int event_rows_add_key(struct row_table *rt, enum group_by by, const struct vmexit_event *ev,
		       __u64 start, const struct key_note *key);

#endif /* VMEXIT_EVENT_ROWS_H */
