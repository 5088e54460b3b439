// SPDX-License-Identifier: GPL-2.0
/* vmexit list [reasons|guests]: what -r and -g accept. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "commands.h"
#include "out_write.h"
#include "proc_names.h"
#include "reasons.h"

static const char usage[] =
	"Usage: vmexit list [reasons|guests]\n"
	"List the exit reason names -r accepts (reasons, the default) or the running guests -g\n"
	"accepts (guests). Without root, other users' processes cannot be checked for an open\n"
	"/dev/kvm: list guests says so and exits with status 1.\n";

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "-?");
}

int cmd_list(int argc, char **argv)
{
	const char *what = argc < 2 ? "reasons" : argv[1];
	bool incomplete = false;
	int err = 0;

	for (int i = 1; i < argc; i++) {
		if (is_help(argv[i])) {
			fputs(usage, stdout);
			err = out_flush(stdout);
			if (err)
				out_write_error("the usage", err);
			return err ? 1 : 0;
		}
	}
	if (strcmp(what, "reasons") && strcmp(what, "guests")) {
		fprintf(stderr, "vmexit: unknown list '%s': use 'vmexit list reasons' or "
			"'vmexit list guests'\n", what);
		return 2;
	}
	/* A typo'd extra word must not pass for a filter that was applied. */
	if (argc > 2) {
		fprintf(stderr, "vmexit list: unexpected argument '%s': use 'vmexit list %s'\n",
			argv[2], what);
		return 2;
	}
	if (!strcmp(what, "reasons"))
		err = reason_list_print(stdout);
	else
		incomplete = guests_list_print(stdout) != 0;
	if (!err)
		err = out_flush(stdout);
	if (err) {
		out_write_error(!strcmp(what, "reasons") ? "the reason list" : "the guest list",
				err);
		return 1;
	}
	/* A list that may miss guests (said on stderr) is not a success. */
	return incomplete ? 1 : 0;
}
