/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by key / --by rip, live: rows per guest x [vCPU x] reason x key from the kernel's key table
 * (bpf/keys.bpf.h), each sample's from the difference with the previous one, as the tracker
 * does for cells.
 */
#ifndef VMEXIT_KEY_ROWS_H
#define VMEXIT_KEY_ROWS_H

#include "hashmap.h"
#include "rows.h"

DEFINE_HASHMAP(key_prev_index, struct key_id, __u32)

struct key_rows {
	int map_fd;		/* the key table: entry -> its slot in slots_fd */
	int slots_fd;		/* the entries' statistics, by slot */
	int free_fd;		/* the kernel's queue of zeroed slots to reuse */
	/* The kernel's count of real keys it made (keys.bpf.h keys_used, in the mmapped bss),
	 * which --max-keys bounds: lowered as forgotten ones leave. NULL: nothing forgotten. */
	__u32 *used;
	enum group_by by;
	__s32 vcpu_filter;	/* -1: all */
	struct key_prev_index index;	/* entry -> its slot in prev */
	struct key_stats *prev;	/* each entry as the last sample read it */
	__u32 nr_prev, cap_prev;
	struct row_table cum;	/* since the start */
};

/* No table until map_fd, slots_fd and free_fd are set (-1: none). */
void key_rows_init(struct key_rows *kr, int map_fd, enum group_by by, __s32 vcpu_filter);
void key_rows_free(struct key_rows *kr);
/*
 * Reads the table: what changed since the last call into out (reset first; NULL: into cum
 * only) and into kr->cum. 0, -ENOMEM, or a failed read's -errno.
 */
int key_rows_sample(struct key_rows *kr, struct row_table *out);
/*
 * Forgets the guests gone(ctx, tgid, start) says are over (ended for long enough that the
 * samples since read their last exits): their entries leave the kernel's table, so that a
 * run of months keeps room (--max-keys) for the guests that come, and their copies leave kr;
 * their rows leave kr->cum too with drop_rows (serve: their series are gone), else stay (a
 * summary still has them). 0, or -ENOMEM with kr unchanged (the kernel's entries may be gone
 * already: their last counts are in cum).
 */
int key_rows_forget(struct key_rows *kr, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		    void *ctx, bool drop_rows);
/* The row key of an entry's exits grouped by `by` (vCPU from the cell's identity). */
void key_row_key(const struct key_id *id, const struct key_stats *st, enum group_by by,
		 struct row_key *k);
/* An entry's growth from prev to now as a row (min and max from its buckets when partial). */
void key_delta_row(struct row *d, const struct key_stats *now, const struct key_stats *prev);

#endif /* VMEXIT_KEY_ROWS_H */
