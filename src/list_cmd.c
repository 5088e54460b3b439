// SPDX-License-Identifier: GPL-2.0
/* vmexit list [reasons|guests]: what -r and -g accept. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "proc_names.h"
#include "reasons.h"

int cmd_list(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "reasons")) {
		reason_list_print(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "guests")) {
		guests_list_print(stdout);
		return 0;
	}
	fprintf(stderr, "vmexit: unknown list '%s': use 'vmexit list reasons' or "
		"'vmexit list guests'\n", argv[1]);
	return 2;
}
