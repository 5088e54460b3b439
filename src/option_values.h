/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Checked parsers for option values. Every number an option takes goes through strict_long()
 * or strict_double() (the whole string, no overflow, finite); the *_arg() helpers report a bad
 * value the one way usage errors are reported: argp_error(), naming the option and what to
 * give, exit status 2.
 */
#ifndef VMEXIT_OPTION_VALUES_H
#define VMEXIT_OPTION_VALUES_H

#include <argp.h>
#include <stdbool.h>
#include <linux/types.h>

/* The whole of s as a number (base 0: 0x.. and 0.. prefixes too); false if it is not one. */
bool strict_long(const char *s, int base, long *v);
bool strict_double(const char *s, double *v);
/* "250us", "1.5ms", "2s", "800" (ns): parse_duration() rounded to ns. 0, or -EINVAL. */
int parse_duration_ns(const char *s, __u64 *ns);

/* A number in [min, max]: "invalid WHAT 'ARG': give a number from MIN to MAX" otherwise. */
long parse_long_arg(const char *arg, const char *what, long min, long max,
		    struct argp_state *state);
/* --tsc-mhz: a TSC frequency in MHz. */
double parse_tsc_mhz_arg(const char *arg, struct argp_state *state);
/* --min-latency: a duration (parse_duration_ns()) in ns. */
__u64 parse_min_latency_arg(const char *arg, struct argp_state *state);
/* An interval in seconds, 0.01 to 86400 (stat's positional interval, top -d). */
double parse_interval_arg(const char *arg, struct argp_state *state);
/* A number of intervals >= 1 (stat's positional count, top -n). */
long parse_count_arg(const char *arg, struct argp_state *state);
/* stat, top and stream --stuck: a duration above 0 (parse_duration_ns()). */
__u64 parse_stuck_arg(const char *arg, struct argp_state *state);
/* serve --stuck: a duration with its unit, ns to s; 0 allowed. */
__u64 parse_serve_stuck_arg(const char *arg, struct argp_state *state);
/* serve --keep: a duration with its unit, s, m or h, up to a week. */
__u64 parse_keep_arg(const char *arg, struct argp_state *state);

#endif /* VMEXIT_OPTION_VALUES_H */
