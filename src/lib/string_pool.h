/* SPDX-License-Identifier: GPL-2.0 */
/* Strings of a table kept one after another in one buffer, each named by its offset. */
#ifndef VMEXIT_STRING_POOL_H
#define VMEXIT_STRING_POOL_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct string_pool {
	char *buf;
	size_t len, cap;
};

/* s[0..n) and a NUL appended; its offset in *off. 0 or -ENOMEM. */
static inline int string_pool_add(struct string_pool *p, const char *s, size_t n, size_t *off)
{
	while (p->len + n + 1 > p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 4096;
		char *b = realloc(p->buf, cap);

		if (!b)
			return -ENOMEM;
		p->buf = b;
		p->cap = cap;
	}
	memcpy(p->buf + p->len, s, n);
	p->buf[p->len + n] = '\0';
	*off = p->len;
	p->len += n + 1;
	return 0;
}

static inline void string_pool_free(struct string_pool *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

#endif /* VMEXIT_STRING_POOL_H */
