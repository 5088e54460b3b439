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
#include "hashmap.h"

enum group_by { BY_VM, BY_VCPU, BY_REASON };

struct row_key {
	__u32 tgid;		/* 0 when grouped by reason only */
	__s32 vcpu;		/* -1 when not split by vCPU */
	__u32 isa;
	__u32 reason;
};

struct row {
	struct row_key key;
	__u64 count;		/* exits seen */
	__u64 completed;	/* exits whose latency is known */
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 hist[NR_BUCKETS];
};

DEFINE_HASHMAP(row_index, struct row_key, __u32)

struct row_table {
	struct row *rows;	/* in the order they were first seen, until sorted */
	__u32 nr;
	__u32 cap;
	struct row_index index;	/* key -> position in rows */
};

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

void row_table_init(struct row_table *rt);
void row_table_reset(struct row_table *rt);
void row_table_free(struct row_table *rt);
/* After the rows were reordered (sorted). */
int row_table_reindex(struct row_table *rt);
struct row *row_table_get(struct row_table *rt, const struct row_key *k);
void row_add(struct row *dst, const struct row *src);

/* Value at percentile p (0..100) from the histogram, clamped to [min, max]; 0 if empty. */
__u64 row_percentile(const struct row *r, double p);
__u64 row_hist_total(const struct row *r);

#endif /* VMEXIT_TRACKER_H */
