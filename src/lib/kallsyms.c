// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>
#include "kallsyms.h"

struct symbol_map *kallsyms_load(char *err, size_t errlen)
{
	const char *path = getenv("VMEXIT_KALLSYMS");
	struct symbol_map *m;

	if (!path || !*path)
		path = "/proc/kallsyms";
	m = symbol_map_load(path, err, errlen);
	if (m && symbol_map_hidden(m)) {
		/* Without CAP_SYSLOG (or with kptr_restrict=2) every address reads as 0. */
		snprintf(err, errlen, "%s: every address reads as 0 (kernel.kptr_restrict): frames "
			 "stay raw addresses; run as root with kptr_restrict 0 or 1", path);
		symbol_map_free(m);
		return NULL;
	}
	return m;
}
