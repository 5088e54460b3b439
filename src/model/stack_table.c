// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "stack_table.h"

static void row_free(struct stack_row *r)
{
	for (__u32 i = 0; r->frames && i < r->nr_frames; i++)
		free(r->frames[i]);
	free(r->frames);
}

int stack_table_add(struct stack_table *t, const struct stack_row *r)
{
	struct stack_row c = *r;

	if (array_reserve(t->rows, t->nr, t->cap, 64))
		return -ENOMEM;
	c.frames = calloc(r->nr_frames ? r->nr_frames : 1, sizeof(*c.frames));
	if (!c.frames)
		return -ENOMEM;
	for (__u32 i = 0; i < r->nr_frames; i++) {
		c.frames[i] = strdup(r->frames[i]);
		if (!c.frames[i]) {
			row_free(&c);
			return -ENOMEM;
		}
	}
	t->rows[t->nr++] = c;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct stack_row *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->reason != y->reason)
		return x->reason < y->reason ? -1 : 1;
	return (x->isa > y->isa) - (x->isa < y->isa);
}

void stack_table_sort(struct stack_table *t)
{
	if (t->nr)
		qsort(t->rows, t->nr, sizeof(*t->rows), cmp_row);
}

void stack_table_free(struct stack_table *t)
{
	for (size_t i = 0; i < t->nr; i++)
		row_free(&t->rows[i]);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
