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

/*
 * Every family's lines together, as the text format and OpenMetrics require (a strict parser
 * refuses a sample under another family's header): each sample's name begins with the name of
 * the last `# TYPE`, and no family's `# TYPE` comes twice. Said on stderr when not.
 */
static inline bool families_grouped(const struct expo_buf *b)
{
	const char *p = b->p, *end = b->p + b->len, *fam = NULL;
	size_t fam_len = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', end - p), *q;
		size_t len = (nl ? nl : end) - p;

		if (len > 7 && !memcmp(p, "# TYPE ", 7)) {
			const char *name = p + 7, *sp = memchr(name, ' ', len - 7);
			size_t n = sp ? (size_t)(sp - name) : len - 7;

			/* A header seen before, earlier in the text: the family was split. */
			for (q = b->p; q < p; q = (const char *)memchr(q, '\n', p - q) + 1) {
				if (!memcmp(q, "# TYPE ", 7) && !memcmp(q + 7, name, n) && q[7 + n] == ' ') {
					fprintf(stderr, "family %.*s: a second # TYPE\n", (int)n, name);
					return false;
				}
			}
			fam = name;
			fam_len = n;
		} else if (len && *p != '#' && (!fam || len < fam_len || memcmp(p, fam, fam_len))) {
			fprintf(stderr, "sample outside its family (%.*s): %.*s\n", (int)fam_len,
				fam ? fam : "", (int)len, p);
			return false;
		}
		p = nl ? nl + 1 : end;
	}
	return true;
}

#endif /* VMEXIT_TEST_EXPO_LINES_H */
