// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include "tracefs.h"

const char *tracefs_dir(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	struct stat st;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char p[64];

		snprintf(p, sizeof(p), "%s/events", dirs[i]);
		if (!stat(p, &st))
			return dirs[i];
	}
	return NULL;
}

bool tracepoint_exists(const char *name)
{
	const char *tfs = tracefs_dir();
	char p[160];

	if (!tfs)
		return false;
	snprintf(p, sizeof(p), "%s/events/%s", tfs, name);
	return access(p, F_OK) == 0;
}
