// SPDX-License-Identifier: GPL-2.0
/* JSON, Prometheus, CSV and human-readable text escaping. */
#include <stdbool.h>
#include <string.h>

#include "fmt_num.h"
#include "text_escape.h"

/*
 * Length of the UTF-8 sequence at s; *bad says it is ill-formed (RFC 3629: no overlong forms,
 * surrogates or code points above U+10FFFF). An ill-formed sequence is its maximal valid
 * prefix, or one byte, so that it becomes a single U+FFFD as in the Unicode standard's
 * recommended practice (and Python's and browsers' decoders).
 */
static int utf8_len(const unsigned char *s, bool *bad)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	*bad = false;
	if (c < 0x80)
		return 1;
	*bad = true;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* UTF-16 surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		return 1;
	}
	/* A NUL is never a continuation byte, so this stops at the end of the string. */
	if (s[1] < lo || s[1] > hi)
		return 1;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return i;
	*bad = false;
	return n;
}

char *utf8_copy(char *buf, size_t size, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = 0;

	if (!size)
		return buf;
	/* Whole sequences (an ill-formed one is one unit, as it is escaped) while they fit. */
	while (s[n]) {
		bool bad;
		int l = utf8_len(s + n, &bad);

		if (n + l > size - 1)
			break;
		n += l;
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

#define REPLACEMENT	"\xef\xbf\xbd"	/* U+FFFD */

size_t utf8_fixed_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = 0;

	while (*s) {
		bool bad;
		int n = *s < 0x80 ? 1 : utf8_len(s, &bad);

		len += *s >= 0x80 && bad ? sizeof(REPLACEMENT) - 1 : (size_t)n;
		s += n;
	}
	return len;
}

/* One UTF-8 sequence from *sp to p as it is, or U+FFFD for an ill-formed one; past it. */
static char *utf8_put(char *p, const unsigned char **sp)
{
	bool bad;
	int n = utf8_len(*sp, &bad);

	if (bad) {
		p = fmt_lit(p, REPLACEMENT);
	} else {
		memcpy(p, *sp, n);
		p += n;
	}
	*sp += n;
	return p;
}

char *utf8_fix(char *p, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		if (*s < 0x80) {
			*p++ = *s++;
			continue;
		}
		p = utf8_put(p, &s);
	}
	return p;
}

/* Bytes a JSON string holds as they are: printable ASCII but '"' and '\' (DEL included). */
static inline bool json_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/*
 * Escapes the characters that start in [s, lim) to p, a UTF-8 sequence possibly reading past
 * lim (the string goes on to its NUL); at most 6 bytes out per byte in. Returns the end of the
 * output, *sp where the input stopped.
 */
static char *escape(char *p, const unsigned char **sp, const unsigned char *lim)
{
	const unsigned char *s = *sp;

	while (s < lim) {
		unsigned char c = *s;
		bool bad;
		int n;

		if (json_plain(c)) {	/* nearly every byte of a guest or reason name */
			*p++ = c;
			s++;
			continue;
		}
		*p++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*p++ = c;
			break;
		case '\n':
			*p++ = 'n';
			break;
		case '\r':
			*p++ = 'r';
			break;
		case '\t':
			*p++ = 't';
			break;
		case '\b':
			*p++ = 'b';
			break;
		case '\f':
			*p++ = 'f';
			break;
		default:
			if (c < 0x20) {
				p = fmt_lit(p, "u00");
				*p++ = "0123456789abcdef"[c >> 4];
				*p++ = "0123456789abcdef"[c & 15];
				break;
			}
			n = utf8_len(s, &bad);
			if (bad) {
				p = fmt_lit(p, "ufffd");
			} else {
				p[-1] = c;	/* no escape after all: a well-formed sequence */
				memcpy(p, s + 1, n - 1);
				p += n - 1;
			}
			s += n;
			continue;
		}
		s++;
	}
	*sp = s;
	return p;
}

char *json_esc(char *p, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s)
		return fmt_lit(p, "null");
	*p++ = '"';
	p = escape(p, &s, s + strlen(str));
	*p++ = '"';
	return p;
}

void json_put_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str, *end;
	/* In pieces, so that a string of any length needs no allocation. */
	enum { PIECE = 256 };
	char buf[JSON_ESC_MAX(PIECE + 3)], *p;

	if (!s) {
		fputs("null", f);
		return;
	}
	end = s + strlen(str);
	fputc('"', f);
	while (s < end) {
		p = escape(buf, &s, end - s > PIECE ? s + PIECE : end);
		fwrite(buf, 1, p - buf, f);
	}
	fputc('"', f);
}

char *prom_label_esc(char *p, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	while (*s) {
		switch (*s) {
		case '\\':
		case '"':
			*p++ = '\\';
			*p++ = *s++;
			continue;
		case '\n':
			p = fmt_lit(p, "\\n");
			s++;
			continue;
		}
		p = utf8_put(p, &s);
	}
	return p;
}

void csv_put_field(FILE *f, const char *s)
{
	size_t len;
	bool quote;

	if (!s)
		return;
	len = strlen(s);
	quote = strpbrk(s, ",\"\r\n") ||
		(len && (s[0] == ' ' || s[0] == '\t' || s[len - 1] == ' ' || s[len - 1] == '\t'));
	if (!quote) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The code point of the well-formed UTF-8 sequence of n bytes at s. */
static unsigned int utf8_cp(const unsigned char *s, int n)
{
	unsigned int cp = n == 1 ? s[0] : s[0] & (0x7f >> n);

	for (int i = 1; i < n; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/*
 * Columns a printable code point takes on a terminal, without the locale's wcwidth() (the
 * output must not depend on LANG): the zero-width combining blocks, and the East Asian Wide
 * and Fullwidth blocks of Unicode's EastAsianWidth.txt, coarsely (whole blocks).
 */
static int cp_cols(unsigned int cp)
{
	static const struct { unsigned int lo, hi; unsigned char cols; } ranges[] = {
		{ 0x0300, 0x036f, 0 },	/* combining diacritical marks */
		{ 0x1100, 0x115f, 2 },	/* Hangul Jamo initials */
		{ 0x1ab0, 0x1aff, 0 },	/* combining marks, extended and supplement */
		{ 0x1dc0, 0x1dff, 0 },
		{ 0x200b, 0x200f, 0 },	/* zero width space, joiners, marks */
		{ 0x20d0, 0x20ff, 0 },	/* combining marks for symbols */
		{ 0x2e80, 0x303e, 2 },	/* CJK radicals, punctuation */
		{ 0x3041, 0x33ff, 2 },	/* kana, CJK compatibility */
		{ 0x3400, 0x4dbf, 2 },	/* CJK extension A */
		{ 0x4e00, 0x9fff, 2 },	/* CJK unified ideographs */
		{ 0xa000, 0xa4cf, 2 },	/* Yi */
		{ 0xac00, 0xd7a3, 2 },	/* Hangul syllables */
		{ 0xf900, 0xfaff, 2 },	/* CJK compatibility ideographs */
		{ 0xfe00, 0xfe0f, 0 },	/* variation selectors */
		{ 0xfe20, 0xfe2f, 0 },	/* combining half marks */
		{ 0xfe30, 0xfe4f, 2 },	/* CJK compatibility forms */
		{ 0xff00, 0xff60, 2 },	/* fullwidth forms */
		{ 0xffe0, 0xffe6, 2 },
		{ 0x1f300, 0x1f64f, 2 },	/* pictographs, emoticons */
		{ 0x1f900, 0x1f9ff, 2 },
		{ 0x20000, 0x3fffd, 2 },	/* CJK extensions B.. */
	};

	if (cp < 0x300)
		return 1;
	for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i].lo && cp <= ranges[i].hi)
			return ranges[i].cols;
	return 1;
}

/*
 * The next unit of text at s (*s not NUL): one character as it is, or its escape. Writes it
 * to out (at most 4 bytes), its columns to *cols; returns the input bytes it took (*n_out the
 * output bytes).
 */
static int text_unit(const unsigned char *s, char *out, int *n_out, int *cols)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c = s[0];
	bool bad;
	int n;

	if (c >= 0x20 && c < 0x7f) {
		out[0] = c;
		*n_out = *cols = 1;
		return 1;
	}
	n = c < 0x80 ? 1 : utf8_len(s, &bad);
	if (c >= 0x80 && !bad && !(c == 0xc2 && s[1] < 0xa0)) {	/* but C1 controls */
		memcpy(out, s, n);
		*n_out = n;
		*cols = cp_cols(utf8_cp(s, n));
		return n;
	}
	/* A control character, or the first byte of an ill-formed sequence: one byte at a time,
	 * so each shows its value (and a C1 control, both bytes of its encoding). */
	out[0] = '\\';
	if (c == '\n' || c == '\r' || c == '\t') {
		out[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
		*n_out = *cols = 2;
		return 1;
	}
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	*n_out = *cols = 4;
	return 1;
}

char *text_fit(char *buf, size_t len, const char *str, int width, int prec)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t pos = 0;
	int shown = 0;

	if (!len)
		return buf;
	while (*s) {
		char u[4];
		int n_out, cols, n = text_unit(s, u, &n_out, &cols);

		if ((prec >= 0 && shown + cols > prec) || pos + n_out >= len)
			break;
		memcpy(buf + pos, u, n_out);
		pos += n_out;
		shown += cols;
		s += n;
	}
	while (shown < width && pos + 1 < len) {
		buf[pos++] = ' ';
		shown++;
	}
	buf[pos] = 0;
	return buf;
}

int text_cols(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int shown = 0;

	while (s && *s) {
		char u[4];
		int n_out, cols;

		s += text_unit(s, u, &n_out, &cols);
		shown += cols;
	}
	return shown;
}
