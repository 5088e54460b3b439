/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter options: -p, -g, -c, -r (and --min-latency where a command offers it) as given,
 * for live tracing (cli_filters.c, applied in the kernel) and for report (matched against a
 * recording). No live-session types here: report includes this.
 */
#ifndef VMEXIT_FILTER_OPTIONS_H
#define VMEXIT_FILTER_OPTIONS_H

#include <argp.h>
#include "event_rows.h"

#define MAX_GUEST_NAMES	16

/* Key of --min-latency in a filter group (live tracing has it in its own group). */
#define FILTER_OPT_MIN_LATENCY	0x180

struct filter_options {
	struct event_filter f;		/* -p, -c, -r, --min-latency */
	const char *guests[MAX_GUEST_NAMES];	/* -g, as given: names still to match */
	int nr_guests;
};

/* The help entries of -p, -g, -c and -r under a group header: one list for every command. */
#define FILTER_OPTIONS(header, guest_doc, group)                                             \
	{ NULL, 0, NULL, 0, header, group },                                                  \
	{ "pid", 'p', "PID", 0, "Only this VMM process (repeatable)", group },                \
	{ "guest", 'g', "NAME", 0, guest_doc, group },                                        \
	{ "vcpu", 'c', "N", 0, "Only this vCPU", group },                                     \
	{ "reason", 'r', "LIST", 0, "Only these exit reasons: names or numbers, comma-separated " \
	  "(svm:npf, vmx:48, IO)", group }

/*
 * Parses one of -p, -g, -c, -r, FILTER_OPT_MIN_LATENCY into fo (a bad value: argp_error());
 * ARGP_KEY_INIT selects every vCPU. ARGP_ERR_UNKNOWN for any other key.
 */
error_t filter_options_parse(int key, char *arg, struct argp_state *state,
			     struct filter_options *fo);

#endif /* VMEXIT_FILTER_OPTIONS_H */
