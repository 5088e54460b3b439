/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbol tables as System.map and /proc/kallsyms write them ("ADDRESS TYPE NAME" and, in
 * kallsyms, "\t[MODULE]"): the host's own (kallsyms.h) and a guest's (guest_symbols.h). Only
 * code symbols (types t, T, w, W) are kept: the addresses looked up are instruction pointers.
 *
 *	struct symbol_map *m = symbol_map_load("System.map", err, sizeof(err));
 *	symbol_map_lookup(m, 0xffffffff81234567, buf, sizeof(buf));	// "do_idle+0x27"
 *	symbol_map_free(m);
 */
#ifndef VMEXIT_SYMBOL_MAP_H
#define VMEXIT_SYMBOL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

struct symbol_map;

/*
 * Reads path. NULL on failure with one line in err: "PATH:LINE:COLUMN: what" for a line that
 * does not parse, "PATH: why" when it cannot be read or holds no code symbol.
 */
struct symbol_map *symbol_map_load(const char *path, char *err, size_t errlen);
/* The same from an open stream; name is what messages call it. */
struct symbol_map *symbol_map_read(FILE *f, const char *name, char *err, size_t errlen);
/*
 * addr as "symbol+0xOFF" ("symbol" at offset 0; a module's symbols without the module) in buf.
 * false (buf "0xADDR") when no symbol covers it: below the first, or past the last by more
 * than a symbol plausibly spans.
 */
bool symbol_map_lookup(const struct symbol_map *m, __u64 addr, char *buf, size_t len);
/* Code symbols kept. */
size_t symbol_map_size(const struct symbol_map *m);
/* True when every address read was 0 (kallsyms read without CAP_SYSLOG / kptr_restrict). */
bool symbol_map_hidden(const struct symbol_map *m);
void symbol_map_free(struct symbol_map *m);

#endif /* VMEXIT_SYMBOL_MAP_H */
