/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Follows the kernel's statistics cells over time: discovers new cells (naming their guest and
 * vCPU while the threads still exist), and turns each interval into rows grouped by VM, vCPU or
 * reason, from the difference between two snapshots (the kernel never resets anything).
 */
#ifndef VMEXIT_TRACKER_H
#define VMEXIT_TRACKER_H

#include <stdbool.h>
#include "vmexit.h"
#include "cell_seen.h"
#include "inflight.h"
#include "coarse_rows.h"
#include "rows.h"

struct cell_source {		/* where the cells come from: the kernel map, or a test */
	const struct cell *cells;
	/* Instead of cells (when set): cell i, valid until the next call; NULL if it cannot be
	 * reached now (the kernel map read through a window, kernel/cell_window.h). */
	const struct cell *(*at)(void *ctx, __u32 i);
	__u32 (*nr_cells)(void *ctx);
	/*
	 * Hands cell idx back to the kernel, zeroed, for another thread: its thread has exited
	 * and its final values have been read. NULL: cells are never reused.
	 */
	void (*release)(void *ctx, __u32 idx);
	void *ctx;
};

/* A cell's share of its interval row's inflight_ns, for the row once it exists. */
struct inflight_time {
	struct row_key key;
	__s64 ns;
};

enum cell_state { CELL_UNSEEN, CELL_LIVE, CELL_GONE, CELL_FREED };

struct tracker {
	struct cell_source src;
	enum group_by by;
	__s32 vcpu_filter;		/* -1: all; applied to resolved vCPUs */
	__u32 seen;			/* cells [0, seen) discovered at least once */
	__u32 cap;
	struct cell_seen *prev;		/* each cell as last seen */
	__s32 *vcpu;			/* resolved vCPU per cell, -1 unknown */
	__u8 *state;			/* enum cell_state per cell */
	__u32 *freed;			/* cells handed back, found again once the kernel reuses them */
	__u32 *cum_at;			/* per cell: where its row was in cum (checked before use) */
	__u32 nr_freed;
	__u64 released;			/* cells handed back so far */
	bool resolve_names;		/* look at /proc (off in tests) */
	/* Told of every cell found, new or reused by another thread (NULL: nobody). */
	void (*found)(void *ctx, const struct cell_key *k);
	void *found_ctx;
	bool split;			/* the cells carry --split sums: rows get them too */
	struct row_table cum;		/* everything since start (empty with coarse) */
	/* serve: everything since start at the exposition's resolution instead of cum
	 * (tracker_coarse_cum()); coarse NULL: cum. */
	const struct hist_coarse *coarse;
	struct coarse_rows ccum;
	struct inflight_exit *inflight;	/* at the last sample, nr_inflight of them */
	__u32 nr_inflight;
	__u32 inflight_cap;
	/* Cells of exited threads read by tracker_reap() since the last sample: their last
	 * deltas and the exits they were left in, for the next sample. */
	struct row_table reaped;
	struct inflight_exit *reaped_inflight;
	__u32 nr_reaped_inflight;
	__u32 reaped_inflight_cap;
	/*
	 * stat --stuck (the cells' stuck_* fields, 0: off): exits that took stuck_ns or more and
	 * completed since the last sample (stuck[0, nr_stuck) after tracker_sample(); those
	 * reaped since are appended from stuck_from on), and since the start, one per thread
	 * and reason, with the exits left by an exiting thread after stuck_ns or more.
	 */
	__u64 stuck_ns;
	struct inflight_exit *stuck;
	__u32 nr_stuck, stuck_from, stuck_cap;
	struct inflight_exit *cum_stuck;
	__u32 nr_cum_stuck, cum_stuck_cap;
	__u64 cum_ended;		/* exits left by their exiting thread since the start */
	/*
	 * CLOCK_MONOTONIC ns of this sample (set by the caller before tracker_sample(); 0:
	 * unknown, then rows get no inflight_ns) and of the last one. The change of each cell's
	 * in-flight age between them goes to its interval row's inflight_ns (rows.h), once the
	 * row exists (a cell whose exit spans the whole interval makes no row of its own).
	 */
	__u64 now_ns, last_ns;
	struct inflight_time *pending;
	__u32 nr_pending;
	__u32 pending_cap;
};

int tracker_init(struct tracker *t, const struct cell_source *src, enum group_by by,
		 __s32 vcpu_filter, bool resolve_names);
void tracker_free(struct tracker *t);
/* The rows since start kept in t->ccum at m's resolution, not in t->cum (before any sample;
 * m outlives t). */
void tracker_coarse_cum(struct tracker *t, const struct hist_coarse *m);
/* Picks up cells created since the last call; cheap, call it often. */
void tracker_discover(struct tracker *t);
/* Rows for what happened since the previous sample (closed_epoch: the epoch that just ended,
 * whose per-interval min/max the cells carry). Also adds them to t->cum, lists the exits in
 * flight in t->inflight, and hands back the cells of threads that have exited. out NULL: into
 * t->cum only (serve shows nothing per interval: a table less to fill per sample). */
int tracker_sample(struct tracker *t, __u32 closed_epoch, struct row_table *out);
/* Forgets t->cum and the exits in flight: what follows counts from the last sample on. */
void tracker_restart(struct tracker *t);
/*
 * Reads the cells of threads that have exited, for the next tracker_sample(), and hands them
 * back at once: a run that samples seldom (stat -- CMD without an interval samples only at the
 * end) does not run out of cells while VMs come and go. Cheap (one load per cell); 0 or -ENOMEM.
 */
int tracker_reap(struct tracker *t);
/* Cells in use by live threads (discovered and not handed back). */
__u32 tracker_live_cells(const struct tracker *t);

#endif /* VMEXIT_TRACKER_H */
