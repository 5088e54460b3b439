/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMEXIT_EXPO_BUCKETS_H
#define VMEXIT_EXPO_BUCKETS_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Histogram bounds. Each is an edge of the in-kernel log-linear histogram, so the cumulative
 * count of a bound is a sum of whole kernel buckets: exits shorter than the bound.
 */
#define EXPO_MAX_BOUNDS		64
#define EXPO_LE_MAX		32

struct expo_buckets {
	__u32 nr;
	__u32 bucket[EXPO_MAX_BOUNDS];	/* kernel bucket starting at the bound */
	char le[EXPO_MAX_BOUNDS][EXPO_LE_MAX];	/* the bound in seconds, as the le label */
};

/* Powers of two from 256 ns to 2^31 ns (2.15 s). */
void expo_buckets_default(struct expo_buckets *b);
/*
 * A --buckets list: comma-separated durations with a unit (ns, us, ms, s; a bare number is
 * seconds, as in le labels), each an edge of the kernel histogram. Sorted, duplicates dropped.
 * 0, or -1 with err naming the bad item and the nearest edges.
 */
int expo_buckets_parse(const char *list, struct expo_buckets *b, char *err, size_t errlen);

#endif
