// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "guest_symbols.h"
#include "proc_names.h"
#include "text_escape.h"

int guest_symbols_add(struct guest_symbols *g, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	struct guest_symbol_file *f;
	struct symbol_map *m;
	char *guest;

	if (!eq || eq == arg || !eq[1]) {
		snprintf(err, errlen, "--guest-symbols '%s': expected GUEST=FILE (a guest name and "
			 "its System.map or a copy of its /proc/kallsyms)", arg);
		return -1;
	}
	m = symbol_map_load(eq + 1, err, errlen);
	if (!m)
		return -1;
	guest = strndup(arg, (size_t)(eq - arg));
	if (!guest || array_reserve(g->files, g->nr, g->cap, 4)) {
		free(guest);
		symbol_map_free(m);
		snprintf(err, errlen, "--guest-symbols: out of memory");
		return -1;
	}
	for (size_t i = 0; i < g->nr; i++) {
		if (!strcmp(g->files[i].guest, guest)) {
			free(guest);
			symbol_map_free(g->files[i].map);
			g->files[i].map = m;
			return 0;
		}
	}
	f = &g->files[g->nr++];
	f->guest = guest;
	f->map = m;
	return 0;
}

const struct symbol_map *guest_symbols_of(const struct guest_symbols *g, const char *guest)
{
	for (size_t i = 0; guest && i < g->nr; i++) {
		if (!strcmp(g->files[i].guest, guest))
			return g->files[i].map;
	}
	return NULL;
}

bool guest_symbols_lookup(const struct guest_symbols *g, const char *guest, __u64 addr, char *buf,
			  size_t len)
{
	return symbol_map_lookup(guest_symbols_of(g, guest), addr, buf, len);
}

int guest_symbols_note_absent(const struct guest_symbols *g, FILE *f)
{
	char nb[TEXT_NAME_MAX];
	int notes = 0, pid;

	for (size_t i = 0; i < g->nr; i++) {
		if (guests_find(g->files[i].guest, &pid, 1) > 0)
			continue;
		fprintf(f, "vmexit: note: --guest-symbols %s: no running guest has this name (its "
			"addresses are named if it starts)\n", text_esc(nb, g->files[i].guest));
		notes++;
	}
	return notes;
}

void guest_symbols_free(struct guest_symbols *g)
{
	for (size_t i = 0; i < g->nr; i++) {
		free(g->files[i].guest);
		symbol_map_free(g->files[i].map);
	}
	free(g->files);
	memset(g, 0, sizeof(*g));
}
