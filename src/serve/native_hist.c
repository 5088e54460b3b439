// SPDX-License-Identifier: GPL-2.0
/* Kernel histogram buckets merged into native histogram buckets (native_hist.h says why these). */
#include <string.h>
#include "hist.h"
#include "native_hist.h"

__u32 native_slot_of(__u32 b)
{
	if (b == 0)
		return 0;
	if (b >= NR_BUCKETS - 1)
		return NATIVE_SLOTS - 1;
	/* [lo, hi) with 2^e <= lo: native bucket e + 1, which ends at 2^(e+1) >= hi. */
	return hist_log2(hist_bucket_low(b)) + 1;
}

void native_hist_of(const __u64 *hist, __u64 out[NATIVE_SLOTS])
{
	memset(out, 0, NATIVE_SLOTS * sizeof(out[0]));
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		out[native_slot_of(b)] += hist[b];
}
