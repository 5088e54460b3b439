/* SPDX-License-Identifier: GPL-2.0 */
/* --stacks: the kernel's (guest, reason, stack) table read into rows, frames named. */
#ifndef VMEXIT_STACK_READ_H
#define VMEXIT_STACK_READ_H

#include "session.h"
#include "stack_table.h"
#include "symbol_map.h"

/*
 * Appends every (guest, reason, stack) the session's kernel side charged so far to t, frames
 * named from ksyms (NULL: raw addresses). 0, or -errno (said on stderr).
 */
int stack_read(struct session *s, const struct symbol_map *ksyms, struct stack_table *t);

#endif /* VMEXIT_STACK_READ_H */
