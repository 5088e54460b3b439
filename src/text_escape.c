// SPDX-License-Identifier: GPL-2.0
/* JSON and CSV escaping. */
#include <stdbool.h>
#include <string.h>

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

void json_put_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	while (*s) {
		bool bad;
		int n;

		switch (*s) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		default:
			if (*s < 0x20) {
				fprintf(f, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s, &bad);
			if (bad)
				fputs("\\ufffd", f);
			else
				fwrite(s, 1, n, f);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', f);
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
