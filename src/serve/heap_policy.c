// SPDX-License-Identifier: GPL-2.0
#include <malloc.h>
#include "heap_policy.h"

/* glibc's default starting threshold; fixed, it no longer follows the blocks freed. */
#define SERVE_MMAP_THRESHOLD	(128 * 1024)

void serve_heap_policy(void)
{
	mallopt(M_MMAP_THRESHOLD, SERVE_MMAP_THRESHOLD);
}
