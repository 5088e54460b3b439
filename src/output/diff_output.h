/* SPDX-License-Identifier: GPL-2.0 */
/* `vmexit diff` output: the ranked rows as a table, CSV or JSON, and --folded stack lines. */
#ifndef VMEXIT_DIFF_OUTPUT_H
#define VMEXIT_DIFF_OUTPUT_H

#include <stdio.h>
#include "run_diff.h"
#include "stat_output.h"

struct diff_source {
	const char *path;
	const struct run_profile *p;
};

/* 0, or -errno of the failed write. */
int diff_print(enum out_format fmt, const struct run_diff *d, const struct diff_source *before,
	       const struct diff_source *after, FILE *f);
/* difffolded.pl's input: "guest;reason;frame;...;frame BEFORE AFTER", ns. 0 or -errno. */
int diff_print_folded(const struct run_profile *before, const struct run_profile *after, FILE *f);

/* The tests, in words, for the header, the help and JSON. */
#define DIFF_RATE_TEST	"conditional binomial test of the counts over guest time"
#define DIFF_LAT_TEST	"chi-square test on the latency histograms' buckets"

#endif /* VMEXIT_DIFF_OUTPUT_H */
