// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_filters.h"
#include "proc_names.h"
#include "text_escape.h"

static const struct cmd_option options[] = {
	FILTER_OPTIONS("Filters (applied in the kernel):",
		       "Only the guest with this name (QEMU -name; repeatable)", 1,
		       struct cli_filters, sel),
	/*
	 * Not filters: how the kernel side traces and what it says about it. Group 5, after
	 * every command's own groups (2 and 3), which would otherwise absorb these options.
	 */
	OPT_HEADER("Tracing:", 5),
	{ "max-cells", 0, "N", 0, "Statistics cells, one per thread and reason (default 4096)", 5,
	  OPT_TO(struct cli_filters, opts.max_cells, opt_max_cells) },
	{ "max-keys", 0, "N", 0, "Keys kept by stat --by key / rip, top and serve --keys, over "
	  "all threads and reasons (default 1024); exits past them go to a row (other), counted "
	  "under lost as keys_full",
	  5, OPT_TO(struct cli_filters, opts.max_keys, opt_max_keys) },
	{ "key-gpa-shift", 0, "BITS", 0, "--by key: group guest-physical fault addresses (EPT "
	  "violation, npf, stage-2 faults) by 2^BITS bytes (default 12, a page; 21: 2 MiB)", 5,
	  OPT_TO(struct cli_filters, opts.key_gpa_shift, opt_key_gpa_shift) },
	{ "split", 0, NULL, 0,
	  "Split exit time into on CPU, blocked (asleep) and runq (waiting for a CPU)", 5,
	  OPT_TO(struct cli_filters, opts.split, opt_true) },
	{ "verbose", 'v', NULL, 0, "Show libbpf's messages, the verifier log and the hooks used", 5,
	  OPT_TO(struct cli_filters, opts.verbose, opt_true) },
	{ "check-hooks", 0, NULL, 0, "Check the kvm_exit fast path against the "
	  "classic tracepoint for 2 s (not 0.3), longer only while exits still arrive with fewer "
	  "than 100 read alike (at most 20 s), and print both sides' counts per reason and the "
	  "verdict, also without -v (not for "
	  "stream and record, which always use the classic tracepoint)", 5,
	  OPT_TO(struct cli_filters, opts.check_hooks, opt_true) },
	{},
};

/* How long pid has run, in seconds; -1 if unknown. */
static double proc_age_s(__u32 pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	double up;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fgets(buf, sizeof(buf), f) ? 1 : 0;
	fclose(f);
	p = n ? strrchr(buf, ')') : NULL;	/* comm may hold spaces and parentheses */
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
	 * cutime cstime priority nice threads itrealvalue starttime": starttime is the 20th. */
	if (!p || sscanf(p + 2, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
			 "%*s %*s %*s %*s %llu", &start) != 1)
		return -1;
	f = fopen("/proc/uptime", "r");
	if (!f)
		return -1;
	n = fscanf(f, "%lf", &up);
	fclose(f);
	return n == 1 ? up - (double)start / (double)sysconf(_SC_CLK_TCK) : -1;
}

/* A VMM opens /dev/kvm early: one that has run this long without it is no VMM. */
#define VMM_GRACE_S	2.0

/*
 * A live -p must name a running VMM: a pid that is gone, or a process that has run a while
 * with no /dev/kvm or KVM VM open (-p 1), would count nothing: said, with the guests that
 * run, exit 2 (as -g with a name no guest has).
 */
static void check_running(const char *arg, __u32 pid)
{
	if (kill((pid_t)pid, 0) && errno == ESRCH) {
		fprintf(stderr, "vmexit: no process with pid %s; running guests:\n", arg);
		guests_list_print(stderr);
		exit(2);
	}
	if (holds_kvm((int)pid) == 0 && proc_age_s(pid) >= VMM_GRACE_S) {
		fprintf(stderr, "vmexit: pid %s is no VMM (it holds neither /dev/kvm nor a KVM VM; "
			"--follow waits for one that starts); running guests:\n", arg);
		guests_list_print(stderr);
		exit(2);
	}
}

/* A followed -p need not run yet, but it must be a pid a process can have. */
static void check_possible(const char *arg, __u32 pid)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	unsigned long max = 0;

	if (f && fscanf(f, "%lu", &max) == 1 && pid >= max) {
		fprintf(stderr, "vmexit: -p %s: no process can have it (kernel.pid_max is %lu)\n",
			arg, max);
		exit(2);
	}
	if (f)
		fclose(f);
}

static void init(void *input)
{
	struct cli_filters *f = input;

	filter_options_init(&f->sel);
	f->sel.pid_given = f->follow ? check_possible : check_running;
}

/* The kernel takes the filters from the session's options. */
static void to_session(void *input, struct argp_state *state)
{
	struct cli_filters *cf = input;
	const struct event_filter *f = &cf->sel.f;
	struct session_opts *o = &cf->opts;

	/* Else it would run as if no -- were given, until Ctrl-C. */
	if (o->command && !o->command[0])
		argp_error(state, "-- needs a command after it (or leave the -- out)");
	o->filter = *f;
}

void cli_filters_keys_check(const struct cli_filters *f, __u32 key_mode, const char *fix,
			    struct argp_state *state)
{
	if (!f->opts.max_keys || key_mode)
		return;
	if (!fix)
		argp_error(state, "--max-keys sizes the key table of stat, top and serve: a "
			   "stream's records carry their keys, drop it");
	else
		argp_error(state, "--max-keys sizes the key table, which is off: add %s", fix);
}

void cli_filters_gpa_check(const struct cli_filters *f, __u32 key_mode, const char *fix,
			   struct argp_state *state)
{
	if (f->opts.key_gpa_shift && key_mode != KEY_MODE_DEVICE)
		argp_error(state, "--key-gpa-shift groups the guest-physical keys of --by key, "
			   "which is off: add %s", fix);
}

const struct cmd_options cli_filters_options = {
	.options = options, .init = init, .end = to_session,
	/* No command took it: the commands that trace a COMMAND take it after --. */
	.unexpected = " (use -- before a command)",
};

int cli_filters_resolve(struct cli_filters *f)
{
	struct session_opts *o = &f->opts;

	if (f->names_later && f->sel.nr_guests) {
		for (int i = 0; i < f->sel.nr_guests; i++) {
			int pid;
			char nb[TEXT_NAME_MAX];

			if (guests_find(f->sel.guests[i], &pid, 1) <= 0)
				fprintf(stderr, "vmexit: note: no running guest named '%s' yet: its "
					"VMMs are counted from their first exit\n",
					text_esc(nb, f->sel.guests[i]));
		}
		/* A -p among them is matched there too: the kernel filters no pid. */
		o->filter.nr_pids = 0;
		o->pid_filter_on = false;
		return 0;
	}
	for (int i = 0; i < f->sel.nr_guests; i++) {
		int room = MAX_PID_FILTER - o->filter.nr_pids;
		int n = guests_find(f->sel.guests[i], o->filter.pids + o->filter.nr_pids, room);
		char nb[TEXT_NAME_MAX];

		if (n <= 0 && f->follow) {
			fprintf(stderr, "vmexit: note: no running guest named '%s' yet: its VMMs "
				"are traced as they start\n", text_esc(nb, f->sel.guests[i]));
			continue;
		}
		if (n <= 0) {
			fprintf(stderr, "vmexit: no running guest named '%s'; running guests:\n",
				text_esc(nb, f->sel.guests[i]));
			guests_list_print(stderr);
			/* As -p with no VMM: the selection names nothing (check_running). */
			exit(2);
		}
		o->filter.nr_pids += n < room ? n : room;
	}
	for (int i = 0; f->follow && i < f->sel.f.nr_pids; i++) {
		if (kill((pid_t)f->sel.f.pids[i], 0) && errno == ESRCH)
			fprintf(stderr, "vmexit: note: no process with pid %d yet: traced if one "
				"starts\n", f->sel.f.pids[i]);
	}
	/* Followed names may match nothing yet: the filter is on all the same. */
	o->pid_filter_on = f->follow && (f->sel.nr_guests || f->sel.f.nr_pids);
	return 0;
}

int cli_filters_open_session(struct cli_filters *f, struct session *s)
{
	if (session_preflight() || cli_filters_resolve(f))
		return -1;
	return session_open(s, &f->opts) ? -1 : 0;
}

char **cli_split_command(int *argc, char **argv)
{
	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			argv[i] = NULL;
			*argc = i;
			/* Empty after a trailing --: cli_filters_options refuses it. */
			return &argv[i + 1];
		}
	}
	return NULL;
}

