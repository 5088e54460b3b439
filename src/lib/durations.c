// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "durations.h"

static const struct {
	const char *sfx;
	double ns;
} units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
};

#define NR_UNITS	(sizeof(units) / sizeof(units[0]))
#define NR_PRINTED	4	/* ns to s: minutes would read worse than 90.00s */

int parse_duration(const char *s, double min_ns, double max_ns, double *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -EINVAL;
	for (size_t i = 0; i < NR_UNITS; i++) {
		if (!strcmp(end, units[i].sfx)) {
			v *= units[i].ns;
			if (!(v >= min_ns && v <= max_ns))
				return -EINVAL;
			*ns = v;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_duration_ns(const char *s, double min_ns, double max_ns, __u64 *ns)
{
	double v;

	if (parse_duration(s, min_ns, max_ns, &v))
		return -EINVAL;
	*ns = (__u64)(v + 0.5);
	return 0;
}

void duration_refusal(char *buf, size_t len, const char *what, const char *s, double min_ns,
		      double max_ns)
{
	char lo[32], hi[32];

	duration_str(lo, sizeof(lo), min_ns);
	duration_str(hi, sizeof(hi), max_ns);
	snprintf(buf, len, "invalid %s '%s': give a duration with its unit (ns, us, ms, s, m or h) "
		 "from %s to %s, e.g. 500ms or 2s", what, s, lo, hi);
}

const char *duration_unit(__u64 ns, double *per_unit)
{
	size_t i = 0;

	while (i + 1 < NR_PRINTED && ns >= units[i + 1].ns)
		i++;
	*per_unit = units[i].ns;
	return units[i].sfx;
}

void duration_str(char *buf, size_t len, double ns)
{
	double per;
	const char *unit;

	for (size_t i = NR_UNITS; i-- > NR_PRINTED;) {
		if (ns >= units[i].ns && fmod(ns, units[i].ns) == 0) {
			snprintf(buf, len, "%.0f%s", ns / units[i].ns, units[i].sfx);
			return;
		}
	}
	unit = duration_unit((__u64)ns, &per);
	if (per == DUR_NS)
		snprintf(buf, len, "%.0f%s", ns, unit);
	else
		snprintf(buf, len, "%.*g%s", per == DUR_S ? 12 : 10, ns / per, unit);
}

const char *fmt_duration(__u64 unit_ns, __u64 ns, char *buf, size_t len)
{
	double per;
	const char *unit = duration_unit(ns, &per);

	if (unit_ns == 1)
		snprintf(buf, len, "%llu", (unsigned long long)ns);
	else if (unit_ns == 1000000 && ns < unit_ns)
		/* Most exits take microseconds: with one decimal they would all read 0.0. */
		snprintf(buf, len, "%.3f", (double)ns / (double)unit_ns);
	else if (unit_ns)
		snprintf(buf, len, "%.1f", (double)ns / (double)unit_ns);
	else if (per == DUR_NS)
		snprintf(buf, len, "%llu%s", (unsigned long long)ns, unit);
	else
		snprintf(buf, len, "%.*f%s", per == DUR_S ? 2 : 1, ns / per, unit);
	return buf;
}

const char *fixed_unit_suffix(__u64 unit_ns)
{
	return unit_ns == 1 ? "ns" : unit_ns == 1000 ? "us" : unit_ns ? "ms" : "";
}
