// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "durations.h"
#include "option_values.h"

bool strict_long(const char *s, int base, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, base);
	return !errno && end != s && !*end;
}

bool strict_double(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*v);
}

int parse_duration_ns(const char *s, __u64 *ns)
{
	double v;

	if (parse_duration(s, DUR_NS, DUR_NS, DUR_S, &v))
		return -EINVAL;
	*ns = (__u64)(v + 0.5);
	return 0;
}

long parse_long_arg(const char *arg, const char *what, long min, long max,
		    struct argp_state *state)
{
	long v;

	if (!strict_long(arg, 0, &v) || v < min || v > max)
		argp_error(state, "invalid %s '%s': give a number from %ld to %ld", what, arg,
			   min, max);
	return v;
}

double parse_tsc_mhz_arg(const char *arg, struct argp_state *state)
{
	double v;

	if (!strict_double(arg, &v) || !(v > 0) || v > 1e5)
		argp_error(state, "invalid --tsc-mhz '%s': give the TSC frequency in MHz, e.g. 2100",
			   arg);
	return v;
}

__u64 parse_min_latency_arg(const char *arg, struct argp_state *state)
{
	__u64 ns = 0;

	if (parse_duration_ns(arg, &ns))
		argp_error(state, "invalid --min-latency '%s': give a duration such as 800 (ns), "
			   "250us, 1.5ms or 2s", arg);
	return ns;
}

double parse_interval_arg(const char *arg, struct argp_state *state)
{
	double v;

	if (!strict_double(arg, &v) || v < 0.01 || v > 86400)
		argp_error(state, "bad interval '%s': give seconds from 0.01 to 86400", arg);
	return v;
}

long parse_count_arg(const char *arg, struct argp_state *state)
{
	long v;

	if (!strict_long(arg, 10, &v) || v < 1)
		argp_error(state, "bad count '%s': give a whole number of intervals >= 1", arg);
	return v;
}

__u64 parse_stuck_arg(const char *arg, struct argp_state *state)
{
	__u64 ns = 0;

	if (parse_duration_ns(arg, &ns) || !ns)
		argp_error(state, "invalid --stuck '%s': give a duration above 0, e.g. 1s or 250ms",
			   arg);
	return ns;
}

__u64 parse_serve_stuck_arg(const char *arg, struct argp_state *state)
{
	double ns = 0;

	if (parse_duration(arg, DUR_UNIT_REQUIRED, DUR_NS, DUR_S, &ns))
		argp_error(state, "invalid --stuck '%s': give a duration with its unit, e.g. 500ms, "
			   "1s, 30s", arg);
	return (__u64)(ns + 0.5);
}

__u64 parse_keep_arg(const char *arg, struct argp_state *state)
{
	double ns = 0;

	if (parse_duration(arg, DUR_UNIT_REQUIRED, DUR_S, DUR_H, &ns) || ns > 7 * 24 * DUR_H)
		argp_error(state, "invalid --keep '%s': give a duration with its unit, e.g. 300s, 5m, "
			   "1h (at most a week)", arg);
	return (__u64)ns;
}
