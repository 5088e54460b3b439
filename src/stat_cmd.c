// SPDX-License-Identifier: GPL-2.0
/* vmexit stat: per VM x reason counts and time-in-exit, periodic or once at the end. */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_filters.h"
#include "commands.h"
#include "sampler.h"
#include "stat_output.h"
#include "option_values.h"
#include "out_write.h"

enum { OPT_OVERHEAD = 0x200, OPT_STUCK };

struct stat_args {
	struct cli_filters filters;
	struct stat_view view;
	double interval;	/* 0: only the summary at the end */
	long count;		/* 0: until Ctrl-C / the command ends */
	bool overhead;
	__u64 stuck_ns;		/* --stuck */
	int nr_pos;
};

static const char doc[] =
"Count KVM exits per VM and reason, and how long they take.\n"
"\n"
"USAGE: vmexit stat [OPTION...] [interval [count]] [-- COMMAND [ARG...]]\n"
"\n"
"Every interval seconds (default 1 without a COMMAND) a table of the exits seen\n"
"in it; at the end (Ctrl-C, count reached, or COMMAND exited) a summary of the\n"
"whole run. With a COMMAND, only it and its children are traced.\n"
"\n"
"EXAMPLES:\n"
"    vmexit stat                         # all VMs, every second until Ctrl-C\n"
"    vmexit stat -p 4242 5 3             # one VMM pid, 5 s intervals, 3 times\n"
"    vmexit stat -g web01 --by vcpu --hist   # one guest, per vCPU, histograms\n"
"    vmexit stat -r EPT_VIOLATION,npf    # only these reasons\n"
"    vmexit stat --csv 10 1 > exits.csv  # one 10 s interval as CSV\n"
"    vmexit stat --json 2 1 | jq .       # JSON, one object per interval\n"
"    vmexit stat -- qemu-system-x86_64 ...   # trace a VMM from its start\n";

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Output:", 2 },
	{ "overhead", OPT_OVERHEAD, NULL, 0, "Add vmexit's own cost (kernel BPF run-time "
	  "statistics, on while it runs) to the summary", 2 },
	{ "stuck", OPT_STUCK, "DURATION", 0, "List exits in flight this long or longer (default "
	  "1s; e.g. 250ms)", 2 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct stat_args *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->filters;
		state->child_inputs[1] = &a->view;
		break;
	case OPT_OVERHEAD:
		a->overhead = true;
		break;
	case OPT_STUCK:
		a->stuck_ns = parse_stuck_arg(arg, state);
		break;
	case ARGP_KEY_ARG:
		if (a->nr_pos >= 2)
			return ARGP_ERR_UNKNOWN;	/* cli_filters: "use -- before a command" */
		if (a->nr_pos++ == 0)
			a->interval = parse_interval_arg(arg, state);
		else
			a->count = parse_count_arg(arg, state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp stat_argp =
	COMMAND_ARGP(options, parse_opt, "[interval [count]] [-- COMMAND...]", doc,
		     { &cli_filters_argp, 0, NULL, 0 },
		     { &stat_view_argp, 0, NULL, 2 });

/* What the last sample saw, for stat_print(). */
static struct stat_report sampled(const struct stat_args *a, struct sampler *sp)
{
	struct stat_report rep = { .rows = &sp->rows, .interval_s = sp->interval_s,
				   .elapsed_s = sp->elapsed_s, .hooks = &sp->s.hooks,
				   .overhead = sp->overhead, .inflight = sp->t.inflight,
				   .nr_inflight = sp->t.nr_inflight,
				   .now_ns = (__u64)(sp->last * 1e9), .stuck_ns = a->stuck_ns };

	memcpy(rep.lost, sp->lost, sizeof(rep.lost));
	return rep;
}

/* The last interval, unless it was printed already or saw nothing; then the whole run. */
static int print_end(struct stat_args *a, struct sampler *sp, long printed)
{
	struct stat_report rep = sampled(a, sp);
	int err;

	if (a->interval && sp->rows.nr && !(a->count && printed >= a->count)) {
		err = stat_print(&a->view, &rep, stdout);
		if (err)
			return err;
	}
	rep.rows = &sp->t.cum;
	rep.interval_s = sp->elapsed_s;
	rep.final = true;
	return stat_print(&a->view, &rep, stdout);
}

/* 0, -ENOMEM, or a failed write's -errno (said here: the run ends with status 1). */
static int run(struct stat_args *a, struct sampler *sp)
{
	struct stat_report rep;
	long printed = 0;
	int err;

	while (!(a->count && printed >= a->count) && sampler_wait(sp) == SAMPLER_DUE) {
		err = sampler_sample(sp);
		if (err)
			return err;
		rep = sampled(a, sp);
		err = stat_print(&a->view, &rep, stdout);
		if (err)
			goto write_failed;
		printed++;
	}
	err = sampler_sample(sp);
	if (err)
		return err;
	err = print_end(a, sp, printed);
	if (!err)
		return 0;
write_failed:
	out_write_error("the statistics", err);
	return err;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args a = {};
	struct sampler sp;
	int err;

	a.stuck_ns = 1000000000ull;
	a.filters.opts.command = cli_split_command(&argc, argv);
	err = argp_parse(&stat_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	if (err)
		return 2;
	if (!a.nr_pos && !a.filters.opts.command)
		a.interval = 1;
	if (sampler_open(&sp, &a.filters, &(struct sampler_opts){ .by = a.view.by,
		.interval = a.interval, .end_with_pids = true, .overhead = a.overhead }))
		return 1;
	a.view.names = &sp.names;
	a.view.split = a.filters.opts.split;
	if (a.view.fmt == OUT_TABLE && a.interval)
		fprintf(stderr, "Tracing KVM exits%s... Hit Ctrl-C to end.\n",
			a.filters.opts.command ? " of the command" : "");
	sampler_start(&sp);
	return sampler_close(&sp, run(&a, &sp));
}
