// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "kallsyms.h"
#include "stack_read.h"
#include "stack_snapshot.h"

int stack_snapshot(struct session *s, struct stack_table *t)
{
	char err[256];
	struct symbol_map *ksyms = kallsyms_load(err, sizeof(err));
	int rc;

	if (!ksyms)
		fprintf(stderr, "vmexit: note: %s\n", err);
	rc = stack_read(s, ksyms, t);
	symbol_map_free(ksyms);
	stack_table_sort(t);
	return rc;
}
