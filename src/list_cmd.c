// SPDX-License-Identifier: GPL-2.0
/* vmexit list [reasons|guests]: what -r and -g accept. */
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "out_write.h"
#include "proc_names.h"
#include "reasons.h"

int cmd_list(int argc, char **argv)
{
	const char *what = argc < 2 ? "reasons" : argv[1];
	int err;

	if (strcmp(what, "reasons") && strcmp(what, "guests")) {
		fprintf(stderr, "vmexit: unknown list '%s': use 'vmexit list reasons' or "
			"'vmexit list guests'\n", what);
		return 2;
	}
	if (!strcmp(what, "reasons"))
		reason_list_print(stdout);
	else
		guests_list_print(stdout);
	err = out_flush(stdout);
	if (err) {
		out_write_error(!strcmp(what, "reasons") ? "the reason list" : "the guest list",
				err);
		return 1;
	}
	return 0;
}
