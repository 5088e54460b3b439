// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up's heap policy (src/kernel/startup_heap.c): while held, a block the size of the
 * kernel's BTF comes from the heap and stays there when freed, so the next one reuses its pages;
 * released, the heap is trimmed and such a block is mmapped again, as glibc does by default.
 * Under ASan the allocator is ASan's, which takes no such advice: hold says so.
 */
#include <malloc.h>
#include <stdlib.h>
#include "check.h"
#include "startup_heap.h"

/* The size of 6.18's vmlinux BTF, well above glibc's initial mmap threshold (128 KiB). */
#define BTF_SIZE	(5520272)

static char *touch(size_t n)
{
	char *volatile p = malloc(n);

	if (p)
		p[0] = p[n - 1] = 1;
	return p;
}

int main(void)
{
	struct mallinfo2 before, held, released;
	char *a, *b;
	bool ok = startup_heap_hold();

#ifdef __SANITIZE_ADDRESS__
	CHECK(!ok);
	startup_heap_release();
	return check_failures ? 1 : 0;
#endif
	CHECK(ok);
	before = mallinfo2();
	a = touch(BTF_SIZE);
	CHECK(a != NULL);
	held = mallinfo2();
	/* On the heap, not in a mapping of its own. */
	CHECK_EQ_U64(held.hblkhd, before.hblkhd);
	CHECK(held.arena >= before.arena + BTF_SIZE);
	free(a);
	/* Freed, it stays: the next parse's block reuses its pages. */
	CHECK(mallinfo2().arena >= before.arena + BTF_SIZE);
	b = touch(BTF_SIZE);
	CHECK(b == a);
	free(b);

	startup_heap_release();
	released = mallinfo2();
	/* Trimmed back, and such a block mmapped again: a long-running serve keeps no spike. */
	CHECK(released.arena < before.arena + BTF_SIZE);
	a = touch(BTF_SIZE);
	CHECK(a != NULL);
	CHECK(mallinfo2().hblkhd >= released.hblkhd + BTF_SIZE);
	free(a);
	return check_failures ? 1 : 0;
}
