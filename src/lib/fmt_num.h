/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Number formatting without printf, for the per-event outputs (template lines, JSON, Perfetto):
 * a formatted printf costs a microsecond per event, these a few nanoseconds per field. Each
 * prints exactly what the printf conversion named in its comment prints.
 *
 * The fmt_* appenders write at p, return the new end and write no NUL; the caller provides the
 * room (FMT_NUM_MAX per number).
 */
#ifndef VMEXIT_FMT_NUM_H
#define VMEXIT_FMT_NUM_H

#include <stdbool.h>
#include <string.h>
#include <linux/types.h>

/* The longest number but fmt_f0's: 20 digits of a u64, "-" and 19 digits, a fraction. */
#define FMT_NUM_MAX	32
#define FMT_F0_MAX	320	/* %.0f of DBL_MAX has 309 digits */

extern const char fmt_digit_pairs[200];

/* Digits of v in base (10, 16 or 8), written backwards ending at end; returns how many. */
static inline int fmt_utoa_rev(char *end, __u64 v, unsigned int base, bool upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *p = end;

	/* Constant divisors: shifts and multiplies instead of a 64-bit divide per digit. */
	switch (base) {
	case 16:
		do {
			*--p = dig[v & 15];
			v >>= 4;
		} while (v);
		break;
	case 8:
		do {
			*--p = '0' + (v & 7);
			v >>= 3;
		} while (v);
		break;
	default:
		/* Two digits per division halves the multiply chain of long numbers (ts_ns). */
		while (v >= 100) {
			unsigned int r = v % 100;

			v /= 100;
			p -= 2;
			memcpy(p, &fmt_digit_pairs[2 * r], 2);
		}
		if (v >= 10) {
			p -= 2;
			memcpy(p, &fmt_digit_pairs[2 * v], 2);
		} else {
			*--p = '0' + v;
		}
		break;
	}
	return end - p;
}

/* How many digits v has in base 10 or 16. */
static inline int fmt_ndigits(__u64 v, unsigned int base)
{
	int n = 1;

	if (base == 16)
		return (64 - __builtin_clzll(v | 1) + 3) / 4;
	while (v >= 10000) {
		v /= 10000;
		n += 4;
	}
	return n + (v >= 10) + (v >= 100) + (v >= 1000);
}

/* Appends the digits of v in base 10 or 16: sized first, then written in place. */
static inline char *fmt_base(char *p, __u64 v, unsigned int base)
{
	int n = fmt_ndigits(v, base);

	fmt_utoa_rev(p + n, v, base, false);
	return p + n;
}

/* %llu */
static inline char *fmt_u64(char *p, __u64 v)
{
	return fmt_base(p, v, 10);
}

/* %lld */
static inline char *fmt_s64(char *p, __s64 v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, -(__u64)v);
	}
	return fmt_u64(p, v);
}

/* %llx */
static inline char *fmt_hex(char *p, __u64 v)
{
	return fmt_base(p, v, 16);
}

/* A string literal, without its NUL. */
#define fmt_lit(p, lit)	(memcpy((p), (lit), sizeof(lit) - 1), (p) + sizeof(lit) - 1)

/* A string (no escaping). */
static inline char *fmt_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/*
 * A printf conversion of a number with its flags, width and precision, as the rules language
 * (template_parse.c) compiles it: printed the way C's printf prints it, without printf.
 */
enum { FMT_MINUS = 1, FMT_ZERO = 2, FMT_PLUS = 4, FMT_SPACE = 8, FMT_ALT = 16 };

#define FMT_SPEC_WIDTH_MAX	255	/* bound of width and precision */
/* The longest fmt_spec_* output: a full width or precision of zeros, sign, prefix, digits. */
#define FMT_SPEC_MAX		(2 * FMT_SPEC_WIDTH_MAX + FMT_NUM_MAX)

struct fmt_spec {
	__u8 conv;		/* d u x X o f s ('i' is stored as 'd') */
	__u8 flags;		/* FMT_* */
	__u16 width;
	__s16 prec;		/* -1: not given */
};

/* "%<flags><width>.<prec><conv>" of -mag (neg) or mag, conv one of d u x X o; only d signs. */
char *fmt_spec_int(char *p, const struct fmt_spec *s, __u64 mag, bool neg);
/* "%<flags><width>.<prec>f" of mag / scale (scale divides 10^9), exact, ties to even. */
char *fmt_spec_fixed(char *p, const struct fmt_spec *s, __u64 mag, bool neg, __u32 scale);

/* ns as microseconds with three decimals: "%llu.%03llu" of ns / 1000 and ns % 1000. */
char *fmt_us3(char *p, __u64 ns);
/* printf("%.0f", x) */
char *fmt_f0(char *p, double x);
/* What printf("%.9f", ns / 1e9) prints, double rounding included (fmt_num.c says why). */
char *fmt_sec9(char *p, __u64 ns);

#endif /* VMEXIT_FMT_NUM_H */
