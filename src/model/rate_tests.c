// SPDX-License-Identifier: GPL-2.0
/* diff's significance tests (rate_tests.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "rate_tests.h"

static double log_binom_pmf(__u64 k, __u64 n, double lp, double lq)
{
	return lgamma((double)n + 1) - lgamma((double)k + 1) - lgamma((double)(n - k) + 1) +
	       (double)k * lp + (double)(n - k) * lq;
}

double rate_test_p(__u64 c1, double t1, __u64 c2, double t2)
{
	__u64 n = c1 + c2;
	double p0, lp, lq, lobs, sum = 0, z, mean, sd;

	if (!n || t1 <= 0 || t2 <= 0)
		return 1;
	p0 = t2 / (t1 + t2);
	if (n > RATE_EXACT_MAX) {
		mean = n * p0;
		sd = sqrt(n * p0 * (1 - p0));
		z = fabs((double)c2 - mean) - 0.5;	/* continuity correction */
		if (z <= 0)
			return 1;
		return erfc(z / sd / M_SQRT2);
	}
	/* Exact: the total probability of the outcomes no likelier than the one seen. */
	lp = log(p0);
	lq = log1p(-p0);
	lobs = log_binom_pmf(c2, n, lp, lq);
	for (__u64 k = 0; k <= n; k++) {
		double l = log_binom_pmf(k, n, lp, lq);

		/* a relative tolerance, so that ties of the observed outcome count */
		if (l <= lobs + 1e-7 * fabs(lobs))
			sum += exp(l);
	}
	return sum > 1 ? 1 : sum;
}

/* Regularized lower incomplete gamma P(a, x) by its series (x < a + 1). */
static double gamma_p_series(double a, double x)
{
	double term = 1 / a, sum = term;

	for (int n = 1; n < 10000; n++) {
		term *= x / (a + n);
		sum += term;
		if (fabs(term) < fabs(sum) * 1e-15)
			break;
	}
	return sum * exp(-x + a * log(x) - lgamma(a));
}

/* Regularized upper incomplete gamma Q(a, x) by Lentz's continued fraction (x >= a + 1). */
static double gamma_q_cf(double a, double x)
{
	const double tiny = 1e-300;
	double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;

	for (int i = 1; i < 10000; i++) {
		double an = -i * (i - a), del;

		b += 2;
		d = an * d + b;
		if (fabs(d) < tiny)
			d = tiny;
		c = b + an / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < 1e-15)
			break;
	}
	return exp(-x + a * log(x) - lgamma(a)) * h;
}

double chi2_sf(double x, double df)
{
	double a = df / 2, h = x / 2;

	if (x <= 0 || df <= 0)
		return 1;
	if (h < a + 1)
		return 1 - gamma_p_series(a, h);
	return gamma_q_cf(a, h);
}

double hist_test_p(const __u64 *h1, const __u64 *h2, size_t nb)
{
	double n1 = 0, n2 = 0, n, chi = 0, a = 0, b = 0;
	int bins = 0;

	for (size_t i = 0; i < nb; i++) {
		n1 += (double)h1[i];
		n2 += (double)h2[i];
	}
	if (!n1 || !n2)
		return 1;
	n = n1 + n2;
	/*
	 * Bins of neighbouring buckets, each closed once both sides expect 5 exits in it (the
	 * chi-square approximation's rule); what is left at the end joins the last bin.
	 */
	double last_a = 0, last_b = 0;

	for (size_t i = 0; i < nb; i++) {
		a += (double)h1[i];
		b += (double)h2[i];
		if ((a + b) * n1 / n >= 5 && (a + b) * n2 / n >= 5) {
			if (bins) {
				double e1 = (last_a + last_b) * n1 / n, e2 = (last_a + last_b) * n2 / n;

				chi += (last_a - e1) * (last_a - e1) / e1 +
				       (last_b - e2) * (last_b - e2) / e2;
			}
			last_a = a;
			last_b = b;
			a = b = 0;
			bins++;
		}
	}
	if (!bins)
		return 1;
	last_a += a;
	last_b += b;
	{
		double e1 = (last_a + last_b) * n1 / n, e2 = (last_a + last_b) * n2 / n;

		chi += (last_a - e1) * (last_a - e1) / e1 + (last_b - e2) * (last_b - e2) / e2;
	}
	if (bins < 2)
		return 1;
	return chi2_sf(chi, bins - 1);
}

struct p_at {
	double p;
	size_t i;
};

static int p_cmp(const void *a, const void *b)
{
	double x = ((const struct p_at *)a)->p, y = ((const struct p_at *)b)->p;

	return x < y ? -1 : x > y;
}

int holm_reject(const double *p, size_t n, double alpha, unsigned char *reject)
{
	struct p_at *s = calloc(n ? n : 1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		s[i] = (struct p_at){ p[i], i };
		reject[i] = 0;
	}
	qsort(s, n, sizeof(*s), p_cmp);
	/* The k-th smallest p-value is compared with alpha / (n - k); the first to fail stops. */
	for (size_t k = 0; k < n; k++) {
		if (s[k].p > alpha / (double)(n - k))
			break;
		reject[s[k].i] = 1;
	}
	free(s);
	return 0;
}
