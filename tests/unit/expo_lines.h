/* SPDX-License-Identifier: GPL-2.0 */
/* The exposition tests' look for one whole line in a rendering (said on stderr when missing). */
#ifndef VMEXIT_TEST_EXPO_LINES_H
#define VMEXIT_TEST_EXPO_LINES_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "prom_exposition.h"

static inline bool has_line(const struct expo_buf *b, const char *line)
{
	size_t n = strlen(line);
	const char *p = b->p, *end = b->p + b->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p);

		if (nl && (size_t)(nl - p) == n && !memcmp(p, line, n))
			return true;
		p = nl ? nl + 1 : end;
	}
	fprintf(stderr, "missing line: %s\n", line);
	return false;
}

#endif /* VMEXIT_TEST_EXPO_LINES_H */
