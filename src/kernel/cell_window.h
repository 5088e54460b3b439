/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's cell array read through a small mapping that slides over it, not mapped whole.
 * A BPF array's mmap inserts every page at once (remap_vmalloc_range), so a whole mapping puts
 * the map's capacity in the reader's resident memory: 53 MB at --max-cells 40,000 before a
 * single cell is used. A window of CELL_WINDOW_BYTES costs that much whatever the capacity, and
 * the cells are still read in place (the atomics of cells.h hold), with no copy by a syscall.
 * Samples walk the cells in order, so one pass maps each window once.
 */
#ifndef VMEXIT_CELL_WINDOW_H
#define VMEXIT_CELL_WINDOW_H

#include <stddef.h>
#include "vmexit.h"

#define CELL_WINDOW_BYTES	(1u << 20)

struct cell_window {
	int fd;				/* the BPF array map; -1: none */
	__u32 max_cells;
	size_t stride;			/* bytes from one cell to the next in the map */
	char *map;			/* NULL: nothing mapped */
	size_t map_len;
	__u64 map_off;			/* byte offset in the map of map[0] (page aligned) */
	__u32 first, nr;		/* the cells wholly inside the mapping */
	__u64 remaps;			/* windows mapped so far (a pass over the cells: a few) */
};

void cell_window_init(struct cell_window *w, int fd, __u32 max_cells, size_t stride);
/* Cell i (< max_cells), mapping its window if needed: valid until the next call. NULL when
 * that window cannot be mapped (errno set). */
const struct cell *cell_window_at(struct cell_window *w, __u32 i);
void cell_window_free(struct cell_window *w);

#endif /* VMEXIT_CELL_WINDOW_H */
