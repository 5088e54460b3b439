// SPDX-License-Identifier: GPL-2.0
/* Number formatting without printf; fmt_num.h says what each one matches. */
#include <math.h>
#include <stdio.h>

#include "fmt_num.h"

const char fmt_digit_pairs[200] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* "ip.frac" with the fraction zero-padded to digits places. */
static char *fixed(char *p, __u64 ip, __u64 frac, int digits)
{
	char tmp[24];
	int n;

	p = fmt_u64(p, ip);
	*p++ = '.';
	n = fmt_utoa_rev(tmp + sizeof(tmp), frac, 10, false);
	memset(p, '0', digits - n);
	memcpy(p + digits - n, tmp + sizeof(tmp) - n, n);
	return p + digits;
}

static char *pad(char *p, char c, size_t n)
{
	memset(p, c, n);
	return p + n;
}

static char sign_of(const struct fmt_spec *s, bool neg)
{
	if (neg)
		return '-';
	if (s->flags & FMT_PLUS)
		return '+';
	if (s->flags & FMT_SPACE)
		return ' ';
	return 0;
}

/* Lays out sign, prefix, precision zeros and digits in width, as C's printf does. */
char *fmt_spec_int(char *p, const struct fmt_spec *s, __u64 mag, bool neg)
{
	char dbuf[24];
	unsigned int base = 10;
	const char *prefix = "";
	size_t plen = 0, body, fill;
	char sign = s->conv == 'd' ? sign_of(s, neg) : 0;
	/* As in C: '-' beats '0', and a precision turns '0' off for integers. */
	bool zero = !(s->flags & FMT_MINUS) && (s->flags & FMT_ZERO) && s->prec < 0;
	int ndig, zeros;

	if (s->conv == 'x' || s->conv == 'X') {
		base = 16;
		if ((s->flags & FMT_ALT) && mag) {
			prefix = s->conv == 'x' ? "0x" : "0X";
			plen = 2;
		}
	} else if (s->conv == 'o') {
		base = 8;
	}
	/* C: an explicit zero precision prints no digits for zero. */
	if (s->prec == 0 && mag == 0)
		ndig = 0;
	else
		ndig = fmt_utoa_rev(dbuf + sizeof(dbuf), mag, base, s->conv == 'X');
	zeros = s->prec > ndig ? s->prec - ndig : 0;
	if (s->conv == 'o' && (s->flags & FMT_ALT) && !zeros &&
	    (!ndig || dbuf[sizeof(dbuf) - ndig] != '0'))
		zeros = 1;
	body = (sign ? 1 : 0) + plen + zeros + ndig;
	fill = s->width > body ? s->width - body : 0;
	if (fill && !(s->flags & FMT_MINUS) && !zero)
		p = pad(p, ' ', fill);
	if (sign)
		*p++ = sign;
	memcpy(p, prefix, plen);
	p += plen;
	if (fill && zero)
		p = pad(p, '0', fill);
	p = pad(p, '0', zeros);
	memcpy(p, dbuf + sizeof(dbuf) - ndig, ndig);
	p += ndig;
	if (fill && (s->flags & FMT_MINUS))
		p = pad(p, ' ', fill);
	return p;
}

static const __u64 pow10_u64[] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull,
};

/* Exact decimal arithmetic on mag / scale: ties to even, as printf rounds exact values. */
char *fmt_spec_fixed(char *p, const struct fmt_spec *s, __u64 mag, bool neg, __u32 scale)
{
	int prec = s->prec < 0 ? 6 : s->prec, fp = prec < 9 ? prec : 9;
	__u64 ip = mag / scale, frac9 = (mag % scale) * (1000000000u / scale), q, rem, div;
	char sign = sign_of(s, neg);
	bool dot = prec || (s->flags & FMT_ALT);
	size_t body, fill;

	div = pow10_u64[9 - fp];
	q = frac9 / div;
	rem = frac9 % div;
	if (rem * 2 > div || (rem * 2 == div && ((fp ? q : ip) & 1)))
		q++;
	if (q == pow10_u64[fp]) {
		q = 0;
		ip++;
	}
	body = (sign ? 1 : 0) + fmt_ndigits(ip, 10) + dot + prec;
	fill = s->width > body ? s->width - body : 0;
	if (fill && !(s->flags & (FMT_MINUS | FMT_ZERO)))
		p = pad(p, ' ', fill);
	if (sign)
		*p++ = sign;
	if (fill && !(s->flags & FMT_MINUS) && (s->flags & FMT_ZERO))
		p = pad(p, '0', fill);
	if (fp) {
		p = fixed(p, ip, q, fp);
	} else {
		p = fmt_u64(p, ip);
		if (dot)
			*p++ = '.';
	}
	p = pad(p, '0', prec - fp);
	if (fill && (s->flags & FMT_MINUS))
		p = pad(p, ' ', fill);
	return p;
}

char *fmt_us3(char *p, __u64 ns)
{
	return fixed(p, ns / 1000, ns % 1000, 3);
}

/*
 * The integer that rint() rounds x to, ties to even, is what printf prints in the default
 * rounding mode (printf rounds the exact binary value too). Negative zero, huge, infinite and
 * NaN values are left to printf.
 */
char *fmt_f0(char *p, double x)
{
	if (x >= 0 && x < 18446744073709551616.0 && !signbit(x))
		return fmt_u64(p, (__u64)__builtin_rint(x));
	return p + snprintf(p, FMT_F0_MAX, "%.0f", x);
}

/*
 * The JSON "time" field has always been printf("%.9f", ns / 1e9), and its text must not change.
 * That is the exact decimal of ns only while ns / 1e9 is below 2^23 s (97 days of uptime): above
 * it the double's spacing exceeds 1 ns and the double's rounding shows in the last digit. So
 * this reproduces printf: the same double quotient, then its exact value rounded to 9 decimals
 * (ties to even, as glibc in the default rounding mode), in integers. The double is m * 2^-s
 * with m < 2^53 and 18 <= s <= 82 for every ns > 0, so m * 10^9 < 2^83 fits 128 bits.
 */
char *fmt_sec9(char *p, __u64 ns)
{
	double q = ns / 1e9;
	unsigned __int128 x, half, r;
	__u64 bits, m;
	int s;

	if (!ns)
		return fmt_lit(p, "0.000000000");
	memcpy(&bits, &q, sizeof(bits));
	m = (bits & ((1ull << 52) - 1)) | 1ull << 52;	/* q is normal: q >= 1e-9 */
	s = 1075 - (int)((bits >> 52) & 0x7ff);
	x = (unsigned __int128)m * 1000000000u;
	r = x >> s;
	half = (unsigned __int128)1 << (s - 1);
	x &= ((unsigned __int128)1 << s) - 1;
	if (x > half || (x == half && (r & 1)))
		r++;
	/* r is the rounded ns count, which may just exceed 2^64 for the largest ns. */
	return fixed(p, (__u64)(r / 1000000000u), (__u64)(r % 1000000000u), 9);
}
