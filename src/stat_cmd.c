// SPDX-License-Identifier: GPL-2.0
/* vmexit stat: per VM x reason counts and time-in-exit, periodic or once at the end. */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli_filters.h"
#include "commands.h"
#include "session.h"
#include "stat_output.h"
#include "tracker.h"

enum { OPT_JSON = 0x200, OPT_OVERHEAD };

struct stat_args {
	struct session_opts opts;
	struct cli_filters filters;
	struct stat_view view;
	double interval;	/* 0: only the summary at the end */
	long count;		/* 0: until Ctrl-C / the command ends */
	bool overhead;
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
	{ "by", STAT_OPT_BY, "vm|vcpu|reason", 0, "Rows per VM x reason (default), per vCPU, or per "
	  "reason over all VMs", 2 },
	{ "sort", 's', "count|time|max|p99", 0, "Row order (default count)", 2 },
	{ "csv", STAT_OPT_CSV, NULL, 0, "CSV with a header row", 2 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per interval, one per line", 2 },
	{ "hist", STAT_OPT_HIST, NULL, 0, "Latency histogram per row", 2 },
	{ "units", 'u', "ns|us|ms", 0, "Print durations in this unit (default: scaled)", 2 },
	{ "tsc-mhz", STAT_OPT_TSC_MHZ, "MHZ", 0, "Add cycle columns at this TSC frequency", 2 },
	{ "overhead", OPT_OVERHEAD, NULL, 0, "Add vmexit's own cost (kernel BPF run-time "
	  "statistics, on while it runs) to the summary", 2 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct stat_args *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->filters;
		break;
	case OPT_JSON:
		a->view.fmt = OUT_JSON;
		break;
	case OPT_OVERHEAD:
		a->overhead = true;
		break;
	case ARGP_KEY_ARG:
		if (a->nr_pos == 0 && parse_interval(arg, &a->interval))
			exit(2);
		if (a->nr_pos == 1 && parse_count(arg, &a->count))
			exit(2);
		if (a->nr_pos >= 2)
			argp_error(state, "unexpected argument '%s' (use -- before a command)", arg);
		a->nr_pos++;
		break;
	default:
		return stat_view_parse_opt(&a->view, key, arg, state);
	}
	return 0;
}

static const struct argp_child children[] = {
	{ &cli_filters_argp, 0, NULL, 0 },
	{},
};

static const struct argp stat_argp = {
	.options = options,
	.parser = parse_opt,
	.args_doc = "[interval [count]] [-- COMMAND...]",
	.doc = doc,
	.children = children,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __u32 kernel_nr_cells(void *ctx)
{
	return session_nr_cells(ctx);
}

/* Like perf stat -p: tracing given pids ends when the last of them is gone. */
static bool any_alive(const struct session_opts *o)
{
	if (!o->nr_pids || o->command)
		return true;
	for (int i = 0; i < o->nr_pids; i++) {
		if (!kill(o->pids[i], 0) || errno != ESRCH)
			return true;
	}
	return false;
}

static void name_new_cells(struct tracker *t, struct vm_names *names, __u32 *named)
{
	for (; *named < t->seen; (*named)++)
		vm_names_get(names, t->prev[*named].key.tgid);
}

int cmd_stat(int argc, char **argv)
{
	struct stat_args a = {};
	struct session s = {};
	struct tracker t = {};
	struct row_table rows;
	struct vm_names names = { .resolve = true };
	struct stat_report rep = {};
	struct overhead ov = { .stats_fd = -1 };
	struct cell_source src;
	double start, last, next, next_alive_check = 0;
	long printed = 0;
	__u32 named = 0;
	int err, status = 0, rc = 0;
	bool child_done = false;

	a.opts.vcpu = -1;
	a.filters.opts = &a.opts;
	a.view.names = &names;
	a.opts.command = cli_split_command(&argc, argv);
	err = argp_parse(&stat_argp, argc, argv, ARGP_IN_ORDER, NULL, &a);
	if (err)
		return 2;
	if (!a.nr_pos && !a.opts.command)
		a.interval = 1;
	row_table_init(&rows);

	if (session_preflight() || cli_filters_resolve(&a.filters))
		return 1;
	err = session_open(&s, &a.opts);
	if (err)
		return 1;
	rep.hooks = &s.hooks;
	if (a.overhead) {
		if (overhead_start(&ov, session_object(&s))) {
			session_close(&s);
			return 1;
		}
		rep.overhead = &ov;
	}
	names.args = session_proc_args;
	names.args_ctx = &s;
	src.cells = s.cells;
	src.nr_cells = kernel_nr_cells;
	src.ctx = &s;
	tracker_init(&t, &src, a.view.by, a.opts.vcpu, true);
	t.split = a.view.split = a.opts.split;
	install_signal_handlers();
	if (a.view.fmt == OUT_TABLE && a.interval)
		fprintf(stderr, "Tracing KVM exits%s... Hit Ctrl-C to end.\n",
			a.opts.command ? " of the command" : "");

	session_start_command(&s);
	start = last = now_s();
	next = start + a.interval;
	while (!exiting) {
		/* A short tick: new cells get named while their VMM and threads still exist. */
		double now = now_s(), wait = 0.02;
		struct timespec ts;

		if (a.interval && next - now < wait)
			wait = next - now;
		if (wait > 0) {
			ts.tv_sec = (time_t)wait;
			ts.tv_nsec = (long)((wait - ts.tv_sec) * 1e9);
			nanosleep(&ts, NULL);
		}
		tracker_discover(&t);
		name_new_cells(&t, &names, &named);
		if (session_command_done(&s, &status)) {
			child_done = true;
			break;
		}
		now = now_s();
		if (now >= next_alive_check) {
			next_alive_check = now + 1;
			if (!any_alive(&a.opts)) {
				fprintf(stderr, "vmexit: every traced process has exited\n");
				break;
			}
		}
		if (!a.interval || now < next)
			continue;
		__u32 closed = session_epoch(&s);

		session_new_epoch(&s);
		err = tracker_sample(&t, closed, &rows);
		if (err)
			goto out;
		name_new_cells(&t, &names, &named);
		rep.rows = &rows;
		rep.interval_s = now - last;
		rep.elapsed_s = now - start;
		session_lost(&s, rep.lost);
		stat_print(&a.view, &rep, stdout);
		last = now;
		next += a.interval;
		if (next < now)
			next = now + a.interval;	/* we were stopped: do not print a burst */
		if (a.count && ++printed >= a.count)
			break;
	}

	/* The tail since the last interval, then the whole run. */
	{
		double now = now_s();
		__u32 closed = session_epoch(&s);

		session_new_epoch(&s);
		err = tracker_sample(&t, closed, &rows);
		if (err)
			goto out;
		name_new_cells(&t, &names, &named);
		session_lost(&s, rep.lost);
		if (a.interval && rows.nr && !(a.count && printed >= a.count)) {
			rep.rows = &rows;
			rep.interval_s = now - last;
			rep.elapsed_s = now - start;
			stat_print(&a.view, &rep, stdout);
		}
		if (rep.overhead && overhead_sample(&ov))
			rep.overhead = NULL;	/* the summary goes without it */
		rep.rows = &t.cum;
		rep.interval_s = now - start;
		rep.elapsed_s = now - start;
		rep.final = true;
		stat_print(&a.view, &rep, stdout);
	}
out:
	if (err) {
		fprintf(stderr, "vmexit: out of memory reading the statistics\n");
		rc = 1;
	}
	if (s.child && !child_done) {
		/* Ctrl-C or count reached: the command keeps running, untraced from now on. */
		fprintf(stderr, "vmexit: tracing ended; command (pid %d) left running\n", s.child);
	}
	if (child_done && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		fprintf(stderr, "vmexit: the command %s %d\n",
			WIFEXITED(status) ? "exited with status" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		rc = rc ? rc : (WIFEXITED(status) ? WEXITSTATUS(status) : 1);
	}
	overhead_stop(&ov);
	tracker_free(&t);
	row_table_free(&rows);
	session_close(&s);
	vm_names_free(&names);
	return rc;
}
