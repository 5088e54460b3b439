/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Escaping for machine-readable and human-readable output. Guest names come from arbitrary
 * command lines, so every string field goes through these.
 */
#ifndef VMEXIT_TEXT_ESCAPE_H
#define VMEXIT_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

#include "fmt_num.h"

/*
 * str into buf (size bytes, always NUL-terminated), cut where it must be at the end of a
 * character, never inside one: a guest name cut mid-sequence would end in U+FFFD or \xHH
 * where its text has none. Returns buf.
 */
char *utf8_copy(char *buf, size_t size, const char *str);

/*
 * str as well-formed UTF-8: each ill-formed sequence replaced by one U+FFFD, the rule of
 * json_esc() and prom_label_esc(), for the formats that carry text as it is but require UTF-8
 * (protobuf strings). utf8_fixed_len() is the length of the result; utf8_fix() writes it to p,
 * which has that much room (no NUL), and returns its end.
 */
size_t utf8_fixed_len(const char *str);
char *utf8_fix(char *p, const char *str);

/*
 * A JSON string literal, quotes included: '"' and '\' escaped, control characters as \n, \t,
 * \r, \b, \f or \u00XX, and each ill-formed UTF-8 sequence as one \ufffd, so the output is
 * always valid JSON and valid UTF-8. NULL prints null.
 */
void json_put_str(FILE *f, const char *s);
/* The same into p, which has JSON_ESC_MAX(strlen(s)) bytes of room; returns the end (no NUL). */
char *json_esc(char *p, const char *s);
#define JSON_ESC_MAX(len)	(6 * (len) + 4)

/*
 * Members of a JSON object being assembled in a line buffer (fmt_num.h's appenders):
 * ,"key":value, the key a string literal so that its length is known when compiling.
 */
#define json_key(p, key)	fmt_lit(p, ",\"" key "\":")
#define json_u64(p, key, v)	fmt_u64(json_key(p, key), v)
#define json_s64(p, key, v)	fmt_s64(json_key(p, key), v)
/* 64-bit addresses and values as hex strings: JSON numbers are doubles. */
#define json_hex(p, key, v)	json_hexstr(json_key(p, key), v)

static inline char *json_hexstr(char *p, __u64 v)
{
	p = fmt_lit(p, "\"0x");
	p = fmt_hex(p, v);
	*p++ = '"';
	return p;
}

/*
 * A Prometheus / OpenMetrics label value without its quotes: '\\', '"' and newline escaped as
 * both formats require, each ill-formed UTF-8 sequence as one U+FFFD (Prometheus refuses a
 * scrape that is not UTF-8). p has PROM_ESC_MAX(strlen(s)) bytes of room; returns the end.
 */
char *prom_label_esc(char *p, const char *s);
#define PROM_ESC_MAX(len)	(3 * (len))

/*
 * One RFC 4180 field: quoted (with '"' doubled) when it holds a comma, quote, CR or LF, or
 * starts or ends with a space or tab; written as is otherwise. NULL is an empty field.
 */
void csv_put_field(FILE *f, const char *s);

/*
 * Human-readable text (tables, stream lines, messages, lists): whoever starts a VM chooses its
 * name, which must not be able to start a new line (forging rows in an operator's table) or
 * send the terminal an escape sequence. The one rule: printable ASCII and well-formed UTF-8
 * stay as they are (a name of printable ASCII prints exactly as it is); newline, carriage
 * return and tab show as \n, \r and \t; every other control character (C0, DEL, C1
 * U+0080..U+009F, which some terminals obey) and each byte of an ill-formed UTF-8 sequence
 * show as \xHH. A backslash stays as it is (names like 'a\b' print as before): the output
 * is for reading, not for decoding back.
 *
 * text_fit() writes s so escaped into buf (len bytes, always NUL-terminated), at most prec
 * display columns of it (prec < 0: all), then spaces up to width columns: printf's "%-W.Ps"
 * counted in columns, not bytes. It never cuts a character or an escape; a character counts
 * as one column, an East Asian wide one (CJK, Hangul, fullwidth forms, emoji) as two and a
 * combining mark as none, the same in every locale. When buf is too small, the output stops
 * at the last whole character that fits. Returns buf. NULL is an empty string.
 */
char *text_fit(char *buf, size_t len, const char *s, int width, int prec);
/* Room for any guest name (record files keep up to 255 bytes) escaped: 4 bytes per byte. */
#define TEXT_NAME_MAX		(4 * 255 + 1)
/* text_fit(buf, sizeof(buf), s, 0, -1): the whole name, escaped, for "%s". */
#define text_esc(buf, s)	text_fit(buf, sizeof(buf), s, 0, -1)

/* Display columns of s as text_fit() counts them (s escaped already, or to be). */
int text_cols(const char *s);

#endif /* VMEXIT_TEXT_ESCAPE_H */
