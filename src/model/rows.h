/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The row model every output prints (stat's table, CSV, JSON and histograms, top, report):
 * exit counts, latency sums, extremes and a histogram per VM x reason, vCPU x reason or
 * reason, and the table that finds a row by its key. Live sampling (tracker.h) and recordings
 * (event_rows.h) both fill it.
 */
#ifndef VMEXIT_ROWS_H
#define VMEXIT_ROWS_H

#include <stdbool.h>
#include "hashmap.h"
#include "vmexit.h"

enum group_by { BY_VM, BY_VCPU, BY_REASON };

/*
 * Rows of other kvm tracepoints (top --kvm-events) sit in the same tables as exits, under this
 * isa (no real one), their reason the event's id (enum vmexit_kvm_event): events, not exits,
 * so they are listed in the drill-down (as kvm_stat lists kvm_pio...) and never summed into
 * a VM's or vCPU's exits.
 */
#define TOP_ISA_KVM_EVENT	0x100

struct row_key {
	__u32 tgid;		/* 0 when grouped by reason only */
	__s32 vcpu;		/* -1 when not split by vCPU */
	__u32 isa;
	__u32 reason;
	/* The VMM process's start time (cell_key.proc_start) with tgid: a pid reused by a new
	 * VMM is another guest, never merged with the old one. 0 when grouped by reason, or
	 * unknown (recordings). */
	__u64 start;
	/* --by key / --by rip: what the row's exits were about; all 0 (KEY_NONE) otherwise. */
	struct key_note key;
	/* --by key grouped by device (key_groups.h): the last port or address of the row's span,
	 * whose first is key.key; 0: the row is one key. */
	__u64 key_end;
};

struct row {
	struct row_key key;
	__u64 count;		/* exits seen */
	__u64 completed;	/* exits whose latency is known */
	__u64 total_ns;
	__u64 min_ns;
	__u64 max_ns;
	/* --split: total_ns as on CPU + blocked + waiting for a CPU, exactly; else all 0. */
	__u64 oncpu_ns;
	__u64 blocked_ns;
	__u64 runq_ns;
	/*
	 * Live interval rows (tracker.h): the time in exit that fell inside the interval is
	 * total_ns + inflight_ns: plus the ages at its end of the row's exits in flight then,
	 * minus their ages at its start (total_ns books an exit's whole latency where it
	 * completes). 0 elsewhere (rows since the start, recordings).
	 */
	__s64 inflight_ns;
	__u64 hist[NR_BUCKETS];
};

DEFINE_HASHMAP(row_index, struct row_key, __u32)

/* A guest: its VMM process, as a hash map key (whole 32-bit words, no padding). */
struct guest_key {
	__u32 tgid;
	__u32 start_lo;
	__u32 start_hi;
};

static inline struct guest_key guest_key_of(__u32 tgid, __u64 start)
{
	return (struct guest_key){ tgid, (__u32)start, (__u32)(start >> 32) };
}

struct row_table {
	struct row *rows;	/* in the order they were first seen, until sorted */
	__u32 nr;
	__u32 cap;
	struct row_index index;	/* key -> position in rows */
};

void row_table_init(struct row_table *rt);
void row_table_reset(struct row_table *rt);
void row_table_free(struct row_table *rt);
/* After the rows were reordered (sorted). */
int row_table_reindex(struct row_table *rt);
struct row *row_table_get(struct row_table *rt, const struct row_key *k);
/* The rows' one order by identity: guest, vCPU, ISA, reason, key, process start. */
int row_key_cmp(const struct row_key *a, const struct row_key *b);
/* Keeps only the rows keep() says yes to, in their order; 0 or -ENOMEM. */
int row_table_retain(struct row_table *rt, bool (*keep)(void *ctx, const struct row_key *k),
		     void *ctx);
/* Which guests are over, for row_table_retain(): gone(ctx, tgid, start). */
struct row_forget {
	bool (*gone)(void *ctx, __u32 tgid, __u64 start);
	void *ctx;
};
/* row_table_retain()'s keep with a struct row_forget: rows of no guest (tgid 0) or a live one. */
bool row_forget_kept(void *forget, const struct row_key *k);
void row_add(struct row *dst, const struct row *src);

/* Value at percentile p (0..100) from the histogram, clamped to [min, max]; 0 if empty. */
/* The p-th percentile of a histogram of NR_BUCKETS (the middle of its bucket, within min/max). */
__u64 hist_percentile(const __u64 *hist, __u64 min_ns, __u64 max_ns, double p);
__u64 row_percentile(const struct row *r, double p);
/* The time in exit that fell inside the row's interval (inflight_ns above), never below 0: an
 * exit dropped takes back the share earlier intervals booked. */
__u64 row_time_in_ns(const struct row *r);
__u64 row_hist_total(const struct row *r);
/*
 * The min and max of a delta row whose exact extremes are unknown (an epoch turned while it was
 * taken): the bounds of its first and last bucket, narrowed by the lifetime extremes.
 */
void row_minmax_from_hist(struct row *d, __u64 life_min, __u64 life_max);

#endif /* VMEXIT_ROWS_H */
