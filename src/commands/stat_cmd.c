// SPDX-License-Identifier: GPL-2.0
/* vmexit stat: per VM x reason counts and time-in-exit, periodic or once at the end. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_filters.h"
#include "commands.h"
#include "durations.h"
#include "sampler.h"
#include "stack_options.h"
#include "stat_output.h"
#include "view_options.h"
#include "out_write.h"
#include "qmp_option.h"
#include "kvm_cross_check.h"
#include "kvm_halt_check.h"
#include "source_option.h"
#include "stat_kvm.h"
#include "stat_wake.h"

static const char doc[] =
"Count KVM exits per VM and reason, and how long they take.\n"
"\n"
"USAGE: vmexit stat [OPTION...] [interval [count]] [-- COMMAND [ARG...]]\n"
"\n"
"Every interval seconds (default 1 without a COMMAND) a table of the exits seen\n"
"in it; at the end (Ctrl-C, count reached, or COMMAND exited) a summary of the\n"
"whole run. With a COMMAND, only it and its children are traced. The rows of\n"
"a guest that ended more than --keep ago join their reason's (ended) row (pid\n"
"0), so that the summary of a long run stays exact in memory that does not grow\n"
"with every short-lived VM.\n"
"\n"
"EXAMPLES:\n"
"    vmexit stat                         # all VMs, every second until Ctrl-C\n"
"    vmexit stat -p 4242 5 3             # one VMM pid, 5 s intervals, 3 times\n"
"    vmexit stat -g web01 --by vcpu --hist   # one guest, per vCPU, histograms\n"
"    vmexit stat -r EPT_VIOLATION,npf    # only these reasons\n"
"    vmexit stat --csv 10 1 > exits.csv  # one 10 s interval as CSV\n"
"    vmexit stat --json 2 1 | jq .       # JSON, one object per interval\n"
"    vmexit stat -- qemu-system-x86_64 ...   # trace a VMM from its start\n"
"    vmexit stat --by rip --guest-symbols web01=System.map   # hot guest code\n"
"    vmexit stat --split --stacks 10 1   # blocked exits by kernel stack\n"
"    vmexit stat --split --stacks --folded 10 1 > x.folded   # flame graph\n"
"    vmexit stat --source kvm --by vcpu  # KVM's own counters, no BPF at all\n"
"    vmexit stat --kvm-check -g web01 10 1   # BPF rows against KVM's counters\n"
"    vmexit stat --keys --qmp auto       # a row per device, as QEMU names them\n"
"    vmexit stat --wake -p 4242 10 1     # interrupt delivery latency, HLT anatomy\n"
"\v" DURATION_HELP
"The interval is in seconds, as vmstat's (a bare number; 500ms works too); the count "
"is a number of intervals.\n";

struct stat_args {
	struct cli_filters filters;
	struct stat_view view;
	double interval;	/* 0: only the summary at the end */
	long count;		/* 0: until Ctrl-C / the command ends */
	bool overhead;
	__u64 stuck_ns;		/* --stuck */
	__u64 keep_ns;		/* --keep */
	int nr_pos;
	struct stack_opts stk;	/* --stacks, --folded, ... */
	const char *qmp;	/* --qmp */
	int qmp_timeout_ms;	/* --qmp-timeout; 0: the default */
	enum exit_source source;	/* --source */
	bool kvm_check;			/* --kvm-check */
	struct kvm_source kvm;		/* --kvm-check: KVM's counters over the same run */
	double kvm_next_scan;
	bool wake;			/* --wake */
};

static const struct cmd_option options[] = {
	OPT_HEADER("Output:", 2),
	{ "overhead", 0, NULL, 0, "Add vmexit's own cost (kernel BPF run-time statistics, on while "
	  "it runs) to the summary", 2, OPT_TO(struct stat_args, overhead, opt_true) },
	{ "stuck", 0, "DURATION", 0, "List exits in flight this long or longer, and only those "
	  "(still, or until they completed or their thread exited; default 1s; e.g. 250ms)", 2,
	  OPT_TO(struct stat_args, stuck_ns, opt_stuck) },
	{ "keep", 0, "DURATION", 0, "Rows of a guest that ended this long ago join the (ended) "
	  "rows (default 5m)", 2, OPT_TO(struct stat_args, keep_ns, opt_keep) },
	{ "folded", 0, NULL, 0, "With --stacks: only the stacks, at the end, as folded lines "
	  "'guest;reason;frame;...;frame NS' (flamegraph.pl, speedscope)", 2,
	  OPT_TO(struct stat_args, stk.folded, opt_true) },
	QMP_OPTION(struct stat_args, qmp, 2),
	SOURCE_OPTION(struct stat_args, source, 2),
	{ "kvm-check", 0, NULL, 0, "At the end, compare the exit counts with KVM's own "
	  "statistics of the same guests over the same run (within 0.1 %, or why not); exit "
	  "status 3 when they disagree", 2, OPT_TO(struct stat_args, kvm_check, opt_true) },
	{ "wake", 0, NULL, 0, "At the end, interrupt delivery latency per guest, vCPU, source and "
	  "vector, split by what the vCPU was doing, and those KVM posted with no exit (posted); "
	  "halted exits' anatomy and halt-poll advice (x86, arm64)", 2,
	  OPT_TO(struct stat_args, wake, opt_true) },
	{},
};

/* [interval [count]]; a third is cli_filters': "use -- before a command". */
static error_t positional(const char *arg, void *input, struct argp_state *state)
{
	struct stat_args *a = input;

	if (a->nr_pos >= 2)
		return ARGP_ERR_UNKNOWN;
	if (a->nr_pos++ == 0)
		opt_interval(arg, &a->interval, state);
	else
		opt_count(arg, &a->count, state);
	return 0;
}

static void end(void *input, struct argp_state *state)
{
	struct stat_args *a = input;

	stack_opts_apply(&a->stk, &a->filters.opts, state);
	if (a->stk.folded && (a->view.asked_csv || a->view.asked_json || a->view.hist))
		argp_error(state, "--folded prints only the stacks: drop --csv, --json and --hist");
	if (a->qmp && a->view.key_mode != KEY_MODE_DEVICE)
		argp_error(state, "--qmp names ports and addresses: add --by key");
	qmp_option_check(a->qmp, a->qmp_timeout_ms, state);
	cli_filters_keys_check(&a->filters, a->view.key_mode, "--by key or --by rip", state);
	cli_filters_gpa_check(&a->filters, a->view.key_mode, "--by key", state);
	if (a->source != SOURCE_KVM)
		return;
	/* KVM's statistics are counts per VM and vCPU: nothing else to show. */
	if (a->filters.opts.command)
		argp_error(state, "--source kvm reads VMMs that run: start the VMM, then give -p or "
			   "-g (or drop --source kvm to trace a COMMAND)");
	if (a->kvm_check || a->view.hist || a->filters.opts.split || a->view.key_mode ||
	    a->stk.stacks || a->overhead || a->view.asked_csv || a->filters.sel.f.nr_reasons ||
	    a->qmp || a->wake)
		argp_error(state, "--source kvm shows KVM's counters only: drop --kvm-check, --hist, "
			   "--split, --by key/rip, --stacks, --overhead, --csv, -r, --qmp and --wake");
}

static const struct cmd_options stat_options = {
	.options = options, .arg = positional, .args_doc = "[interval [count]] [-- COMMAND...]",
	.doc = doc, .end = end, .children = (const struct cmd_child[]){
		{ &cli_filters_options, offsetof(struct stat_args, filters), NULL, 0 },
		{ &stat_view_options, offsetof(struct stat_args, view), NULL, 2 },
		{ &stack_options, offsetof(struct stat_args, stk), NULL, 6 }, {} },
};

/* The last interval, unless it was printed already or saw nothing; then the whole run. */
static int print_end(struct stat_args *a, struct sampler *sp, long printed)
{
	const struct sample *smp = &sp->sample;
	struct stat_report rep;
	int err;

	/* A stack table that could not be read whole was said: the rest is still shown. */
	if (a->stk.folded) {
		/* No interval printed may have named the guests yet (stat -- COMMAND). */
		stat_view_names_of(&a->view, smp);
		return stat_print_folded(&a->view, smp->stacks, stdout);
	}
	if (a->interval && smp->rows->nr && !(a->count && printed >= a->count)) {
		rep = stat_report_of(&a->view, smp, false);
		err = stat_print(&a->view, &rep, stdout);
		if (err)
			return err;
	}
	rep = stat_report_of(&a->view, smp, true);
	return stat_print(&a->view, &rep, stdout);
}

/* --kvm-check: new VMMs' KVM statistics opened while they run (then kept to the end). */
static void stat_tick(void *ctx, double now)
{
	struct stat_args *a = ctx;

	if (now >= a->kvm_next_scan) {
		if (kvm_source_update(&a->kvm, now))
			fprintf(stderr, "vmexit: out of memory reading KVM's statistics\n");
		a->kvm_next_scan = now + 0.05;
	}
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
		rep = stat_report_of(&a->view, &sp->sample, false);
		/* --folded: the stacks alone, at the end. */
		err = a->stk.folded ? 0 : stat_print(&a->view, &rep, stdout);
		if (err)
			goto write_failed;
		printed++;
	}
	/*
	 * count intervals done: the summary is the sum of those printed, from the same sample
	 * (--keep's upkeep of it done first, as after every printed one). Else (Ctrl-C, the
	 * command or every -p process ended) the stretch since the last sample is sampled too,
	 * printed as a shorter interval of its own, and in the summary.
	 */
	err = a->count && printed >= a->count ? sampler_settle(sp) : sampler_sample(sp);
	if (err)
		return err;
	/* A command that could not even start (it said why) has no run to sum up. */
	if (session_command_not_run(&sp->s))
		return 0;
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
	bool kvm_bad = false, kvm_refused = false;
	int err;

	a.stuck_ns = 1000000000ull;
	a.keep_ns = 300 * 1000000000ull;
	a.filters.opts.command = cli_split_command(&argc, argv);
	err = cmd_options_parse(&stat_options, argc, argv, ARGP_IN_ORDER, &a);
	if (err)
		return 2;
	if (!a.nr_pos && !a.filters.opts.command)
		a.interval = 1;
	/* Before a command it runs, a guest is not up yet: the note would only be noise. */
	if (!a.filters.opts.command)
		guest_symbols_note_absent(&a.view.syms, stderr);
	/* The kernel keeps the exits that took --stuck or more: one stuck between two samples
	 * (or before the only one, at the end) is listed too. */
	a.filters.opts.stuck_ns = a.stuck_ns;
	a.filters.opts.key_mode = a.view.key_mode;
	if (a.source == SOURCE_KVM)
		return stat_kvm_run(&(struct stat_kvm_opts){ .filters = &a.filters,
			.by_vcpu = a.view.by == BY_VCPU, .json = a.view.fmt == OUT_JSON,
			.interval = a.interval, .count = a.count });
	if (sampler_open(&sp, &a.filters, &(struct sampler_opts){ .by = a.view.by,
		.interval = a.interval, .end_with_pids = true, .overhead = a.overhead,
		.tick = a.kvm_check ? stat_tick : NULL, .tick_ctx = &a,
		.key_by = a.view.by, .key_vcpu = a.filters.opts.filter.vcpu,
		.stacks = a.stk.stacks, .qmp = a.qmp, .qmp_timeout_ms = a.qmp_timeout_ms,
		.stuck_ns = a.stuck_ns, .keep_ns = a.keep_ns, .wake = a.wake })) {
		guest_symbols_free(&a.view.syms);
		return 1;
	}
	a.view.split = a.filters.opts.split;
	if (a.view.fmt == OUT_TABLE && a.interval)
		fprintf(stderr, "Tracing KVM exits%s... Hit Ctrl-C to end.\n",
			a.filters.opts.command ? " of the command" : "");
	if (a.kvm_check) {
		/* The base: the VMs running now count from here, as the BPF rows do. */
		kvm_source_init(&a.kvm, a.filters.sel.f.pids, a.filters.sel.f.nr_pids,
				a.filters.sel.guests, a.filters.sel.nr_guests);
		err = kvm_source_update(&a.kvm, sampler_now());
		if (err)
			fprintf(stderr, "vmexit: out of memory reading KVM's statistics\n");
	}
	sampler_start(&sp);
	err = run(&a, &sp);
	if (a.wake && !err)
		err = stat_wake_print(&sp.sample, a.view.fmt);
	if (a.kvm_check && !err) {
		int bad;

		if (kvm_source_update(&a.kvm, sampler_now()))
			fprintf(stderr, "vmexit: out of memory reading KVM's statistics\n");
		bad = kvm_cross_check(&a.kvm, &sp.t.cum, stdout);
		if (sp.sample.wake)
			bad += kvm_halt_check(&a.kvm, sp.sample.wake, stdout);
		if (out_flush(stdout))
			err = -EIO;
		else if (bad)
			kvm_bad = true;
		/* Nothing compared because every guest refused us (said): not an agreement. */
		kvm_refused = kvm_source_refused(&a.kvm);
	}
	if (a.kvm_check)
		kvm_source_free(&a.kvm);
	err = sampler_close(&sp, err);
	if (!err && kvm_bad)
		err = 3;
	else if (!err && kvm_refused)
		err = 1;
	guest_symbols_free(&a.view.syms);
	return err;
}
