/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-event output options stream and report share (input: struct evout_opts): which
 * format (event_output.h), and its file. The options are EVOUT_FORMATS' (each format's line
 * names its option), with --perfetto-format.
 */
#ifndef VMEXIT_EVENT_OUTPUT_OPTIONS_H
#define VMEXIT_EVENT_OUTPUT_OPTIONS_H

#include <argp.h>
#include "event_output.h"

struct cmd_options;

/* Every format's option (--format FILE, --json, --perfetto FILE): stream's; at most one. */
extern const struct cmd_options evout_options;
/* The same but --json, for report, whose --json is its summary view's (with --events, per
 * event): report sets arg[EVOUT_JSON] and calls evout_opts_check() itself. */
extern const struct cmd_options evout_file_options;

/* At most one format asked for (argp_error otherwise); sets o->mode to it. */
void evout_opts_check(struct evout_opts *o, struct argp_state *state);
/* The option that chooses format m: "--json". */
const char *evout_option_name(enum evout_mode m);

#endif /* VMEXIT_EVENT_OUTPUT_OPTIONS_H */
