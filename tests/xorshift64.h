/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one pseudo-random generator of the tests and benches: xorshift64 (Marsaglia), fixed seeds so
 * that a failing run repeats exactly. Not for anything that needs real randomness.
 */
#ifndef VMEXIT_XORSHIFT64_H
#define VMEXIT_XORSHIFT64_H

#include <linux/types.h>

/* A seed that is not 0 (0 is xorshift's one fixed point). */
#define XORSHIFT64_SEED	0x9e3779b97f4a7c15ull

static inline __u64 xorshift64(__u64 *state)
{
	__u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
