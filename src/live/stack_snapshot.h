/* SPDX-License-Identifier: GPL-2.0 */
/* --stacks at the end of a run that does not sample (record): the kernel's table, read once. */
#ifndef VMEXIT_STACK_SNAPSHOT_H
#define VMEXIT_STACK_SNAPSHOT_H

#include "session.h"
#include "stack_table.h"

/*
 * The session's stack table into t, sorted, its frames named from this kernel's kallsyms (a
 * note on stderr when they cannot be: addresses then). A table not read whole is said, and
 * what was read is kept. 0, or stack_read()'s error.
 */
int stack_snapshot(struct session *s, struct stack_table *t);

#endif /* VMEXIT_STACK_SNAPSHOT_H */
