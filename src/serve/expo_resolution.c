// SPDX-License-Identifier: GPL-2.0
/* The runs of kernel buckets serve's rows are kept in (expo_resolution.h). */
#include "expo_resolution.h"
#include "native_hist.h"

void expo_resolution(const struct expo_buckets *b, struct hist_coarse *m)
{
	bool starts[NR_BUCKETS] = {};

	for (__u32 k = 1; k < NR_BUCKETS; k++)
		starts[k] = native_slot_of(k) != native_slot_of(k - 1);
	for (__u32 i = 0; i < b->nr; i++)
		starts[b->bucket[i]] = true;
	hist_coarse_init(m, starts);
}
