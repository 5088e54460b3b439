/* SPDX-License-Identifier: GPL-2.0 */
/* The host kernel's symbols, from /proc/kallsyms: what --stacks names frames with. */
#ifndef VMEXIT_KALLSYMS_H
#define VMEXIT_KALLSYMS_H

#include <stddef.h>
#include "symbol_map.h"

/*
 * Reads /proc/kallsyms (VMEXIT_KALLSYMS names another file, for tests). NULL with one line in
 * err when it cannot be read or its addresses are hidden (kernel.kptr_restrict).
 */
struct symbol_map *kallsyms_load(char *err, size_t errlen);

#endif /* VMEXIT_KALLSYMS_H */
