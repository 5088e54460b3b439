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
#include "rows.h"

struct cell_source {		/* where the cells come from: the kernel map, or a test */
	const struct cell *cells;
	__u32 (*nr_cells)(void *ctx);
	void *ctx;
};

struct tracker {
	struct cell_source src;
	enum group_by by;
	__s32 vcpu_filter;		/* -1: all; applied to resolved vCPUs */
	__u32 seen;			/* cells discovered so far */
	__u32 cap;
	struct cell *prev;		/* last snapshot of each cell */
	__s32 *vcpu;			/* resolved vCPU per cell, -1 unknown */
	bool resolve_names;		/* look at /proc (off in tests) */
	bool split;			/* the cells carry --split sums: rows get them too */
	struct row_table cum;		/* everything since start */
};

int tracker_init(struct tracker *t, const struct cell_source *src, enum group_by by,
		 __s32 vcpu_filter, bool resolve_names);
void tracker_free(struct tracker *t);
/* Picks up cells created since the last call; cheap, call it often. */
void tracker_discover(struct tracker *t);
/* Rows for what happened since the previous sample (closed_epoch: the epoch that just ended,
 * whose per-interval min/max the cells carry). Also adds them to t->cum. */
int tracker_sample(struct tracker *t, __u32 closed_epoch, struct row_table *out);

/* A cell's vCPU as the kernel knew it: from its exits, else from the thread name it stored
 * ("CPU 3/KVM"); -1 when neither says. Works after the thread is gone. */
__s32 cell_key_vcpu(const struct cell_key *k);

#endif /* VMEXIT_TRACKER_H */
