// SPDX-License-Identifier: GPL-2.0
/* A live thread's process, read from /proc (thread_group.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "thread_group.h"

int thread_group_of(__u32 tid, const char *comm, __u32 *tgid)
{
	char path[48], line[256];
	bool named = false;
	long group = -1;
	FILE *f;

	if (!tid || !comm || !*comm)
		return -ENOENT;
	/* /proc/TID reaches any thread by its id, though /proc lists processes only. */
	snprintf(path, sizeof(path), "/proc/%u/status", tid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Name:\t", 6)) {
			line[strcspn(line, "\n")] = 0;
			/* The kernel escapes backslashes and control whitespace here: a name with
			 * those matches no capture's, and the thread keeps its own id. */
			named = !strcmp(line + 6, comm);
		} else if (!strncmp(line, "Tgid:\t", 6)) {
			group = strtol(line + 6, NULL, 10);
		}
	}
	fclose(f);
	if (!named)
		return -ENOENT;
	if (group <= 0)
		return -EINVAL;
	*tgid = (__u32)group;
	return 0;
}
