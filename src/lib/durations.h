/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Durations as users write and read them: one list of units (ns, us, ms, s, m, h) for every
 * option that takes a duration and for every output that prints one scaled to its unit, and
 * one rule: a duration takes its unit (a bare number would read as ns to one user, seconds to
 * the next), and one message when it is refused.
 */
#ifndef VMEXIT_DURATIONS_H
#define VMEXIT_DURATIONS_H

#include <stddef.h>
#include <linux/types.h>

#define DUR_NS		1.0
#define DUR_MS		1e6
#define DUR_S		1e9
#define DUR_H		3600e9
#define DUR_WEEK	(7 * 24 * DUR_H)

/* The rule, said at the end of every --help with a DURATION. */
#define DURATION_HELP \
	"A DURATION takes its unit: ns, us, ms, s, m or h (500ms, 2s); a bare number is refused.\n"

/*
 * s as a number and its unit, the whole string, finite, from min_ns to max_ns (a range is
 * checked before anything is converted: a value past 2^64 ns cannot wrap into a small one).
 * *ns: the number times its unit, unrounded. 0, or -EINVAL (a bare number included).
 */
int parse_duration(const char *s, double min_ns, double max_ns, double *ns);
/* The same, rounded to whole ns (max_ns must be below 2^64). */
int parse_duration_ns(const char *s, double min_ns, double max_ns, __u64 *ns);
/*
 * The one message for a refused duration, what naming the option: "invalid WHAT 'S': give a
 * duration with its unit (ns, us, ms, s, m or h) from MIN to MAX, e.g. 500ms or 2s".
 */
void duration_refusal(char *buf, size_t len, const char *what, const char *s, double min_ns,
		      double max_ns);

/* The unit ns reads best in: ns below 1 us, else the largest of us, ms and s not above it.
 * Returns its suffix; *per_unit: ns in one of it. */
const char *duration_unit(__u64 ns, double *per_unit);
/* "12.3us": a duration scaled to its unit (unit_ns 0), or in unit_ns (1, 1000 or 1000000)
 * without a suffix: one decimal, three in ms below 1 ms ("0.008"). For tables and lines. */
const char *fmt_duration(__u64 unit_ns, __u64 ns, char *buf, size_t len);
/* The suffix of unit_ns (1, 1000, 1000000): "ns", "us", "ms"; "" for 0 (scaled). */
const char *fixed_unit_suffix(__u64 unit_ns);
/* ns exactly, in the unit it reads best in ("960ns", "1.024us", "137.438953472s"), or in whole
 * minutes or hours when it is a number of them ("5m", "168h"): for errors, not tables. */
void duration_str(char *buf, size_t len, double ns);

#endif /* VMEXIT_DURATIONS_H */
