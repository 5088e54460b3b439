// SPDX-License-Identifier: GPL-2.0
#include "filter_options.h"
#include "option_values.h"

error_t filter_options_parse(int key, char *arg, struct argp_state *state,
			     struct filter_options *fo)
{
	struct event_filter *f = &fo->f;
	char err[256];
	int n;

	switch (key) {
	case ARGP_KEY_INIT:
		f->vcpu = -1;
		break;
	case 'p':
		if (f->nr_pids >= MAX_PID_FILTER)
			argp_error(state, "too many -p (at most %d)", MAX_PID_FILTER);
		f->pids[f->nr_pids++] = (__u32)parse_long_arg(arg, "pid", 1, 0x7fffffff, state);
		break;
	case 'g':
		if (fo->nr_guests >= MAX_GUEST_NAMES)
			argp_error(state, "too many -g (at most %d)", MAX_GUEST_NAMES);
		fo->guests[fo->nr_guests++] = arg;
		break;
	case 'c':
		f->vcpu = (__s32)parse_long_arg(arg, "vCPU", 0, 0x7fffffff, state);
		break;
	case 'r':
		n = reason_parse_list(arg, f->reasons + f->nr_reasons,
				      MAX_REASON_SEL - f->nr_reasons, err, sizeof(err));
		if (n < 0)
			argp_error(state, "%s", err);
		f->nr_reasons += n;
		break;
	case FILTER_OPT_MIN_LATENCY:
		f->min_latency_ns = parse_min_latency_arg(arg, state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}
