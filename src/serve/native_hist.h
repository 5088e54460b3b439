/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel log-linear histogram as a Prometheus native histogram. Native bucket i of
 * schema s ends at 2^(i * 2^-s); the kernel's edges are 2^e * (1 + k/8) ns. The only native
 * edges that are kernel edges are the powers of two, and only when the unit is a power of two
 * of nanoseconds (10^9 is not one: no native edge in seconds is a kernel edge). So: schema 0,
 * in nanoseconds. Each kernel bucket then lies whole in one native bucket (a power of two of
 * the kernel's eight sub-buckets merge into one), every count is exact, and a native bucket
 * spans a factor of 2: a quantile read from it is within -50 %/+100 % of the true value, and
 * the bucket's geometric middle within a factor of sqrt(2) (-29 %/+41 %).
 *
 * As with the classic le bounds, a bucket holds its lower edge and not its upper one: the
 * kernel buckets [lo, hi) go to the native bucket whose upper edge is the power of two above
 * lo, and the zero bucket (threshold 1 ns) holds the exits shorter than 1 ns.
 */
#ifndef VMEXIT_NATIVE_HIST_H
#define VMEXIT_NATIVE_HIST_H

#include <linux/types.h>
#include "vmexit.h"

#define NATIVE_SCHEMA		0
#define NATIVE_ZERO_THRESHOLD	1.0	/* ns: the zero bucket is the kernel's bucket 0 */
/*
 * Slot 0: the zero bucket; slot i (1 .. HIST_MAX_POW + 1): native bucket i, (2^(i-1), 2^i] ns.
 * The kernel's last bucket (2^37 ns, 137 s, and up) has no end: it goes to the last slot,
 * native bucket 38 (137 s to 275 s); exits that long are counted, their length capped there.
 */
#define NATIVE_SLOTS		(HIST_MAX_POW + 2)

/* The native bucket (slot) that holds kernel bucket b. */
__u32 native_slot_of(__u32 b);
/* hist's NR_BUCKETS kernel buckets merged into NATIVE_SLOTS native ones. */
void native_hist_of(const __u64 *hist, __u64 out[NATIVE_SLOTS]);

#endif /* VMEXIT_NATIVE_HIST_H */
