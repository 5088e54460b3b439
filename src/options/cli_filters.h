/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options every tracing command shares: the filters (-p, -g, -c, -r), the Tracing group
 * (--max-cells, --split, -v, --check-hooks), and the refusal of stray arguments.
 */
#ifndef VMEXIT_CLI_FILTERS_H
#define VMEXIT_CLI_FILTERS_H

#include "filter_options.h"
#include "session.h"

struct cli_filters {
	struct session_opts opts;	/* the filters land here once parsed, guests still named */
	struct filter_options sel;	/* -p, -g, -c, -r as given */
	/* Set before parsing (serve): a -g or -p that matches no running process yet is a
	 * note, not an error, for a guest_follow to pick up when it starts. */
	bool follow;
	/* Set before parsing (serve): -g names are matched in userspace against the rows' guests
	 * (guest_select.h), so the kernel counts every VMM and neither -g nor -p filters there. */
	bool names_later;
};

/* The filters and the Tracing group; input: struct cli_filters. */
extern const struct cmd_options cli_filters_options;
/* Turns guest names into pids (now, while they run). Prints the error (with follow: a note
 * and 0); -1 on failure. */
int cli_filters_resolve(struct cli_filters *f);
/* Preflight, cli_filters_resolve(), session_open(): tracing as asked. Prints; -1 on failure. */
int cli_filters_open_session(struct cli_filters *f, struct session *s);
/*
 * In a command's end hook, once key_mode is known: --max-keys without the key table it sizes
 * is a usage error naming fix (the command's way to turn keys on; NULL: it has no table).
 */
void cli_filters_keys_check(const struct cli_filters *f, __u32 key_mode, const char *fix,
			    struct argp_state *state);
/* --key-gpa-shift without device keys (--by key, --keys): refused, naming fix. */
void cli_filters_gpa_check(const struct cli_filters *f, __u32 key_mode, const char *fix,
			   struct argp_state *state);
/*
 * Splits "... -- COMMAND ARGS" off argv before argp sees it; the command, or NULL without --
 * (a trailing -- gives an empty one, which cli_filters_options rejects).
 */
char **cli_split_command(int *argc, char **argv);

#endif /* VMEXIT_CLI_FILTERS_H */
