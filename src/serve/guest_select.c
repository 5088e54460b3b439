// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "guest_select.h"

enum guest_pick guest_select_pick(const struct guest_select *s, __u32 tgid, const char *name)
{
	char pid[16];

	for (int i = 0; i < s->nr_pids; i++)
		if ((__u32)s->pids[i] == tgid)
			return GUEST_WANTED;
	if (name)
		for (int i = 0; i < s->nr_names; i++)
			if (!strcmp(name, s->names[i]))
				return GUEST_WANTED;
	snprintf(pid, sizeof(pid), "%u", tgid);
	return !name || !strcmp(name, pid) ? GUEST_UNKNOWN : GUEST_UNWANTED;
}
