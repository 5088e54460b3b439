// SPDX-License-Identifier: GPL-2.0
/*
 * printf-free number formatting: edge values against strings worked out by hand, then each
 * formatter against the printf conversion it replaces over many values, including the exact
 * ties of the double rounding that "%.9f" of ns / 1e9 shows after 97 days of uptime.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "fmt_num.h"

static char out[FMT_F0_MAX + 1];

#define FMT(call)	(*(call) = '\0', out)
#define P		out

static void test_exact(void)
{
	CHECK_STR(FMT(fmt_u64(P, 0)), "0");
	CHECK_STR(FMT(fmt_u64(P, 9)), "9");
	CHECK_STR(FMT(fmt_u64(P, 10)), "10");
	CHECK_STR(FMT(fmt_u64(P, 1000000000)), "1000000000");
	CHECK_STR(FMT(fmt_u64(P, UINT64_MAX)), "18446744073709551615");
	CHECK_STR(FMT(fmt_s64(P, 0)), "0");
	CHECK_STR(FMT(fmt_s64(P, -1)), "-1");
	CHECK_STR(FMT(fmt_s64(P, -1000)), "-1000");
	CHECK_STR(FMT(fmt_s64(P, INT64_MIN)), "-9223372036854775808");
	CHECK_STR(FMT(fmt_s64(P, INT64_MAX)), "9223372036854775807");
	CHECK_STR(FMT(fmt_hex(P, 0)), "0");
	CHECK_STR(FMT(fmt_hex(P, 0xf)), "f");
	CHECK_STR(FMT(fmt_hex(P, 0x10)), "10");
	CHECK_STR(FMT(fmt_hex(P, 0xdeadbeef00)), "deadbeef00");
	CHECK_STR(FMT(fmt_hex(P, UINT64_MAX)), "ffffffffffffffff");

	CHECK_STR(FMT(fmt_us3(P, 0)), "0.000");
	CHECK_STR(FMT(fmt_us3(P, 7)), "0.007");
	CHECK_STR(FMT(fmt_us3(P, 1000)), "1.000");
	CHECK_STR(FMT(fmt_us3(P, 1000000000)), "1000000.000");
	CHECK_STR(FMT(fmt_us3(P, 123456789)), "123456.789");
	CHECK_STR(FMT(fmt_us3(P, UINT64_MAX)), "18446744073709551.615");

	CHECK_STR(FMT(fmt_sec9(P, 0)), "0.000000000");
	CHECK_STR(FMT(fmt_sec9(P, 1)), "0.000000001");
	CHECK_STR(FMT(fmt_sec9(P, 1000000000)), "1.000000000");
	CHECK_STR(FMT(fmt_sec9(P, 5123456789)), "5.123456789");
	CHECK_STR(FMT(fmt_sec9(P, 2292397170000)), "2292.397170000");
	/* Below 2^23 s the double still resolves 1 ns: the exact decimal. */
	CHECK_STR(FMT(fmt_sec9(P, 8388607999999999)), "8388607.999999999");
	/* A year of uptime: the double's last digit, as printf had it (not ...789). */
	CHECK_STR(FMT(fmt_sec9(P, 31536000123456789)), "31536000.123456787");
	/* A tie of the double rounding: 2^23 + 1/1024 s, rounded to even. */
	CHECK_STR(FMT(fmt_sec9(P, 8388608000976562)), "8388608.000976562");
	CHECK_STR(FMT(fmt_sec9(P, 8388608002929688)), "8388608.002929688");
	CHECK_STR(FMT(fmt_sec9(P, UINT64_MAX)), "18446744073.709552765");

	CHECK_STR(FMT(fmt_f0(P, 0)), "0");
	CHECK_STR(FMT(fmt_f0(P, -0.0)), "-0");
	CHECK_STR(FMT(fmt_f0(P, 0.5)), "0");
	CHECK_STR(FMT(fmt_f0(P, 1.5)), "2");
	CHECK_STR(FMT(fmt_f0(P, 2.5)), "2");
	CHECK_STR(FMT(fmt_f0(P, 5763.9)), "5764");
	CHECK_STR(FMT(fmt_f0(P, -3.5)), "-4");
	CHECK_STR(FMT(fmt_f0(P, 18446744073709551616.0)), "18446744073709551616");
	CHECK_STR(FMT(fmt_f0(P, INFINITY)), "inf");
}

static __u64 rng = 0x9e3779b97f4a7c15ull;

static __u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int bad;

static void same(const char *what, const char *want, const char *got, __u64 v)
{
	if (strcmp(want, got) && bad++ < 10)
		fprintf(stderr, "%s(%llu): printf \"%s\", got \"%s\"\n", what,
			(unsigned long long)v, want, got);
}

static void diff_u64(__u64 v)
{
	char want[64];

	snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
	same("fmt_u64", want, FMT(fmt_u64(P, v)), v);
	snprintf(want, sizeof(want), "%lld", (long long)v);
	same("fmt_s64", want, FMT(fmt_s64(P, (__s64)v)), v);
	snprintf(want, sizeof(want), "%llx", (unsigned long long)v);
	same("fmt_hex", want, FMT(fmt_hex(P, v)), v);
	snprintf(want, sizeof(want), "%llu.%03llu", (unsigned long long)(v / 1000),
		 (unsigned long long)(v % 1000));
	same("fmt_us3", want, FMT(fmt_us3(P, v)), v);
	snprintf(want, sizeof(want), "%.9f", v / 1e9);
	same("fmt_sec9", want, FMT(fmt_sec9(P, v)), v);
}

static void diff_f0(double x)
{
	char want[FMT_F0_MAX];

	snprintf(want, sizeof(want), "%.0f", x);
	same("fmt_f0", want, FMT(fmt_f0(P, x)), (__u64)fabs(x));
}

static void test_printf(void)
{
	static const double mhz[] = { 2100, 2095.078, 3000.5, 0.001, 2999.999999, 1e6 };
	__u64 r;

	for (int k = 0; k < 64; k++)
		for (int d = -2; d <= 2; d++)
			diff_u64((1ull << k) + d);
	for (__u64 p = 1; p && p < UINT64_MAX / 10; p *= 10)
		for (int d = -2; d <= 2; d++)
			diff_u64(p + d);
	for (int i = 0; i < 200000; i++) {
		r = rnd();
		diff_u64(r);
		diff_u64(r >> (r & 63));
		diff_u64(r % (1000 * 86400 * 1000000000ull));	/* up to 1000 days of uptime */
		/*
		 * Ties: above 2^23 s, x / 1024 s (x odd) is a double that ns / 1e9 rounds to from
		 * both of its neighbouring ns, and its 9 decimals end in 5 exactly.
		 */
		r = ((r % ((1ull << 44) - (1ull << 33))) + (1ull << 33)) | 1;
		diff_u64(r * 1953125 / 2);
		diff_u64(r * 1953125 / 2 + 1);
		/* latency_cycles: latency * MHz / 1e3, and halves */
		diff_f0((rnd() >> (rnd() & 63)) * mhz[i % 6] / 1e3);
		diff_f0((double)(rnd() >> 11) / 2);
	}
	CHECK(bad == 0);
}

int main(void)
{
	test_exact();
	test_printf();
	CHECK_DONE("fmt_num");
}
