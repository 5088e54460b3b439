// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "cmd_options.h"
#include "guest_symbols_option.h"
#include "rip_rows.h"
#include "view_options.h"

/* --by: a grouping (vm, vcpu, reason) with or without a key kind (key, rip), in either order. */
static void stat_view_parse_by(struct stat_view *v, const char *arg, struct argp_state *state)
{
	static const char *const by[] = { [BY_VM] = "vm", [BY_VCPU] = "vcpu",
					  [BY_REASON] = "reason", [BY_REASON + 1] = "key",
					  [BY_REASON + 2] = "rip" };
	const char *comma = strchr(arg, ',');
	char first[16];
	int a, b = -1;

	snprintf(first, sizeof(first), "%.*s", comma ? (int)(comma - arg) : (int)strlen(arg), arg);
	a = parse_choice_arg(first, "--by", by, 5, state);
	if (comma)
		b = parse_choice_arg(comma + 1, "--by", by, 5, state);
	/* One grouping and at most one key: "vcpu,key", "key,vcpu", "key". */
	if (b >= 0 && (a > BY_REASON) == (b > BY_REASON))
		argp_error(state, "--by %s: combine one of vm, vcpu, reason with one of key, rip "
			   "(e.g. --by vcpu,key)", arg);
	if (a > BY_REASON) {
		int t = a;

		a = b;
		b = t;
	}
	v->by = a < 0 ? BY_VM : (enum group_by)a;
	v->key_mode = b == BY_REASON + 1 ? KEY_MODE_DEVICE :
		      b == BY_REASON + 2 ? KEY_MODE_RIP : KEY_MODE_OFF;
}

OPT_STATIC_STORE(view_by, struct stat_view);
static void view_by(const char *arg, void *to, struct argp_state *state)
{
	stat_view_parse_by(to, arg, state);
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
	{ "by", 0, "vm|vcpu|reason[,key|rip]", 0, "Rows per VM x reason (default), per vCPU, or "
	  "per reason over all VMs; with key, split by what each exit was about (port, address, "
	  "MSR, CPUID leaf, hypercall); with rip, by the exit's guest RIP", 0,
	  OPT_INPUT(struct stat_view, view_by) },
	{ "keys", 0, NULL, 0, "Split the rows by what each exit was about, as --by key (the "
	  "spelling of top, record, stream and serve; --by key stays)", 0,
	  OPT_TO(struct stat_view, asked_keys, opt_true) },
	{ "per-address", 0, NULL, 0, "With --keys: a row per port and MMIO address, rather than "
	  "per device (the region QEMU's map names with --qmp; without a map, MMIO per 4 KiB "
	  "page or built-in window, ports one each)", 0,
	  OPT_TO(struct stat_view, per_address, opt_true) },
	{ "guest-symbols", 0, "GUEST=FILE", 0, "With --by rip: name GUEST's RIPs symbol+offset "
	  "from FILE, its System.map or a copy of its /proc/kallsyms (repeatable)", 0,
	  OPT_TO(struct stat_view, syms, opt_guest_symbols) },
	{ "top", 0, "N", 0, "With --by rip: the N RIPs of each guest and reason with the most "
	  "exits (by --sort), the rest summed as (other) (default 10)", 0,
	  OPT_TO(struct stat_view, top, opt_top) },
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
	struct stat_view *v = input;

	opt_exclusive(state, v->asked_csv, "--csv", v->asked_json, "--json");
	opt_exclusive(state, v->asked_csv, "--csv", v->hist, "--hist");
	if (v->asked_keys && v->key_mode == KEY_MODE_RIP)
		argp_error(state, "--keys and --by rip: one key kind at a time (drop one)");
	if (v->asked_keys)
		v->key_mode = KEY_MODE_DEVICE;
	if (v->per_address && v->key_mode != KEY_MODE_DEVICE)
		argp_error(state, "--per-address is an option of --keys (add --keys)");
	if (v->key_mode != KEY_MODE_RIP && (v->syms.nr || v->top))
		argp_error(state, "%s is an option of --by rip (add --by rip)",
			   v->syms.nr ? "--guest-symbols" : "--top");
	if (!v->top)
		v->top = RIP_TOP_DEFAULT;
}

const struct cmd_options stat_view_options = { .options = view_options, .end = view_check };
