// SPDX-License-Identifier: GPL-2.0
#include <sys/mman.h>
#include <unistd.h>
#include "cell_window.h"

void cell_window_init(struct cell_window *w, int fd, __u32 max_cells, size_t stride)
{
	*w = (struct cell_window){ .fd = fd, .max_cells = max_cells, .stride = stride };
}

static void unmap(struct cell_window *w)
{
	if (w->map)
		munmap(w->map, w->map_len);
	w->map = NULL;
	w->nr = 0;
}

const struct cell *cell_window_at(struct cell_window *w, __u32 i)
{
	size_t page = getpagesize();
	__u64 start, end, total;
	void *p;

	if (w->map && i >= w->first && i - w->first < w->nr)
		return (const void *)(w->map + (i * w->stride - w->map_off));
	unmap(w);
	total = ((__u64)w->max_cells * w->stride + page - 1) / page * page;
	/* From cell i's page on, at least one whole cell, at most the map's end. */
	start = (__u64)i * w->stride / page * page;
	end = start + CELL_WINDOW_BYTES;
	if (end < ((__u64)i + 1) * w->stride)
		end = ((__u64)i + 1) * w->stride;
	end = (end + page - 1) / page * page;
	if (end > total)
		end = total;
	p = mmap(NULL, end - start, PROT_READ, MAP_SHARED, w->fd, start);
	if (p == MAP_FAILED)
		return NULL;
	w->map = p;
	w->map_len = end - start;
	w->map_off = start;
	w->first = i;
	/* The cells that end inside it; a cell split by its end comes whole in the next. */
	w->nr = (__u32)((end / w->stride) - i);
	if ((__u64)w->first + w->nr > w->max_cells)
		w->nr = w->max_cells - w->first;
	w->remaps++;
	return (const void *)(w->map + (i * w->stride - w->map_off));
}

void cell_window_free(struct cell_window *w)
{
	unmap(w);
}
