/* SPDX-License-Identifier: GPL-2.0 */
/* Log-linear bucket math, shared by the BPF handlers and userspace so both agree exactly. */
#ifndef VMEXIT_HIST_H
#define VMEXIT_HIST_H

#include "vmexit.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#ifdef __bpf__
/*
 * floor(log2(v)) for v > 0 in BPF, which has no count-leading-zeros: every bit below the
 * highest set, the highest alone left, and a de Bruijn sequence's multiply names it in a table
 * of 64. About 20 instructions on every exit's completion, where the search below took 37
 * (docs/design.md); tests/bpf/test_bpf_hist.c checks both agree.
 */
static const __u8 hist_log2_tab[64] = {
	63, 0, 58, 1, 59, 47, 53, 2, 60, 39, 48, 27, 54, 33, 42, 3,
	61, 51, 37, 40, 49, 18, 28, 20, 55, 30, 34, 11, 43, 14, 22, 4,
	62, 57, 46, 52, 38, 26, 32, 41, 50, 36, 17, 19, 29, 10, 13, 21,
	56, 45, 25, 31, 35, 16, 9, 12, 44, 24, 15, 8, 23, 7, 6, 5,
};

static __always_inline __u32 hist_log2(__u64 v)
{
	v |= v >> 1;
	v |= v >> 2;
	v |= v >> 4;
	v |= v >> 8;
	v |= v >> 16;
	v |= v >> 32;
	return hist_log2_tab[((v - (v >> 1)) * 0x07EDD5E59A4E28C2ull) >> 58];
}
#else
/* floor(log2(v)) for v > 0, branch-light and loop-free. */
static __always_inline __u32 hist_log2(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5; v >>= s; r |= s;
	s = (v > 0xffff) << 4; v >>= s; r |= s;
	s = (v > 0xff) << 3; v >>= s; r |= s;
	s = (v > 0xf) << 2; v >>= s; r |= s;
	s = (v > 0x3) << 1; v >>= s; r |= s;
	r |= (v >> 1);
	return r;
}
#endif

static __always_inline __u32 hist_bucket(__u64 v)
{
	__u32 e;

	if (v < HIST_EXACT)
		return (__u32)v;
	e = hist_log2(v);
	if (e >= HIST_MAX_POW)
		return NR_BUCKETS - 1;
	return HIST_EXACT + (e - HIST_MIN_POW) * HIST_SUB +
	       (__u32)((v >> (e - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

/* Smallest value that lands in bucket b. */
static __always_inline __u64 hist_bucket_low(__u32 b)
{
	__u32 e, sub;

	if (b < HIST_EXACT)
		return b;
	if (b >= NR_BUCKETS - 1)
		return 1ULL << HIST_MAX_POW;
	e = (b - HIST_EXACT) / HIST_SUB + HIST_MIN_POW;
	sub = (b - HIST_EXACT) % HIST_SUB;
	return (1ULL << e) + ((__u64)sub << (e - HIST_SUB_BITS));
}

/* One past the largest value of bucket b (the overflow bucket has no end: ~0). */
static __always_inline __u64 hist_bucket_high(__u32 b)
{
	if (b >= NR_BUCKETS - 1)
		return ~0ULL;
	return hist_bucket_low(b + 1);
}

#endif /* VMEXIT_HIST_H */
