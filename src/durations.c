// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
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

int parse_duration(const char *s, double bare_ns, double shortest_ns, double longest_ns,
		   double *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !isfinite(v))
		return -EINVAL;
	if (!*end && bare_ns) {
		*ns = v * bare_ns;
		return 0;
	}
	for (size_t i = 0; i < NR_UNITS; i++) {
		if (units[i].ns >= shortest_ns && units[i].ns <= longest_ns &&
		    !strcmp(end, units[i].sfx)) {
			*ns = v * units[i].ns;
			return 0;
		}
	}
	return -EINVAL;
}

const char *duration_unit(__u64 ns, double *per_unit)
{
	size_t i = 0;

	while (i + 1 < NR_PRINTED && ns >= units[i + 1].ns)
		i++;
	*per_unit = units[i].ns;
	return units[i].sfx;
}
