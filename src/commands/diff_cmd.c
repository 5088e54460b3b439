// SPDX-License-Identifier: GPL-2.0
/* vmexit diff BEFORE AFTER: what changed between two runs, ranked by what it costs the guest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "commands.h"
#include "diff_output.h"
#include "option_values.h"
#include "cmd_options.h"
#include "out_write.h"
#include "run_diff.h"
#include "lost_causes.h"
#include "run_load.h"

static const char doc[] =
"Compare two runs: per guest (matched by name; --all: every guest summed), exit\n"
"reason and, where both runs have them, key and vCPU: exits per second of guest\n"
"time, the share of vCPU time in exits, p50 and p99, before and after, the\n"
"change, and whether it is significant. Rows are ranked by what the change\n"
"costs the guest: the change in exit time per second of guest time (COST us/s).\n"
"\n"
"USAGE: vmexit diff BEFORE AFTER [OPTION...]\n"
"\n"
"BEFORE and AFTER: anything `vmexit report` reads (a recording, a trace.dat, a\n"
"perf.data) or `vmexit stat --json` output (with --hist for the latency test,\n"
"--by vcpu or --by key for those rows). Guest time is the run's span times the\n"
"guest's vCPUs. With --per-run (two runs of one fixed job: a benchmark, a\n"
"test's exact mix of exits) exits and their time are compared per run: a run\n"
"that is slower as a whole (a loaded or emulated host) then shows no change in\n"
"how many exits its job makes, only in their latencies.\n"
"\n"
"Significance: counts are compared as rates with the conditional binomial test\n"
"(given both runs' exits, the after run's share is binomial with its share of\n"
"the time), latencies as distributions with a chi-square test on the\n"
"histograms' buckets (merged until each expects 5 exits). Holm's correction\n"
"over every test of the diff holds the chance of calling any row of two runs of\n"
"one workload different at --alpha (default 0.01); a change must also be at\n"
"least --min-change (default 10 %) of the before value: of the rate, or of the\n"
"median latency.\n"
"\n"
"Exit status: 0 no significant difference, 1 some, 2 usage or an unreadable\n"
"file (as diff(1)).\n"
"\n"
"EXAMPLES:\n"
"    vmexit diff old.vmexit new.vmexit        # the ranked table\n"
"    vmexit diff old.vmexit new.vmexit --json  # for scripts\n"
"    vmexit diff before.json after.json       # vmexit stat --json --hist files\n"
"    vmexit diff a.dat b.dat --all --csv      # trace.dat captures, guests summed\n"
"    vmexit diff a.vmexit b.vmexit --folded | difffolded.pl | flamegraph.pl\n";

struct diff_args {
	const char *path[2];
	bool all, csv, json, folded, per_run;
	double alpha, min_change;
};

OPT_STATIC_STORE(opt_alpha, double);
static void opt_alpha(const char *arg, void *to, struct argp_state *state)
{
	double v;

	if (!strict_double(arg, &v) || !(v > 0 && v < 1))
		argp_error(state, "--alpha %s: give a false-positive level between 0 and 1 (e.g. "
			   "0.01)", arg);
	*(double *)to = v;
}

/* --min-change 10% or 10: a percentage of the before value. */
OPT_STATIC_STORE(opt_min_change, double);
static void opt_min_change(const char *arg, void *to, struct argp_state *state)
{
	char buf[64];
	size_t n = strlen(arg);
	double v;

	snprintf(buf, sizeof(buf), "%.*s", (int)(n && arg[n - 1] == '%' ? n - 1 : n), arg);
	if (!strict_double(buf, &v) || v < 0 || v > 1e6)
		argp_error(state, "--min-change %s: give a percentage (e.g. 10%%)", arg);
	*(double *)to = v / 100;
}

static const struct cmd_option options[] = {
	{ "all", 0, NULL, 0, "Every guest summed, whatever its name (runs of differently named "
	  "guests)", 0, OPT_TO(struct diff_args, all, opt_true) },
	{ "alpha", 0, "P", 0, "Family-wise false-positive level of the tests (default 0.01)", 0,
	  OPT_TO(struct diff_args, alpha, opt_alpha) },
	{ "min-change", 0, "PERCENT", 0, "Smallest change called a difference, relative to "
	  "before (default 10%)", 0, OPT_TO(struct diff_args, min_change, opt_min_change) },
	{ "per-run", 0, NULL, 0, "Both runs did one fixed job (a benchmark): compare exits and "
	  "their time per run, not per second of guest time", 0,
	  OPT_TO(struct diff_args, per_run, opt_true) },
	{ "csv", 0, NULL, 0, "CSV rows", 1, OPT_TO(struct diff_args, csv, opt_true) },
	{ "json", 0, NULL, 0, "One JSON object", 1, OPT_TO(struct diff_args, json, opt_true) },
	{ "folded", 0, NULL, 0, "The kernel stacks of the blocked time (recorded with --split "
	  "--stacks) as 'guest;reason;frame;...;frame BEFORE_NS AFTER_NS' lines (difffolded.pl)",
	  1, OPT_TO(struct diff_args, folded, opt_true) },
	{},
};

static error_t one_arg(const char *arg, void *input, struct argp_state *state)
{
	struct diff_args *a = input;

	(void)state;
	if (a->path[1])
		return ARGP_ERR_UNKNOWN;
	a->path[a->path[0] ? 1 : 0] = arg;
	return 0;
}

static void check(void *input, struct argp_state *state)
{
	struct diff_args *a = input;

	if (!a->path[1])
		argp_error(state, "give two runs: vmexit diff BEFORE AFTER");
	opt_exclusive(state, a->csv, "--csv", a->json, "--json");
	if (a->folded && (a->csv || a->json))
		argp_error(state, "--folded prints only the stacks: drop --csv and --json");
}

static void init(void *input)
{
	struct diff_args *a = input;

	a->alpha = DIFF_ALPHA_DEFAULT;
	a->min_change = DIFF_MIN_CHANGE_DEFAULT;
}

static const struct cmd_options diff_options = {
	.options = options, .init = init, .arg = one_arg, .end = check, .unexpected = "",
	.args_doc = "BEFORE AFTER", .doc = doc,
};

static int load(const char *path, struct run_profile *p, bool all)
{
	struct run_load_info info;
	char err[512];

	run_profile_init(p, all);
	if (run_load(path, p, &info, err, sizeof(err))) {
		fprintf(stderr, "vmexit: %s\n", err);
		return -1;
	}
	for (int i = 0; i < NR_LOST; i++) {
		if (info.lost[i])
			fprintf(stderr, "vmexit: note: %s: %llu lost (%s): its figures miss those\n",
				path, (unsigned long long)info.lost[i], lost_cause_key(i));
	}
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a = {};
	struct run_profile p[2] = {};
	struct run_diff d = {};
	int rc = 2, err;

	if (cmd_options_parse(&diff_options, argc, argv, 0, &a))
		return 2;
	if (load(a.path[0], &p[0], a.all) || load(a.path[1], &p[1], a.all))
		goto out;
	if (a.folded) {
		if (!p[0].nr_stacks && !p[1].nr_stacks) {
			fprintf(stderr, "vmexit: --folded: neither %s nor %s holds stacks (record "
				"with vmexit record --split --stacks)\n", a.path[0], a.path[1]);
			goto out;
		}
		err = diff_print_folded(&p[0], &p[1], stdout);
		if (err)
			out_write_error("the stacks", err);
		rc = err ? 2 : 0;
		goto out;
	}
	if (run_diff_build(&p[0], &p[1], &(struct diff_opts){ a.alpha, a.min_change, a.per_run },
			   &d)) {
		fprintf(stderr, "vmexit: diff: out of memory\n");
		goto out;
	}
	if (!a.all && !d.nr && d.nr_only)
		fprintf(stderr, "vmexit: note: no guest name is in both runs: --all compares "
			"them summed\n");
	err = diff_print(a.json ? OUT_JSON : a.csv ? OUT_CSV : OUT_TABLE, &d,
			 &(struct diff_source){ a.path[0], &p[0] },
			 &(struct diff_source){ a.path[1], &p[1] }, stdout);
	if (err) {
		out_write_error("the diff", err);
		goto out;
	}
	rc = d.nr_sig ? 1 : 0;
out:
	run_diff_free(&d);
	run_profile_free(&p[0]);
	run_profile_free(&p[1]);
	return rc;
}
