// SPDX-License-Identifier: GPL-2.0
/* Start-up's heap policy: startup_heap.h says why. */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include "startup_heap.h"

/* Larger than any one start-up allocation (the BTF blob and its index), far below RAM. */
#define HOLD_MMAP_THRESHOLD	(64 << 20)
#define HOLD_TRIM_THRESHOLD	(256 << 20)
/* glibc's documented initial values (mallopt(3)), which a long-running serve goes back to. */
#define GLIBC_MMAP_THRESHOLD	(128 << 10)
#define GLIBC_TRIM_THRESHOLD	(128 << 10)

/* Start-up's peak above idle is ~30 MB (three BTF parses' blobs and indexes, the objects). */
#define HOLD_HUGE_BYTES		(48 << 20)
#define HUGE_PAGE		((uintptr_t)2 << 20)

static bool held;
static char *huge_lo, *huge_hi;		/* the heap's range advised MADV_HUGEPAGE */

/*
 * The heap that start-up's blocks will come from, made of transparent huge pages: one fault
 * maps 2 MB where 4 KB pages take 512. On a host where a page's first touch is dear (the
 * development VM: 32 MB touched in 214 ms in 4 KB pages, 3-6 ms in 2 MB ones) this is most of
 * what the BTF parses still cost once their pages are reused. The block is taken from the heap
 * (below the mmap threshold just set) and freed at once: the trim threshold keeps it there,
 * and the parses' blocks are then cut from it. Only advice: a kernel without THP, or set to
 * "never", says no and nothing changes.
 */
static void heap_huge_pages(void)
{
	char *p = malloc(HOLD_HUGE_BYTES);
	uintptr_t lo, hi;

	if (!p)
		return;
	lo = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	hi = ((uintptr_t)p + HOLD_HUGE_BYTES) & ~(HUGE_PAGE - 1);
	if (hi > lo && !madvise((void *)lo, hi - lo, MADV_HUGEPAGE)) {
		huge_lo = (char *)lo;
		huge_hi = (char *)hi;
	}
	free(p);
}

bool startup_heap_hold(void)
{
	held = mallopt(M_MMAP_THRESHOLD, HOLD_MMAP_THRESHOLD) &&
	       mallopt(M_TRIM_THRESHOLD, HOLD_TRIM_THRESHOLD);
	if (held)
		heap_huge_pages();
	return held;
}

void startup_heap_release(void)
{
	if (!held)
		return;
	held = false;
	/* The heap that stays (a serve runs for months) takes 4 KB pages again, and the trim
	 * below gives back the free parts of the huge ones. */
	if (huge_lo)
		madvise(huge_lo, huge_hi - huge_lo, MADV_NOHUGEPAGE);
	huge_lo = huge_hi = NULL;
	mallopt(M_MMAP_THRESHOLD, GLIBC_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, GLIBC_TRIM_THRESHOLD);
	malloc_trim(0);
}
