// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bucket_run.h"

__u32 bucket_run_get(const struct bucket_run *r, __u32 j)
{
	switch (r->shift) {
	case 0:
		return ((const __u8 *)r->v)[j];
	case 1:
		return ((const __u16 *)r->v)[j];
	default:
		return ((const __u32 *)r->v)[j];
	}
}

static void put(void *v, __u8 shift, __u32 j, __u32 x)
{
	switch (shift) {
	case 0:
		((__u8 *)v)[j] = (__u8)x;
		break;
	case 1:
		((__u16 *)v)[j] = (__u16)x;
		break;
	default:
		((__u32 *)v)[j] = x;
	}
}

/* The OR of now[from, to), four buckets a step: no branch per bucket. */
static __u32 or_of(const __u32 *now, __u32 from, __u32 to)
{
	__u32 a = 0, b = 0, c = 0, d = 0, i = from;

	for (; i + 4 <= to; i += 4) {
		a |= now[i];
		b |= now[i + 1];
		c |= now[i + 2];
		d |= now[i + 3];
	}
	for (; i < to; i++)
		a |= now[i];
	return a | b | c | d;
}

/* The width a value of bits needs. */
static __u8 shift_of(__u32 bits)
{
	return bits > 0xffff ? 2 : bits > 0xff ? 1 : 0;
}

int bucket_run_fit(struct bucket_run *r, const __u32 *now)
{
	__u32 lo = NR_BUCKETS, hi = 0, bits = 0, nlo, nhi;
	__u8 shift;
	void *v;

	/* What a sample meets most: the run already holds every bucket that has counted. */
	if (r->n && !or_of(now, 0, r->lo) && !or_of(now, r->lo + r->n, NR_BUCKETS) &&
	    shift_of(or_of(now, r->lo, r->lo + r->n)) <= r->shift)
		return 0;
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (now[b]) {
			lo = b < lo ? b : lo;
			hi = b + 1;
			bits |= now[b];	/* over 0xff (0xffff) iff a value is */
		}
	}
	if (lo >= hi)
		return 0;
	shift = shift_of(bits);
	if (r->n && r->shift > shift)
		shift = r->shift;
	if (r->n && lo >= r->lo && hi <= (__u32)r->lo + r->n && shift == r->shift)
		return 0;
	nlo = r->n && r->lo < lo ? r->lo : lo;
	nhi = r->n && (__u32)r->lo + r->n > hi ? (__u32)r->lo + r->n : hi;
	v = calloc(nhi - nlo, 1u << shift);
	if (!v)
		return -ENOMEM;
	for (__u32 j = 0; j < r->n; j++)
		put(v, shift, r->lo - nlo + j, bucket_run_get(r, j));
	free(r->v);
	r->v = v;
	r->lo = nlo;
	r->n = nhi - nlo;
	r->shift = shift;
	return 0;
}

void bucket_run_store(struct bucket_run *r, const __u32 *now)
{
	for (__u32 j = 0; j < r->n; j++)
		put(r->v, r->shift, j, now[r->lo + j]);
}

/* One loop per width: a sample takes every cell's run, with no branch per bucket. */
void bucket_run_sub(const struct bucket_run *r, const __u32 *now, __u64 *d)
{
	const __u32 *n = now + r->lo;
	__u64 *o = d + r->lo;

	switch (r->shift) {
	case 0:
		for (__u32 j = 0; j < r->n; j++)
			o[j] = (__u32)(n[j] - ((const __u8 *)r->v)[j]);
		break;
	case 1:
		for (__u32 j = 0; j < r->n; j++)
			o[j] = (__u32)(n[j] - ((const __u16 *)r->v)[j]);
		break;
	default:
		for (__u32 j = 0; j < r->n; j++)
			o[j] = (__u32)(n[j] - ((const __u32 *)r->v)[j]);
	}
}

/* One loop per width, each value read once: what is summed is what is stored. */
#define ADVANCE(type)								\
	do {									\
		type *v = r->v;							\
										\
		for (__u32 j = 0; j < r->n; j++) {				\
			__u32 x = n[j];						\
										\
			sums[s[j]] += (__u32)(x - v[j]);			\
			v[j] = (type)x;						\
		}								\
	} while (0)

void bucket_run_advance(struct bucket_run *r, const __u32 *now, const __u16 *slot, __u64 *sums)
{
	const __u32 *n = now + r->lo;
	const __u16 *s = slot + r->lo;

	switch (r->shift) {
	case 0:
		ADVANCE(__u8);
		break;
	case 1:
		ADVANCE(__u16);
		break;
	default:
		ADVANCE(__u32);
	}
}
#undef ADVANCE

void bucket_run_free(struct bucket_run *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
