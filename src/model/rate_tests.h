/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The significance tests of `vmexit diff`, each a two-sided p-value:
 *  - counts as rates: the conditional binomial test of two Poisson counts with their exposures
 *    (given n = c1 + c2 exits, c2 ~ Binomial(n, t2 / (t1 + t2)) when the rate did not change),
 *    exact up to RATE_EXACT_MAX exits, its normal approximation above;
 *  - latencies as distributions: Pearson's chi-square test of homogeneity on the two
 *    histograms' buckets, neighbours merged until each bin expects at least 5 exits per side;
 *  - Holm's step-down over all of a diff's tests, which holds the family-wise error rate.
 */
#ifndef VMEXIT_RATE_TESTS_H
#define VMEXIT_RATE_TESTS_H

#include <stddef.h>
#include <linux/types.h>

#define RATE_EXACT_MAX	200000ull

/* p-value that counts c1 over exposure t1 and c2 over t2 come from one Poisson rate. */
double rate_test_p(__u64 c1, double t1, __u64 c2, double t2);
/* p-value that two histograms of nb buckets come from one distribution (1 when untestable). */
double hist_test_p(const __u64 *h1, const __u64 *h2, size_t nb);
/* Upper tail of the chi-square distribution with df degrees of freedom. */
double chi2_sf(double x, double df);
/* Holm: reject[i] = 1 for the p-values that stay significant at family-wise level alpha. */
int holm_reject(const double *p, size_t n, double alpha, unsigned char *reject);

#endif /* VMEXIT_RATE_TESTS_H */
