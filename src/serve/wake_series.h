/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve --wake: the kernel's delivery and halted-exit cells (per pid x vCPU x source x vector)
 * summed into the series a scrape exports: per guest x source (and vCPU with --by vcpu). The
 * vector is not a label: a guest's vectors are many and change with its drivers (stat --wake
 * shows them), and the series must stay few. Only the guests whose exit series the scrape
 * exports get wake series, named and timed as those are: the same VMM, its pid and start time
 * (a pid reused by a new VMM is another guest, as for the exit series).
 */
#ifndef VMEXIT_WAKE_SERIES_H
#define VMEXIT_WAKE_SERIES_H

#include <stdbool.h>
#include "wake_rows.h"

/* One delivery series: its cells summed (cell.max_ns the largest). */
struct expo_wake {
	const char *guest;
	__u64 created_ms;		/* Unix time, ms */
	__u32 tgid;
	__u64 start;			/* the VMM's start time (wake_key.proc_start) */
	__s32 vcpu;			/* -1 without --by vcpu */
	__u32 source;			/* enum wake_source */
	struct wake_cell c;
};

/* One halted-exit series: a guest's (or vCPU's) halts. */
struct expo_halt {
	const char *guest;
	__u64 created_ms;
	__u32 tgid;
	__u64 start;
	__s32 vcpu;
	struct hlt_cell c;
};

struct wake_series {
	bool by_vcpu;
	struct expo_wake *wake;
	__u32 nr_wake, cap_wake;
	struct expo_halt *halt;
	__u32 nr_halt, cap_halt;
	__u64 lost[NR_WAKE_LOST];
	/* Made pending for vCPUs never seen entering guest mode, of every guest traced (the
	 * kernel keeps one total: no vCPU's record to key it by); known: a live sample's. */
	__u64 untimed;
	bool untimed_known;
	long long halt_poll_ns;		/* -1: unknown */
};

/* The guest of VMM (tgid, start) if the scrape exports it: its label and _created (Unix ms). */
typedef bool wake_series_guest_fn(void *ctx, __u32 tgid, __u64 start, const char **guest,
				  __u64 *created_ms);

/* w (sorted: wake_snapshot_sort()) into ws's series, the exported guests' only. 0 or -ENOMEM. */
int wake_series_take(struct wake_series *ws, const struct wake_snapshot *w,
		     wake_series_guest_fn *guest, void *ctx);
void wake_series_free(struct wake_series *ws);

#endif /* VMEXIT_WAKE_SERIES_H */
