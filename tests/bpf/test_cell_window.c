// SPDX-License-Identifier: GPL-2.0
/*
 * kernel/cell_window.h on a real BPF array as vmexit makes its cell map (BPF_F_MMAPABLE,
 * struct cell values): every cell read through the window equals what the syscall reads,
 * walking forward (a few windows for the whole map), backwards and at random, cells that
 * straddle a page boundary included; and the reader's resident memory grows by about one
 * window (at most 4 MB of the map's 26 MB), not by the map's size (a whole mapping puts every page in it at once).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "../unit/check.h"
#include "cell_window.h"

#define CELLS	20000u		/* 26 MB of cells */

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

static void fill(struct cell *c, __u32 i)
{
	memset(c, 0, sizeof(*c));
	c->key.tgid = i;
	c->key.ready = 1;
	c->started = (__u64)i * 3 + 1;
	c->hist[0] = i;
	c->hist[NR_BUCKETS - 1] = ~i;	/* the last bytes of the value */
}

static void check_cell(struct cell_window *w, __u32 i)
{
	const struct cell *c = cell_window_at(w, i);
	struct cell want;

	CHECK(c != NULL);
	if (!c)
		return;
	fill(&want, i);
	if (memcmp(c, &want, sizeof(want))) {
		fprintf(stderr, "cell %u differs\n", i);
		CHECK(0);
	}
}

int main(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	size_t stride = (sizeof(struct cell) + 7) & ~7ul;
	struct cell_window w;
	struct cell c;
	long rss0, grew;
	__u64 whole;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cells", sizeof(__u32), sizeof(struct cell),
				CELLS, &o);

	/* Loading vmexit's maps is what this checks: a refusal fails, never skips. */
	if (fd < 0) {
		fprintf(stderr, "cannot create an mmapable array: %s\n", strerror(errno));
		CHECK(0);
		CHECK_DONE("cell_window");
	}
	CHECK(stride == sizeof(struct cell));
	for (__u32 i = 0; i < CELLS; i++) {
		fill(&c, i);
		CHECK(bpf_map_update_elem(fd, &i, &c, BPF_ANY) == 0);
	}
	rss0 = rss_kb();
	cell_window_init(&w, fd, CELLS, stride);
	for (__u32 i = 0; i < CELLS; i++)
		check_cell(&w, i);
	whole = (__u64)CELLS * stride;
	/* One pass: one mapping per window's worth of cells, give or take a partial one. */
	CHECK(w.remaps <= whole / (CELL_WINDOW_BYTES - 2 * 4096) + 1);
	grew = rss_kb() - rss0;
	/* A fixed bound, not one derived from CELL_WINDOW_BYTES: a window as big as the map
	 * must fail here. */
	if (grew > 4096)
		fprintf(stderr, "resident memory grew by %ld kB (the map: %llu kB)\n", grew,
			(unsigned long long)whole / 1024);
	CHECK(grew <= 4096);
	for (__u32 i = CELLS; i-- > 0;)
		check_cell(&w, i);
	srand(7);
	for (int k = 0; k < 300; k++)
		check_cell(&w, (__u32)rand() % CELLS);
	check_cell(&w, CELLS - 1);	/* the map's last bytes */
	cell_window_free(&w);
	close(fd);
	CHECK_DONE("cell_window");
}
