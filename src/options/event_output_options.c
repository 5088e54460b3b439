// SPDX-License-Identifier: GPL-2.0
#include "cmd_options.h"
#include "event_output_options.h"
#include "option_values.h"

/* A format's option without an argument: given is all it says. */
OPT_STATIC_STORE(opt_given, const char *);
static void opt_given(const char *arg, void *to, struct argp_state *state)
{
	(void)arg, (void)state;
	*(const char **)to = "";
}

/* Each format's option, from its line in EVOUT_FORMATS, then the options of one format. */
#define EVOUT_OPTION(M, name, option, ARG, help)					\
	{ option, 0, ARG, 0, help, 0, .store = ARG ? opt_string : opt_given,		\
	  .offset = offsetof(struct evout_opts, arg[EVOUT_##M]) },

static const struct cmd_option options[] = {
	EVOUT_FORMATS(EVOUT_OPTION)
	{ "perfetto-format", 0, "proto|json", 0, "The --perfetto trace's format, whatever "
	  "FILE's name", 0, OPT_TO(struct evout_opts, perfetto_format, opt_perfetto_format) },
	{},
};

/*
 * report's: all but --json (its --json is the summary's, or with --events the JSON format's),
 * taken from options[] at start.
 */
static struct cmd_option report_options[EVOUT_NR + 2];

__attribute__((constructor)) static void report_options_pick(void)
{
	size_t n = 0;

	for (const struct cmd_option *o = options; o->name; o++) {
		if (o->offset != offsetof(struct evout_opts, arg[EVOUT_JSON]))
			report_options[n++] = *o;
	}
}

static const char *const option[] = {
#define EVOUT_OPTION_NAME(M, name, opt, ...) [EVOUT_##M] = "--" opt,
	EVOUT_FORMATS(EVOUT_OPTION_NAME)
#undef EVOUT_OPTION_NAME
};

const char *evout_option_name(enum evout_mode m)
{
	return option[m];
}

void evout_opts_check(struct evout_opts *o, struct argp_state *state)
{
	o->mode = EVOUT_LINES;
	for (int i = 0; i < EVOUT_NR; i++) {
		for (int j = i + 1; j < EVOUT_NR; j++)
			opt_exclusive(state, o->arg[i], option[i], o->arg[j], option[j]);
		if (o->arg[i])
			o->mode = i;
	}
	if (o->perfetto_format && !o->arg[EVOUT_PERFETTO])
		argp_error(state, "--perfetto-format is the format of --perfetto FILE: give both");
}

static void check(void *input, struct argp_state *state)
{
	evout_opts_check(input, state);
}

const struct cmd_options evout_options = { .options = options, .end = check };
const struct cmd_options evout_file_options = { .options = report_options };
