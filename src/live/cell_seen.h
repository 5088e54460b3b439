/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tracker keeps of a kernel cell between two looks, to take the next delta from: its
 * key, its counters, and of its 282 buckets only the run that has counted so far, in as few
 * bytes a value as they need (bucket_run.h). A whole struct cell per cell was 1.3 KB: 53 MB at
 * 40,000 cells, as much as the kernel's map. A run is typically a few dozen buckets (exits of
 * one thread and reason cluster), and it is freed with the cell.
 */
#ifndef VMEXIT_CELL_SEEN_H
#define VMEXIT_CELL_SEEN_H

#include <stdbool.h>
#include "vmexit.h"
#include "bucket_run.h"

struct cell_seen {
	struct cell_key key;
	__u64 started, count, total_ns;
	__u64 oncpu_ns, blocked_ns, runq_ns;	/* --split */
	__u64 stuck_done;
	__u64 inflight_ts;
	/*
	 * The last look saw an exit begin or complete: its buckets are read at the next look
	 * too. The kernel counts an exit before its bucket (bpf/handlers.bpf.h, lat_add()), so
	 * a look between the two has the count without the bucket, which a look of the
	 * counters alone would never read again while the cell stays idle.
	 */
	bool recheck;
	struct bucket_run hist;		/* modulo 2^32 as the kernel's */
};

/* Followed from zero, with key k (frees what it held). */
void cell_seen_reset(struct cell_seen *p, const struct cell_key *k);
/* Widens the run to every bucket of now that has counted, before anything is taken from it:
 * 0, or -ENOMEM with p unchanged. */
int cell_seen_fit(struct cell_seen *p, const struct cell *now);
/* now, as seen (after cell_seen_fit() on it). */
void cell_seen_store(struct cell_seen *p, const struct cell *now);
/* now's counters but not its buckets: a cell none of whose exits began or completed since the
 * last look (its buckets are read at its next exit), or whose run was stored already
 * (bucket_run_advance()). */
void cell_seen_store_counts(struct cell_seen *p, const struct cell *now);
/* Its buckets freed (the cell is handed back, or the tracker freed). */
void cell_seen_drop(struct cell_seen *p);

#endif /* VMEXIT_CELL_SEEN_H */
