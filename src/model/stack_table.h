/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --stacks' rows: off-CPU time during exits per (guest, reason, kernel stack), frames already
 * named, as the kernel gave them (stack_read.c) or a record file kept them.
 */
#ifndef VMEXIT_STACK_TABLE_H
#define VMEXIT_STACK_TABLE_H

#include <stddef.h>
#include <linux/types.h>

struct stack_row {
	__u32 tgid;
	__u32 isa;
	__u32 reason;
	__u32 nr_frames;
	__u64 proc_start;	/* cell_key.proc_start: names the guest */
	__u64 ns;		/* off CPU (blocked and runq) with this stack */
	__u64 count;		/* periods off CPU */
	char **frames;		/* "symbol+0xoff", innermost first */
};

struct stack_table {
	struct stack_row *rows;
	size_t nr, cap;
};

/* Adds a copy of r (its frames too). 0 or -ENOMEM. */
int stack_table_add(struct stack_table *t, const struct stack_row *r);
/* Most time first; equal times by count, then by guest and reason. */
void stack_table_sort(struct stack_table *t);
void stack_table_free(struct stack_table *t);

#endif /* VMEXIT_STACK_TABLE_H */
