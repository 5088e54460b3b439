/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resolution serve keeps its rows since the start at (live/sampler.h: so.hist_coarse): a
 * run of kernel buckets begins at every le bound (expo_buckets.h) and every native bucket's
 * first kernel bucket (native_hist.h), so that each classic and native count a scrape exports
 * is a sum of whole runs. With the default bounds (powers of two) that is the native buckets'
 * 39 runs.
 */
#ifndef VMEXIT_EXPO_RESOLUTION_H
#define VMEXIT_EXPO_RESOLUTION_H

#include "coarse_rows.h"
#include "expo_buckets.h"

void expo_resolution(const struct expo_buckets *b, struct hist_coarse *m);

#endif
