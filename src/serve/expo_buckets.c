// SPDX-License-Identifier: GPL-2.0
/*
 * The exposition's histogram bounds: the default powers of two, and --buckets lists parsed
 * into edges of the in-kernel histogram, each with its le label.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "durations.h"
#include "expo_buckets.h"
#include "hist.h"

static void le_format(char *out, __u64 ns)
{
	double v = ns / 1e9;

	/* The shortest decimal that reads back as the same double: "2.56e-07", not 17 digits. */
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(out, EXPO_LE_MAX, "%.*g", prec, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

static void bounds_set(struct expo_buckets *b, __u32 i, __u32 bucket)
{
	b->bucket[i] = bucket;
	le_format(b->le[i], hist_bucket_low(bucket));
}

void expo_buckets_default(struct expo_buckets *b)
{
	b->nr = 0;
	for (__u32 e = 8; e <= 31; e++)
		bounds_set(b, b->nr++, hist_bucket(1ULL << e));
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static int parse_bound(const char *item, __u32 *bucket, char *err, size_t errlen)
{
	char lo[32], hi[32];
	double ns;
	__u64 n;
	__u32 b;

	/* From the first edge to the last (137.438953472s, as its decimal digits read). */
	if (parse_duration(item, DUR_NS, (double)(1ULL << HIST_MAX_POW) + 0.5, &ns)) {
		duration_refusal(err, errlen, "--buckets bound", item, DUR_NS,
				 (double)(1ULL << HIST_MAX_POW));
		return -1;
	}
	n = (__u64)llround(ns);
	b = hist_bucket(n);
	if (n < 1 || fabs(ns - (double)n) > 1e-6 * ns || hist_bucket_low(b) != n) {
		/* The edges around it: where n falls, and the next one. */
		if (n < 1)
			n = 1;
		b = hist_bucket(n);
		duration_str(lo, sizeof(lo), hist_bucket_low(b));
		duration_str(hi, sizeof(hi), hist_bucket_high(b));
		snprintf(err, errlen,
			 "--buckets: %s is not an edge of the in-kernel histogram, whose bucket "
			 "counts would have to be split; the nearest edges are %s and %s",
			 item, lo, hi);
		return -1;
	}
	*bucket = b;
	return 0;
}

int expo_buckets_parse(const char *list, struct expo_buckets *b, char *err, size_t errlen)
{
	char *copy = strdup(list), *save = NULL, *item;
	__u32 found[EXPO_MAX_BOUNDS], nr = 0;

	if (!copy) {
		snprintf(err, errlen, "--buckets: out of memory");
		return -1;
	}
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		if (nr == EXPO_MAX_BOUNDS) {
			snprintf(err, errlen, "--buckets: more than %d bounds", EXPO_MAX_BOUNDS);
			goto fail;
		}
		if (parse_bound(item, &found[nr], err, errlen))
			goto fail;
		nr++;
	}
	if (!nr) {
		snprintf(err, errlen, "--buckets: an empty list (give bounds like 1us,10ms,1s)");
		goto fail;
	}
	free(copy);
	qsort(found, nr, sizeof(found[0]), cmp_u32);
	b->nr = 0;
	for (__u32 i = 0; i < nr; i++)
		if (!i || found[i] != found[i - 1])
			bounds_set(b, b->nr++, found[i]);
	return 0;
fail:
	free(copy);
	return -1;
}
