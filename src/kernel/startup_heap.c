// SPDX-License-Identifier: GPL-2.0
/* Start-up's heap policy: startup_heap.h says why. */
#include <malloc.h>
#include "startup_heap.h"

/* Larger than any one start-up allocation (the BTF blob and its index), far below RAM. */
#define HOLD_MMAP_THRESHOLD	(64 << 20)
#define HOLD_TRIM_THRESHOLD	(256 << 20)
/* glibc's documented initial values (mallopt(3)), which a long-running serve goes back to. */
#define GLIBC_MMAP_THRESHOLD	(128 << 10)
#define GLIBC_TRIM_THRESHOLD	(128 << 10)

static bool held;

bool startup_heap_hold(void)
{
	held = mallopt(M_MMAP_THRESHOLD, HOLD_MMAP_THRESHOLD) &&
	       mallopt(M_TRIM_THRESHOLD, HOLD_TRIM_THRESHOLD);
	return held;
}

void startup_heap_release(void)
{
	if (!held)
		return;
	held = false;
	mallopt(M_MMAP_THRESHOLD, GLIBC_MMAP_THRESHOLD);
	mallopt(M_TRIM_THRESHOLD, GLIBC_TRIM_THRESHOLD);
	malloc_trim(0);
}
