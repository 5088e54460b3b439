/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A QEMU guest's memory map as its `info mtree -f` prints it (the flat views: what each address
 * reaches, regions already resolved by priority): the I/O port space and the memory space, each
 * a sorted list of ranges and the name of the region that answers there.
 */
#ifndef VMEXIT_MTREE_MAP_H
#define VMEXIT_MTREE_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "string_pool.h"

struct mtree_range {
	__u64 lo, hi;		/* inclusive */
	__u32 name;		/* offset in mtree_map.names.buf */
};

struct mtree_space {
	struct mtree_range *r;
	__u32 nr, cap;
};

struct mtree_map {
	struct mtree_space io, mem;	/* AS "I/O", AS "memory" */
	struct string_pool names;
};

/*
 * Reads `info mtree -f` text (lines may end in \r\n, as HMP sends them) into an empty m. Ranges
 * of the root region itself (QEMU's I/O root answers where no device is) are left out. 0;
 * -EINVAL when the text has no flat view of either space (not such a text: m stays empty);
 * -ENOMEM.
 */
int mtree_map_parse(struct mtree_map *m, const char *text);
/* Adds range [lo, hi] named name (a map a recording kept). 0 or -ENOMEM. */
int mtree_map_add(struct mtree_map *m, bool io, __u64 lo, __u64 hi, const char *name);
/* The flat range at addr in the I/O space (io) or memory, its name at m->names.buf + name;
 * NULL where none is. */
const struct mtree_range *mtree_map_find(const struct mtree_map *m, bool io, __u64 addr);
/* The name of the region at addr in the I/O space (io) or memory; NULL where none is. */
const char *mtree_map_name(const struct mtree_map *m, bool io, __u64 addr);
void mtree_map_free(struct mtree_map *m);

#endif /* VMEXIT_MTREE_MAP_H */
