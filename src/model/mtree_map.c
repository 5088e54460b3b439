// SPDX-License-Identifier: GPL-2.0
/*
 * `info mtree -f`, as QEMU prints it (memory.c, mtree_print_flatview):
 *
 *	FlatView #1
 *	 AS "I/O", root: io
 *	 Root memory region: io
 *	  0000000000000070-0000000000000070 (prio 0, i/o): rtc-index
 *	  0000000000000071-0000000000000071 (prio 0, i/o): rtc @0000000000000001
 *	  00000000000c0000-0000000003ffffff (prio 0, ram): pc.ram @00000000000c0000 KVM
 *
 * A name may hold spaces ("vga ioports remapped"); " @OFFSET" and the accelerator's " KVM"
 * follow it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "mtree_map.h"

enum { SPACE_NONE, SPACE_IO, SPACE_MEM };

/* The region name of a range line's tail (after "): "), without " @OFFSET" and " KVM". */
static size_t name_len(const char *s, size_t n)
{
	const char *at;

	if (n >= 4 && !memcmp(s + n - 4, " KVM", 4))
		n -= 4;
	for (at = s + n; at > s && strchr("0123456789abcdefABCDEF", at[-1]); at--)
		;
	if (at < s + n && at - s >= 2 && at[-1] == '@' && at[-2] == ' ')
		n = at - 2 - s;
	return n;
}

/* "  START-END (prio P, TYPE): NAME..." into space sp, unless the root region answers there. */
static int add_range(struct mtree_map *m, struct mtree_space *sp, const char *line, size_t len,
		     const char *root, size_t root_len)
{
	const char *end = line + len, *colon;
	char *e;
	__u64 lo, hi;
	size_t n, off;

	lo = strtoull(line, &e, 16);
	if (e == line || *e != '-')
		return 0;
	hi = strtoull(e + 1, &e, 16);
	if (*e != ' ' || hi < lo)
		return 0;
	colon = memmem(e, end - e, "): ", 3);
	if (!colon)
		return 0;
	colon += 3;
	n = name_len(colon, end - colon);
	if (!n || (n == root_len && !memcmp(colon, root, n)))
		return 0;
	if (array_reserve(sp->r, sp->nr, sp->cap, 64))
		return -ENOMEM;
	sp->r[sp->nr].lo = lo;
	sp->r[sp->nr].hi = hi;
	if (string_pool_add(&m->names, colon, n, &off))
		return -ENOMEM;
	sp->r[sp->nr].name = off;
	sp->nr++;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct mtree_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int mtree_map_parse(struct mtree_map *m, const char *text)
{
	const char *line = text, *root = "";
	size_t root_len = 0;
	int cur = SPACE_NONE;
	bool seen_io = false, seen_mem = false;

	while (*line) {
		size_t len = strcspn(line, "\n");
		const char *next = line + len + (line[len] == '\n');
		const char *s = line;
		int err = 0;

		if (len && line[len - 1] == '\r')
			len--;
		while (s < line + len && *s == ' ')
			s++;
		if (!strncmp(line, "FlatView ", 9)) {
			cur = SPACE_NONE;
			root_len = 0;
		} else if (s - line == 1 && !strncmp(s, "AS \"", 4)) {
			/* Each space once: the first flat view that shows it. */
			if (!strncmp(s, "AS \"I/O\",", 9) && !seen_io) {
				cur = SPACE_IO;
				seen_io = true;
			} else if (!strncmp(s, "AS \"memory\",", 12) && !seen_mem) {
				cur = SPACE_MEM;
				seen_mem = true;
			}
		} else if (s - line == 1 && !strncmp(s, "Root memory region: ", 20)) {
			root = s + 20;
			root_len = line + len - root;
		} else if (s - line == 2 && cur != SPACE_NONE) {
			err = add_range(m, cur == SPACE_IO ? &m->io : &m->mem, s, line + len - s,
					root, root_len);
		}
		if (err) {
			mtree_map_free(m);
			return err;
		}
		line = next;
	}
	if (!seen_io && !seen_mem)
		return -EINVAL;
	/* Printed in order already; sorted all the same, for the lookup's sake. */
	if (m->io.nr)
		qsort(m->io.r, m->io.nr, sizeof(*m->io.r), range_cmp);
	if (m->mem.nr)
		qsort(m->mem.r, m->mem.nr, sizeof(*m->mem.r), range_cmp);
	return 0;
}

int mtree_map_add(struct mtree_map *m, bool io, __u64 lo, __u64 hi, const char *name)
{
	struct mtree_space *sp = io ? &m->io : &m->mem;
	size_t off;

	if (array_reserve(sp->r, sp->nr, sp->cap, 64) ||
	    string_pool_add(&m->names, name, strlen(name), &off))
		return -ENOMEM;
	sp->r[sp->nr++] = (struct mtree_range){ lo, hi, (__u32)off };
	/* Stored in order: sorted again only where they were not, for the lookup's sake. */
	if (sp->nr > 1 && sp->r[sp->nr - 2].lo > lo)
		qsort(sp->r, sp->nr, sizeof(*sp->r), range_cmp);
	return 0;
}

const struct mtree_range *mtree_map_find(const struct mtree_map *m, bool io, __u64 addr)
{
	const struct mtree_space *sp = io ? &m->io : &m->mem;
	__u32 lo = 0, hi = sp->nr;

	/* The last range starting at or below addr. */
	while (lo < hi) {
		__u32 mid = lo + (hi - lo) / 2;

		if (sp->r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr > sp->r[lo - 1].hi)
		return NULL;
	return &sp->r[lo - 1];
}

const char *mtree_map_name(const struct mtree_map *m, bool io, __u64 addr)
{
	const struct mtree_range *r = mtree_map_find(m, io, addr);

	return r ? m->names.buf + r->name : NULL;
}

void mtree_map_free(struct mtree_map *m)
{
	free(m->io.r);
	free(m->mem.r);
	string_pool_free(&m->names);
	memset(m, 0, sizeof(*m));
}
