/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Durations as users write and read them: one list of units (ns, us, ms, s, m, h) for every
 * option that takes a duration and for every output that prints one scaled to its unit.
 */
#ifndef VMEXIT_DURATIONS_H
#define VMEXIT_DURATIONS_H

#include <linux/types.h>

#define DUR_NS		1.0
#define DUR_S		1e9
#define DUR_H		3600e9
#define DUR_UNIT_REQUIRED	0.0	/* as bare_ns: a number without a unit is refused */

/*
 * s as a number and a unit from shortest_ns to longest_ns (DUR_NS to DUR_H), the whole
 * string, finite and >= 0; a bare number is in bare_ns (or refused: DUR_UNIT_REQUIRED).
 * *ns: the number times its unit, unrounded. 0, or -EINVAL.
 */
int parse_duration(const char *s, double bare_ns, double shortest_ns, double longest_ns,
		   double *ns);

/* The unit ns reads best in: ns below 1 us, else the largest of us, ms and s not above it.
 * Returns its suffix; *per_unit: ns in one of it. */
const char *duration_unit(__u64 ns, double *per_unit);

#endif /* VMEXIT_DURATIONS_H */
