// SPDX-License-Identifier: GPL-2.0
#include "cmd_options.h"
#include "event_output_options.h"
#include "option_values.h"

OPT_STATIC_STORE(opt_json, struct evout_opts);
static void opt_json(const char *arg, void *to, struct argp_state *state)
{
	(void)arg, (void)state;
	((struct evout_opts *)to)->json = true;
}

/* The per-event formats given a file: lines rendered from rules, a trace written to one. */
#define EVOUT_FILE_OPTIONS(grp)                                                               \
	{ "format", 0, "FILE", 0, "One line per exit, rendered with the rules in FILE "        \
	  "(docs/formats.md)", grp, OPT_TO(struct evout_opts, format_path, opt_string) },      \
	{ "perfetto", 0, "FILE", 0, "Write a Perfetto trace to FILE (- for standard output) "  \
	  "instead of lines: protobuf if FILE ends in .pftrace, else Chrome JSON", grp,         \
	  OPT_TO(struct evout_opts, perfetto_path, opt_string) },                               \
	{ "perfetto-format", 0, "proto|json", 0, "The --perfetto trace's format, whatever "    \
	  "FILE's name", grp, OPT_TO(struct evout_opts, perfetto_format, opt_perfetto_format) }

static const struct cmd_option options[] = {
	EVOUT_FILE_OPTIONS(0),
	{ "json", 0, NULL, 0, "One JSON object per exit, one per line", 0,
	  OPT_INPUT(struct evout_opts, opt_json) },
	{},
};

static const struct cmd_option file_options[] = {
	EVOUT_FILE_OPTIONS(0),
	{},
};

void evout_opts_check(struct evout_opts *o, struct argp_state *state)
{
	opt_exclusive(state, o->format_path, "--format", o->json, "--json");
	opt_exclusive(state, o->format_path, "--format", o->perfetto_path, "--perfetto");
	opt_exclusive(state, o->json, "--json", o->perfetto_path, "--perfetto");
	if (o->perfetto_format && !o->perfetto_path)
		argp_error(state, "--perfetto-format is the format of --perfetto FILE: give both");
	if (o->perfetto_path)
		o->mode = EVOUT_PERFETTO;
	else if (o->json)
		o->mode = EVOUT_JSON;
	else
		o->mode = EVOUT_LINES;
}

static void check(void *input, struct argp_state *state)
{
	evout_opts_check(input, state);
}

const struct cmd_options evout_options = { .options = options, .end = check };
const struct cmd_options evout_file_options = { .options = file_options };
