// SPDX-License-Identifier: GPL-2.0
#include "filter_options.h"

void filter_options_init(struct filter_options *fo)
{
	fo->f.vcpu = -1;
}

void opt_pid(const char *arg, void *to, struct argp_state *state)
{
	struct filter_options *fo = to;
	struct event_filter *f = &fo->f;

	if (f->nr_pids >= MAX_PID_FILTER)
		argp_error(state, "too many -p (at most %d)", MAX_PID_FILTER);
	f->pids[f->nr_pids++] = (int)parse_long_arg(arg, "pid", 1, 0x7fffffff, state);
	if (fo->pid_given)
		fo->pid_given(arg, (__u32)f->pids[f->nr_pids - 1]);
}

void opt_guest(const char *arg, void *to, struct argp_state *state)
{
	struct filter_options *fo = to;

	if (fo->nr_guests >= MAX_GUEST_NAMES)
		argp_error(state, "too many -g (at most %d)", MAX_GUEST_NAMES);
	fo->guests[fo->nr_guests++] = arg;
}

void opt_vcpu(const char *arg, void *to, struct argp_state *state)
{
	*(__s32 *)to = (__s32)parse_long_arg(arg, "vCPU", 0, 0x7fffffff, state);
}

void opt_reasons(const char *arg, void *to, struct argp_state *state)
{
	struct event_filter *f = to;
	char err[256];
	int n;

	n = reason_parse_list(arg, f->reasons + f->nr_reasons, MAX_REASON_SEL - f->nr_reasons,
			      err, sizeof(err));
	if (n < 0)
		argp_error(state, "%s", err);
	f->nr_reasons += n;
}
