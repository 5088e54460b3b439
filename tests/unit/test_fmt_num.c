// SPDX-License-Identifier: GPL-2.0
/*
 * printf-free number formatting: edge values against strings worked out by hand, then each
 * formatter against the printf conversion it replaces over many values, including the exact
 * ties of the double rounding that "%.9f" of ns / 1e9 shows after 97 days of uptime, and the
 * rules language's flags, widths and precisions against printf's own.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "fmt_num.h"
#include "../xorshift64.h"

static char out[(FMT_F0_MAX > FMT_SPEC_MAX ? FMT_F0_MAX : FMT_SPEC_MAX) + 1];

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

static __u64 rng = XORSHIFT64_SEED;

static __u64 rnd(void)
{
	return xorshift64(&rng);
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
	/* The value for the message only: past 2^64 a cast is undefined. */
	same("fmt_f0", want, FMT(fmt_f0(P, x)), fabs(x) < 0x1p64 ? (__u64)fabs(x) : ~0ull);
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

/* printf's own text for the same flags, width, precision and conversion. */
static void spec_printf(char *want, size_t len, const struct fmt_spec *s, const char *arg_fmt,
			...)
{
	char f[32], *q = f;
	va_list ap;

	*q++ = '%';
	if (s->flags & FMT_MINUS)
		*q++ = '-';
	if (s->flags & FMT_ZERO)
		*q++ = '0';
	if (s->flags & FMT_PLUS)
		*q++ = '+';
	if (s->flags & FMT_SPACE)
		*q++ = ' ';
	if (s->flags & FMT_ALT)
		*q++ = '#';
	q += sprintf(q, "%u", s->width);
	if (s->prec >= 0)
		q += sprintf(q, ".%d", s->prec);
	strcpy(q, arg_fmt);
	va_start(ap, arg_fmt);
	vsnprintf(want, len, f, ap);
	va_end(ap);
}

static void diff_spec_int(const struct fmt_spec *s, __u64 mag, bool neg)
{
	char want[FMT_SPEC_MAX + 1], conv[4] = { 'l', 'l', s->conv };

	/* printf's d of a negative value; u, x, X and o of the magnitude only. */
	if (s->conv == 'd')
		spec_printf(want, sizeof(want), s, conv, neg ? -(long long)mag : (long long)mag);
	else
		spec_printf(want, sizeof(want), s, conv, (unsigned long long)mag);
	same("fmt_spec_int", want, FMT(fmt_spec_int(P, s, mag, neg)), mag);
}

/* mag / scale with scale 8, 1000 / 125: an exact double, so printf rounds the exact value. */
static void diff_spec_fixed(const struct fmt_spec *s, __u64 k, bool neg)
{
	char want[FMT_SPEC_MAX + 1];
	double x = (double)k / 8;

	spec_printf(want, sizeof(want), s, "f", neg ? -x : x);
	same("fmt_spec_fixed", want, FMT(fmt_spec_fixed(P, s, k * 125, neg, 1000)), k);
}

static void test_spec(void)
{
	static const __u8 convs[] = { 'd', 'u', 'x', 'X', 'o' };
	static const __s16 precs[] = { -1, 0, 1, 2, 3, 5, 12, 40 };
	static const __u16 widths[] = { 0, 1, 5, 13, 30 };

	for (int i = 0; i < 40000; i++) {
		struct fmt_spec s = {
			.flags = rnd() & 31,
			.width = widths[rnd() % 5],
			.prec = precs[rnd() % 8],
		};
		__u64 r = rnd();
		__u64 mag = r >> (rnd() & 63);
		bool neg = s.flags & 1 ? rnd() & 1 : false;

		s.conv = convs[i % 5];
		if (s.conv == 'd' && mag > (__u64)INT64_MAX)
			mag >>= 1;	/* printf's %lld takes no larger magnitude */
		if (i % 7 == 0)
			mag = 0;	/* precision 0 and '#' with zero */
		/* The renderer signs only non-zero magnitudes, as printf's d sees them. */
		diff_spec_int(&s, mag, neg && mag && s.conv == 'd');
		s.conv = 'f';
		/* Below 2^50 eighths: exact as a double, and k * 125 fits 64 bits. */
		mag = (r >> 14) >> (rnd() % 50);
		diff_spec_fixed(&s, mag, neg && mag);
	}
	CHECK(bad == 0);
}

int main(void)
{
	test_exact();
	test_printf();
	test_spec();
	CHECK_DONE("fmt_num");
}
