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
	int map_fd;		/* the key table */
	enum group_by by;
	__s32 vcpu_filter;	/* -1: all */
	struct key_prev_index index;	/* entry -> its slot in prev */
	struct key_stats *prev;	/* each entry as the last sample read it */
	__u32 nr_prev, cap_prev;
	struct row_table cum;	/* since the start */
};

void key_rows_init(struct key_rows *kr, int map_fd, enum group_by by, __s32 vcpu_filter);
void key_rows_free(struct key_rows *kr);
/*
 * Reads the table: what changed since the last call into out (reset first; NULL: into cum
 * only) and into kr->cum. 0, -ENOMEM, or a failed read's -errno.
 */
int key_rows_sample(struct key_rows *kr, struct row_table *out);
/* The row key of an entry's exits grouped by `by` (vCPU from the cell's identity). */
void key_row_key(const struct key_id *id, const struct key_stats *st, enum group_by by,
		 struct row_key *k);
/* An entry's growth from prev to now as a row (min and max from its buckets when partial). */
void key_delta_row(struct row *d, const struct key_stats *now, const struct key_stats *prev);

#endif /* VMEXIT_KEY_ROWS_H */
