// SPDX-License-Identifier: GPL-2.0
#include "cmd_options.h"
#include "view_options.h"

OPT_STATIC_STORE(view_by, enum group_by);
static void view_by(const char *arg, void *to, struct argp_state *state)
{
	static const char *const by[] = { [BY_VM] = "vm", [BY_VCPU] = "vcpu",
					  [BY_REASON] = "reason" };

	*(enum group_by *)to = parse_choice_arg(arg, "--by", by, 3, state);
}

OPT_STATIC_STORE(view_units, __u64);
static void view_units(const char *arg, void *to, struct argp_state *state)
{
	static const char *const names[] = { "ns", "us", "ms" };
	static const __u64 ns[] = { 1, 1000, 1000000 };

	*(__u64 *)to = ns[parse_choice_arg(arg, "--units", names, 3, state)];
}

OPT_STATIC_STORE(view_sort, enum sort_key);
static void view_sort(const char *arg, void *to, struct argp_state *state)
{
	static const char *const sort[] = { [SORT_COUNT] = "count", [SORT_TIME] = "time",
					    [SORT_MAX] = "max", [SORT_P99] = "p99" };

	*(enum sort_key *)to = parse_choice_arg(arg, "--sort", sort, 4, state);
}

/* --csv and --json: the format, and that it was asked for (report sorts out the rest). */
static void set_format(struct stat_view *v, enum out_format fmt)
{
	v->fmt = fmt;
	v->asked_csv |= fmt == OUT_CSV;
	v->asked_json |= fmt == OUT_JSON;
}

OPT_STATIC_STORE(view_csv, struct stat_view);
static void view_csv(const char *arg, void *to, struct argp_state *state)
{
	(void)arg, (void)state;
	set_format(to, OUT_CSV);
}

OPT_STATIC_STORE(view_json, struct stat_view);
static void view_json(const char *arg, void *to, struct argp_state *state)
{
	(void)arg, (void)state;
	set_format(to, OUT_JSON);
}

static const struct cmd_option view_options[] = {
	{ "by", 0, "vm|vcpu|reason", 0, "Rows per VM x reason (default), per vCPU, or per "
	  "reason over all VMs", 0, OPT_TO(struct stat_view, by, view_by) },
	{ "sort", 's', "count|time|max|p99", 0, "Row order (default count)", 0,
	  OPT_TO(struct stat_view, sort, view_sort) },
	{ "csv", 0, NULL, 0, "CSV with a header row", 0, OPT_INPUT(struct stat_view, view_csv) },
	{ "json", 0, NULL, 0, "JSON, one object per line: per interval (report "
	  "--events: per exit)", 0, OPT_INPUT(struct stat_view, view_json) },
	{ "hist", 0, NULL, 0, "Latency histogram per row", 0,
	  OPT_TO(struct stat_view, hist, opt_true) },
	{ "units", 'u', "ns|us|ms", 0,
	  "Print durations in this unit (default: scaled; report --events: its latencies)", 0,
	  OPT_TO(struct stat_view, unit_ns, view_units) },
	{ "tsc-mhz", 0, "MHZ", 0, "Add cycle columns at this TSC frequency (report: "
	  "default the one recorded, if any)", 0, OPT_TO(struct stat_view, tsc_mhz, opt_tsc_mhz) },
	{},
};

/* One summary format; CSV has no histogram (JSON has: --json --hist is both). */
static void view_check(void *input, struct argp_state *state)
{
	const struct stat_view *v = input;

	opt_exclusive(state, v->asked_csv, "--csv", v->asked_json, "--json");
	opt_exclusive(state, v->asked_csv, "--csv", v->hist, "--hist");
}

const struct cmd_options stat_view_options = { .options = view_options, .end = view_check };
