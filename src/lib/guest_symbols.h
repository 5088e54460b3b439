/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --guest-symbols GUEST=FILE: a guest kernel's symbols (its System.map, or a copy of its
 * /proc/kallsyms), to name guest addresses such as an exit's RIP:
 *
 *	struct guest_symbols g = {};
 *	if (guest_symbols_add(&g, "web01=System.map", err, sizeof(err)))	// a bad file:
 *		fprintf(stderr, "vmexit: %s\n", err);	// "System.map:12:1: expected ..."
 *	guest_symbols_lookup(&g, "web01", rip, buf, sizeof(buf));	// "native_safe_halt+0x6"
 *	guest_symbols_free(&g);
 */
#ifndef VMEXIT_GUEST_SYMBOLS_H
#define VMEXIT_GUEST_SYMBOLS_H

#include <stdbool.h>
#include <stdio.h>
#include "symbol_map.h"

struct guest_symbol_file {
	char *guest;
	struct symbol_map *map;
};

struct guest_symbols {
	struct guest_symbol_file *files;
	size_t nr, cap;
};

/*
 * arg is "GUEST=FILE": loads FILE for GUEST (a later one for the same guest replaces it).
 * 0, or -1 with one line in err naming the argument or FILE:LINE:COLUMN and the fix.
 */
int guest_symbols_add(struct guest_symbols *g, const char *arg, char *err, size_t errlen);
/* GUEST's table, or NULL. */
const struct symbol_map *guest_symbols_of(const struct guest_symbols *g, const char *guest);
/* addr in guest as symbol+offset into buf; false (buf "0xADDR") without a table or symbol. */
bool guest_symbols_lookup(const struct guest_symbols *g, const char *guest, __u64 addr, char *buf,
			  size_t len);
/*
 * Live commands: a note on f for each guest named that no running process is (its addresses
 * are named if it starts; likely a typo otherwise). Returns how many notes.
 */
int guest_symbols_note_absent(const struct guest_symbols *g, FILE *f);
void guest_symbols_free(struct guest_symbols *g);

#endif /* VMEXIT_GUEST_SYMBOLS_H */
