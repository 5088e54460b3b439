// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "durations.h"
#include "option_values.h"
#include "trace_writer.h"
#include "reasons.h"

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

/* A duration option's value in [min_ns, max_ns], or the one message durations are refused with. */
static __u64 duration_arg(const char *arg, const char *what, double min_ns, double max_ns,
			  struct argp_state *state)
{
	char msg[256];
	__u64 ns = 0;

	if (parse_duration_ns(arg, min_ns, max_ns, &ns)) {
		duration_refusal(msg, sizeof(msg), what, arg, min_ns, max_ns);
		argp_error(state, "%s", msg);
	}
	return ns;
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

int parse_choice_arg(const char *arg, const char *what, const char *const *names, int n,
		     struct argp_state *state)
{
	char list[256];
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		if (!strcmp(arg, names[i]))
			return i;
	}
	list[0] = 0;
	for (int i = 0; i < n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s",
				!i ? "" : i == n - 1 ? " or " : ", ", names[i]);
	argp_error(state, "invalid %s '%s': use %s", what, arg, list);
	return 0;
}

void opt_exclusive(struct argp_state *state, bool a, const char *a_name, bool b,
		   const char *b_name)
{
	if (a && b)
		argp_error(state, "%s and %s are different outputs: pick one", a_name, b_name);
}

void opt_true(const char *arg, void *to, struct argp_state *state)
{
	(void)arg;
	(void)state;
	*(bool *)to = true;
}

void opt_string(const char *arg, void *to, struct argp_state *state)
{
	(void)state;
	*(const char **)to = arg;
}

void opt_tsc_mhz(const char *arg, void *to, struct argp_state *state)
{
	double *v = to;

	if (!strict_double(arg, v) || !(*v > 0) || *v > 1e5)
		argp_error(state, "invalid --tsc-mhz '%s': give the TSC frequency in MHz, e.g. 2100",
			   arg);
}

void opt_min_latency(const char *arg, void *to, struct argp_state *state)
{
	*(__u64 *)to = duration_arg(arg, "--min-latency", 0, DUR_WEEK, state);
}

/*
 * An interval: seconds, as vmstat's and top's (a bare number), or a duration with its unit;
 * 10 ms (a sample costs a pass over the cells) to a day.
 */
void opt_interval(const char *arg, void *to, struct argp_state *state)
{
	double *v = to, ns;
	bool ok;

	if (strict_double(arg, v))
		ok = *v >= 0.01 && *v <= 86400;
	else if ((ok = !parse_duration(arg, 10 * DUR_MS, 24 * DUR_H, &ns)))
		*v = ns / DUR_S;
	if (!ok)
		argp_error(state, "bad interval '%s': give seconds from 0.01 to 86400 (a bare number "
			   "is seconds), or a duration with its unit, e.g. 500ms", arg);
}

void opt_count(const char *arg, void *to, struct argp_state *state)
{
	long *v = to;

	if (!strict_long(arg, 10, v) || *v < 1)
		argp_error(state, "bad count '%s': give a whole number of intervals >= 1", arg);
}

/* How long an exit must be in flight to be stuck: up to a week (as --keep). */
void opt_stuck(const char *arg, void *to, struct argp_state *state)
{
	*(__u64 *)to = duration_arg(arg, "--stuck", DUR_NS, DUR_WEEK, state);
}

/* serve: 0 exports every exit in flight. */
void opt_serve_stuck(const char *arg, void *to, struct argp_state *state)
{
	*(__u64 *)to = duration_arg(arg, "--stuck", 0, DUR_WEEK, state);
}

void opt_keep(const char *arg, void *to, struct argp_state *state)
{
	*(__u64 *)to = duration_arg(arg, "--keep", 0, DUR_WEEK, state);
}

void opt_max_cells(const char *arg, void *to, struct argp_state *state)
{
	*(__u32 *)to = (__u32)parse_long_arg(arg, "--max-cells", 16, 65000, state);
}

void opt_stack_min(const char *arg, void *to, struct argp_state *state)
{
	*(__u64 *)to = duration_arg(arg, "--stack-min", 0, DUR_WEEK, state);
}

void opt_max_stacks(const char *arg, void *to, struct argp_state *state)
{
	*(__u32 *)to = (__u32)parse_long_arg(arg, "--max-stacks", 16, 1 << 20, state);
}

void opt_max_keys(const char *arg, void *to, struct argp_state *state)
{
	*(__u32 *)to = (__u32)parse_long_arg(arg, "--max-keys", 1, 1000000, state);
}

void opt_key_gpa_shift(const char *arg, void *to, struct argp_state *state)
{
	/* 12: a 4 KiB page (the default); 52: the whole guest-physical space in one key. */
	*(__u32 *)to = (__u32)parse_long_arg(arg, "--key-gpa-shift", 12, 52, state);
}

void opt_top(const char *arg, void *to, struct argp_state *state)
{
	*(__u32 *)to = (__u32)parse_long_arg(arg, "--top", 1, 1000000, state);
}

void opt_key_device(const char *arg, void *to, struct argp_state *state)
{
	(void)arg, (void)state;
	*(__u32 *)to = KEY_MODE_DEVICE;
}

/* In whole ms, rounded up: QMP's asks are timed by poll(), in ms. */
void opt_qmp_timeout(const char *arg, void *to, struct argp_state *state)
{
	__u64 ns = duration_arg(arg, "--qmp-timeout", DUR_MS, 60 * DUR_S, state);

	*(int *)to = (int)((ns + 999999) / 1000000);
}

void opt_duration_s(const char *arg, void *to, struct argp_state *state)
{
	*(double *)to = duration_arg(arg, "--duration", DUR_NS, 365 * 24 * DUR_H, state) / DUR_S;
}

void opt_sample(const char *arg, void *to, struct argp_state *state)
{
	long v;

	if (!strict_long(arg, 10, &v) || v < 1 || v > 0x7fffffff)
		argp_error(state, "invalid --sample '%s': give N >= 1 (keep 1 exit in N)", arg);
	*(__u32 *)to = (__u32)v;
}

void opt_ringbuf_kb(const char *arg, void *to, struct argp_state *state)
{
	long v;

	/* The kernel wants a power-of-two number of pages, and a size that fits its __u32
	 * max_entries: 4 GiB would wrap to 0 and fail the load with EINVAL. */
	if (!strict_long(arg, 10, &v) || v < 4 || v > (1L << 21) || (v & (v - 1)))
		argp_error(state, "invalid --ringbuf-kb '%s': give a power of two from 4 to "
			   "2097152", arg);
	*(__u32 *)to = (__u32)v;
}

void opt_kvm_events(const char *arg, void *to, struct argp_state *state)
{
	char err[256];

	if (kvm_event_parse_list(arg, to, err, sizeof(err)))
		argp_error(state, "invalid --kvm-events: %s", err);
}

void opt_perfetto_format(const char *arg, void *to, struct argp_state *state)
{
	static const char *const names[] = { "json", "proto" };

	*(int *)to = TRACE_JSON + parse_choice_arg(arg, "--perfetto-format", names,
								 2, state);
}
