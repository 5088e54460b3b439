/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Escaping for machine-readable output. Guest names come from arbitrary command lines, so
 * every string field goes through these.
 */
#ifndef VMEXIT_TEXT_ESCAPE_H
#define VMEXIT_TEXT_ESCAPE_H

#include <stdio.h>

/*
 * A JSON string literal, quotes included: '"' and '\' escaped, control characters as \n, \t,
 * \r, \b, \f or \u00XX, and each ill-formed UTF-8 sequence as one \ufffd, so the output is
 * always valid JSON and valid UTF-8. NULL prints null.
 */
void json_put_str(FILE *f, const char *s);

/*
 * One RFC 4180 field: quoted (with '"' doubled) when it holds a comma, quote, CR or LF, or
 * starts or ends with a space or tab; written as is otherwise. NULL is an empty field.
 */
void csv_put_field(FILE *f, const char *s);

#endif /* VMEXIT_TEXT_ESCAPE_H */
