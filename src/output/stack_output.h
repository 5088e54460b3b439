/* SPDX-License-Identifier: GPL-2.0 */
/* --stacks output: a table of the top stacks per guest and reason, folded lines, JSON. */
#ifndef VMEXIT_STACK_OUTPUT_H
#define VMEXIT_STACK_OUTPUT_H

#include <stdio.h>
#include "stack_table.h"

/* Stacks shown per guest and reason in the table. */
#define STACKS_TOP	5

/* A guest's name for a row (name_cache_get_at() live; the record's names offline). */
typedef const char *stack_guest_fn(void *ctx, __u32 tgid, __u64 proc_start);

struct stack_view {
	stack_guest_fn *guest;
	void *ctx;
	__u64 unit_ns;		/* as stat's -u: 0 scales each duration */
};

/* The table (t sorted by stack_table_sort()). */
void stacks_print_table(const struct stack_view *v, const struct stack_table *t, FILE *f);
/*
 * One line per row, "guest;reason;outermost;...;innermost NS": the input flamegraph.pl and
 * speedscope read. ';' and blanks in a guest's name read as '_'.
 */
void stacks_print_folded(const struct stack_view *v, const struct stack_table *t, FILE *f);
/* ,"stacks":[{"pid","guest","isa","reason","frames":[...],"ns","count"}...] */
void stacks_print_json(const struct stack_view *v, const struct stack_table *t, FILE *f);

#endif /* VMEXIT_STACK_OUTPUT_H */
