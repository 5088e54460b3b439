// SPDX-License-Identifier: GPL-2.0
/* JSON and CSV escaping. */
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
	bool bad;
	int n;

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
		n = utf8_len(s, &bad);
		if (bad) {
			p = fmt_lit(p, "\xef\xbf\xbd");	/* U+FFFD */
		} else {
			memcpy(p, s, n);
			p += n;
		}
		s += n;
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
