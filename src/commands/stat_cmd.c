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
#include "serve_guests.h"
#include "stack_options.h"
#include "stack_read.h"
#include "kallsyms.h"
#include "stat_output.h"
#include "view_options.h"
#include "out_write.h"
#include "key_rows.h"
#include "qmp_names.h"
#include "qmp_option.h"
#include "kvm_cross_check.h"
#include "source_option.h"
#include "stat_kvm.h"
#include "vmexit.skel.h"

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
	struct key_rows keys;	/* --by key / rip: the rows printed instead of the cells' */
	struct row_table key_interval;
	const char *qmp;	/* --qmp */
	struct qmp_names qmp_names;
	struct sampler *sp;
	enum exit_source source;	/* --source */
	bool kvm_check;			/* --kvm-check */
	struct kvm_source kvm;		/* --kvm-check: KVM's counters over the same run */
	double kvm_next_scan;
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
	    a->qmp)
		argp_error(state, "--source kvm shows KVM's counters only: drop --kvm-check, --hist, "
			   "--split, --by key/rip, --stacks, --overhead, --csv, -r and --qmp");
}

static const struct cmd_options stat_options = {
	.options = options, .arg = positional, .args_doc = "[interval [count]] [-- COMMAND...]",
	.doc = doc, .end = end, .children = (const struct cmd_child[]){
		{ &cli_filters_options, offsetof(struct stat_args, filters), NULL, 0 },
		{ &stat_view_options, offsetof(struct stat_args, view), NULL, 2 },
		{ &stack_options, offsetof(struct stat_args, stk), NULL, 6 }, {} },
};

/* What the last sample saw, for stat_print(). */
static struct stat_report sampled(struct stat_args *a, struct sampler *sp,
				  struct hooks_info *hooks)
{
	struct stat_report rep = { .rows = &sp->rows, .interval_s = sp->interval_s,
				   .elapsed_s = sp->elapsed_s, .hooks = hooks,
				   .overhead = sp->overhead ? &sp->overhead->cost : NULL, .inflight = sp->t.inflight,
				   .nr_inflight = sp->t.nr_inflight, .stuck = sp->t.stuck,
				   .nr_stuck = sp->t.nr_stuck,
				   .now_ns = (__u64)(sp->last * 1e9), .stuck_ns = a->stuck_ns };

	hooks_info(&sp->s.hooks, hooks);
	memcpy(rep.lost, sp->lost, sizeof(rep.lost));
	if (a->view.key_mode)
		rep.rows = &a->key_interval;
	return rep;
}

/* --stacks: what the kernel charged over the whole run, frames named from this kernel. */
static int stacks_get(struct sampler *sp, struct stack_table *t)
{
	char err[256];
	struct symbol_map *ksyms = kallsyms_load(err, sizeof(err));
	int rc;

	if (!ksyms)
		fprintf(stderr, "vmexit: note: %s\n", err);
	rc = stack_read(&sp->s, ksyms, t);
	symbol_map_free(ksyms);
	stack_table_sort(t);
	return rc;
}

/* The last interval, unless it was printed already or saw nothing; then the whole run. */
static int print_end(struct stat_args *a, struct sampler *sp, long printed)
{
	struct hooks_info hooks;
	struct stat_report rep = sampled(a, sp, &hooks);
	struct stack_table stacks = {};
	int err;

	/* A stack table that could not be read whole was said: the rest is still shown. */
	if (a->stk.stacks)
		stacks_get(sp, &stacks);
	if (a->stk.folded) {
		err = stat_print_folded(&a->view, &stacks, stdout);
		goto out;
	}
	if (a->interval && sp->rows.nr && !(a->count && printed >= a->count)) {
		err = stat_print(&a->view, &rep, stdout);
		if (err)
			goto out;
	}
	rep.rows = a->view.key_mode ? &a->keys.cum : &sp->t.cum;
	rep.interval_s = sp->elapsed_s;
	rep.final = true;
	rep.stuck = sp->t.cum_stuck;
	rep.nr_stuck = sp->t.nr_cum_stuck;
	rep.ended = sp->t.cum_ended;
	if (a->stk.stacks)
		rep.stacks = &stacks;
	err = stat_print(&a->view, &rep, stdout);
out:
	stack_table_free(&stacks);
	return err;
}

/*
 * --qmp: new guests asked their memory map while they run, and again when a key left it.
 * --kvm-check: new VMMs' KVM statistics opened while they run (then kept to the end).
 */
static void stat_tick(void *ctx, double now)
{
	struct stat_args *a = ctx;

	if (a->qmp)
		qmp_names_tick(&a->qmp_names, &a->sp->names, now);
	if (a->kvm_check && now >= a->kvm_next_scan) {
		if (kvm_source_update(&a->kvm, now))
			fprintf(stderr, "vmexit: out of memory reading KVM's statistics\n");
		a->kvm_next_scan = now + 0.05;
	}
}

/* --keep counts on the sampler's clock: only the time since a guest ended matters here. */
static __u64 now_ms(void)
{
	return (__u64)(sampler_now() * 1000);
}

static bool guest_expired(void *ctx, __u32 tgid, __u64 start)
{
	return serve_guests_expired(ctx, tgid, start, now_ms());
}

/*
 * --keep, after each sample: the guests over for longer join the (ended) rows, and their
 * keys leave the kernel's key table (their rows stay: the summary has them), so that a
 * long run keeps room for the guests that come. 0 or -ENOMEM.
 */
static int keep_upkeep(struct stat_args *a, struct sampler *sp, struct serve_guests *g)
{
	__u64 now = now_ms();
	int err = serve_guests_learn(g, &sp->t.cum, now);

	serve_guests_check(g, now);
	if (!err)
		err = sampler_fold(sp, guest_expired, g);
	if (!err && a->view.key_mode)
		err = key_rows_forget(&a->keys, guest_expired, g, false);
	return err ? err : serve_guests_prune(g, now);
}

/* The cells, and with --by key the key table, after them: no exit is in the keys only. */
static int sample(struct stat_args *a, struct sampler *sp)
{
	int err = sampler_sample(sp);

	if (!err && a->view.key_mode) {
		err = key_rows_sample(&a->keys, &a->key_interval);
		if (err && err != -ENOMEM)
			fprintf(stderr, "vmexit: cannot read the key table: %s\n", strerror(-err));
	}
	return err;
}

/* 0, -ENOMEM, or a failed write's -errno (said here: the run ends with status 1). */
static int run(struct stat_args *a, struct sampler *sp)
{
	struct serve_guests g = { .start_ms = now_ms(), .keep_ms = a->keep_ns / 1000000 };
	struct hooks_info hooks;
	struct stat_report rep;
	long printed = 0;
	int err;

	while (!(a->count && printed >= a->count) && sampler_wait(sp) == SAMPLER_DUE) {
		err = sample(a, sp);
		if (err)
			goto out;
		rep = sampled(a, sp, &hooks);
		/* --folded: the stacks alone, at the end. */
		err = a->stk.folded ? 0 : stat_print(&a->view, &rep, stdout);
		if (err)
			goto write_failed;
		printed++;
		err = keep_upkeep(a, sp, &g);
		if (err)
			goto out;
	}
	serve_guests_free(&g);
	/*
	 * count intervals done: the summary is the sum of those printed, from the same sample.
	 * Else (Ctrl-C, the command or every -p process ended) the stretch since the last
	 * sample is sampled too, printed as a shorter interval of its own, and in the summary.
	 */
	if (!(a->count && printed >= a->count)) {
		err = sample(a, sp);
		if (err)
			return err;
	}
	/* A command that could not even start (it said why) has no run to sum up. */
	if (session_command_not_run(&sp->s))
		return 0;
	err = print_end(a, sp, printed);
	if (!err)
		return 0;
write_failed:
	out_write_error("the statistics", err);
out:
	serve_guests_free(&g);
	return err;
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args a = {};
	struct sampler sp;
	bool kvm_bad = false;
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
	if (a.qmp) {
		qmp_names_init(&a.qmp_names, a.qmp);
		a.view.qmp = &a.qmp_names;
	}
	a.sp = &sp;
	if (sampler_open(&sp, &a.filters, &(struct sampler_opts){ .by = a.view.by,
		.interval = a.interval, .end_with_pids = true, .overhead = a.overhead,
		.tick = a.qmp || a.kvm_check ? stat_tick : NULL, .tick_ctx = &a })) {
		if (a.qmp)
			qmp_names_free(&a.qmp_names);
		guest_symbols_free(&a.view.syms);
		return 1;
	}
	a.view.names = &sp.names;
	sp.t.stuck_ns = a.stuck_ns;
	a.view.split = a.filters.opts.split;
	key_rows_init(&a.keys, a.view.key_mode ? bpf_map__fd(sp.s.skel->maps.key_table) : -1,
		      a.view.by, a.filters.opts.filter.vcpu);
	a.keys.used = &sp.s.skel->bss->keys_used;
	row_table_init(&a.key_interval);
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
	if (a.kvm_check && !err) {
		int bad;

		if (kvm_source_update(&a.kvm, sampler_now()))
			fprintf(stderr, "vmexit: out of memory reading KVM's statistics\n");
		bad = kvm_cross_check(&a.kvm, &sp.t.cum, stdout);
		if (out_flush(stdout))
			err = -EIO;
		else if (bad)
			kvm_bad = true;
	}
	if (a.kvm_check)
		kvm_source_free(&a.kvm);
	err = sampler_close(&sp, err);
	if (!err && kvm_bad)
		err = 3;
	key_rows_free(&a.keys);
	row_table_free(&a.key_interval);
	if (a.qmp)
		qmp_names_free(&a.qmp_names);
	guest_symbols_free(&a.view.syms);
	return err;
}
