// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "string_pool.h"
#include "symbol_map.h"

/* How far past the last symbol an address may lie and still be its code (no sizes in the file). */
#define LAST_SYMBOL_SPAN	(1u << 20)

struct symbol {
	__u64 addr;
	size_t name;		/* offset in the pool */
};

struct symbol_map {
	struct symbol *syms;
	size_t nr, cap;
	struct string_pool pool;
	bool any_address;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * One line: "ADDRESS TYPE NAME[\t[MODULE]]". NULL when it parses, else what is wrong, with
 * *col at it (1-based).
 */
static const char *parse_line(const char *line, size_t len, __u64 *addr, char *type,
			      const char **name, size_t *name_len, size_t *col)
{
	size_t i = 0, digits = 0;

	*addr = 0;
	for (; i < len && isxdigit((unsigned char)line[i]); i++, digits++) {
		char c = tolower((unsigned char)line[i]);

		*addr = *addr << 4 | (__u64)(c <= '9' ? c - '0' : c - 'a' + 10);
	}
	*col = i + 1;
	if (!digits)
		return "expected a hexadecimal address";
	if (digits > 16) {
		*col = 17;
		return "address longer than 64 bits";
	}
	if (i >= len || !is_blank(line[i]))
		return "expected a space after the address";
	while (i < len && is_blank(line[i]))
		i++;
	*col = i + 1;
	if (i >= len || !isalpha((unsigned char)line[i]) ||
	    (i + 1 < len && !is_blank(line[i + 1])) || i + 1 >= len)
		return "expected a one-letter symbol type and a name (System.map or kallsyms format)";
	*type = line[i++];
	while (i < len && is_blank(line[i]))
		i++;
	*col = i + 1;
	if (i >= len)
		return "expected a symbol name";
	*name = line + i;
	while (i < len && !is_blank(line[i]))
		i++;
	*name_len = i - (size_t)(*name - line);
	while (i < len && is_blank(line[i]))
		i++;
	*col = i + 1;
	if (i < len) {
		/* kallsyms: the module, "[name]", checked and left out (frames have no spaces). */
		if (line[i] != '[' || line[len - 1] != ']' || len - i < 3)
			return "expected the end of the line or a [module]";
	}
	return NULL;
}

static int cmp_symbol(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void fail(char *err, size_t errlen, const char *name, size_t line, size_t col,
		 const char *what)
{
	if (line)
		snprintf(err, errlen, "%s:%zu:%zu: %s", name, line, col, what);
	else
		snprintf(err, errlen, "%s: %s", name, what);
}

struct symbol_map *symbol_map_read(FILE *f, const char *name, char *err, size_t errlen)
{
	struct symbol_map *m = calloc(1, sizeof(*m));
	char *line = NULL;
	size_t cap = 0, nr_line = 0;
	ssize_t n;

	if (!m)
		goto nomem;
	while ((n = getline(&line, &cap, f)) > 0) {
		const char *sym, *what;
		size_t len = (size_t)n, sym_len, col;
		__u64 addr;
		char type;

		nr_line++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		if (!len)
			continue;
		what = parse_line(line, len, &addr, &type, &sym, &sym_len, &col);
		if (what) {
			fail(err, errlen, name, nr_line, col, what);
			goto out_fail;
		}
		m->any_address |= addr != 0;
		if (!strchr("tTwW", type))
			continue;
		if (array_reserve(m->syms, m->nr, m->cap, 1024))
			goto nomem;
		m->syms[m->nr].addr = addr;
		if (string_pool_add(&m->pool, sym, sym_len, &m->syms[m->nr].name))
			goto nomem;
		m->nr++;
	}
	if (ferror(f)) {
		fail(err, errlen, name, 0, 0, strerror(errno ? errno : EIO));
		goto out_fail;
	}
	if (!m->nr) {
		fail(err, errlen, name, 0, 0, "no code symbols (expected System.map or a copy of "
		     "/proc/kallsyms)");
		goto out_fail;
	}
	free(line);
	qsort(m->syms, m->nr, sizeof(*m->syms), cmp_symbol);
	return m;
nomem:
	fail(err, errlen, name, 0, 0, strerror(ENOMEM));
out_fail:
	free(line);
	symbol_map_free(m);
	return NULL;
}

struct symbol_map *symbol_map_load(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	struct symbol_map *m;

	if (!f) {
		fail(err, errlen, path, 0, 0, strerror(errno));
		return NULL;
	}
	m = symbol_map_read(f, path, err, errlen);
	fclose(f);
	return m;
}

bool symbol_map_lookup(const struct symbol_map *m, __u64 addr, char *buf, size_t len)
{
	size_t lo = 0, hi = m ? m->nr : 0;
	const struct symbol *s;

	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (lo == m->nr && addr - m->syms[lo - 1].addr >= LAST_SYMBOL_SPAN) ||
	    !m->any_address) {
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
		return false;
	}
	s = &m->syms[lo - 1];
	if (addr == s->addr)
		snprintf(buf, len, "%s", m->pool.buf + s->name);
	else
		snprintf(buf, len, "%s+0x%llx", m->pool.buf + s->name,
			 (unsigned long long)(addr - s->addr));
	return true;
}

size_t symbol_map_size(const struct symbol_map *m)
{
	return m ? m->nr : 0;
}

bool symbol_map_hidden(const struct symbol_map *m)
{
	return m && !m->any_address;
}

void symbol_map_free(struct symbol_map *m)
{
	if (!m)
		return;
	free(m->syms);
	string_pool_free(&m->pool);
	free(m);
}
