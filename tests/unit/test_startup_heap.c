// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up's heap policy (src/kernel/startup_heap.c): while held, a block the size of the
 * kernel's BTF comes from the heap and stays there when freed, so the next one reuses its pages;
 * released, the heap is trimmed and such a block is mmapped again, as glibc does by default.
 * While held, the heap the block comes from is advised to take transparent huge pages (where the
 * kernel has them); released, not any more.
 * Under ASan the allocator is ASan's, which takes no such advice: hold says so.
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
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

/*
 * The VmFlags of the mapping that holds p in /proc/self/smaps ("" when not found). Read with
 * read() into static memory: a stdio stream's buffer would be a heap block of its own, after
 * the test's, and keep the heap from being trimmed past it.
 */
static void vm_flags(const void *p, char *flags, size_t len)
{
	static char buf[1 << 20];
	unsigned long lo, hi, at = (unsigned long)p;
	size_t n = 0;
	ssize_t r;
	bool in = false;
	int fd = open("/proc/self/smaps", O_RDONLY);

	flags[0] = 0;
	while (fd >= 0 && n < sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
		n += r;
	if (fd >= 0)
		close(fd);
	buf[n] = 0;
	for (char *line = buf, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = at >= lo && at < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			snprintf(flags, len, "%s ", line + 8);
	}
}

static bool has_flag(const char *flags, const char *flag)
{
	char want[8];

	snprintf(want, sizeof(want), " %s ", flag);
	return strstr(flags, want) != NULL;
}

int main(void)
{
	/* A kernel built without THP refuses the advice: nothing to see then. */
	bool thp = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
	char flags[512], held_flags[512], pin_flags[512];
	uintptr_t mid;
	struct mallinfo2 before = mallinfo2(), held, released;
	char *a, *b;
	bool ok = startup_heap_hold();

#ifdef __SANITIZE_ADDRESS__
	CHECK(!ok);
	startup_heap_release();
	CHECK_DONE("startup_heap (ASan: no advice taken)");
#endif
	CHECK(ok);
	a = touch(BTF_SIZE);
	CHECK(a != NULL);
	held = mallinfo2();
	/* On the heap, not in a mapping of its own. */
	CHECK_EQ_U64(held.hblkhd, before.hblkhd);
	CHECK(held.arena >= before.arena + BTF_SIZE);
	/* ... and, past its first 2 MB boundary, in huge pages ("hg": VM_HUGEPAGE). */
	vm_flags(a + BTF_SIZE / 2, held_flags, sizeof(held_flags));
	if (thp)
		CHECK(has_flag(held_flags, "hg"));
	free(a);
	/* Freed, it stays: the next parse's block reuses its pages. */
	CHECK(mallinfo2().arena >= before.arena + BTF_SIZE);
	b = touch(BTF_SIZE);
	CHECK(b == a);
	mid = (uintptr_t)b + BTF_SIZE / 2;	/* an address to look up, never dereferenced */
	free(b);

	startup_heap_release();
	vm_flags((const void *)mid, flags, sizeof(flags));
	/* The heap that stays takes 4 KB pages again ("nh": VM_NOHUGEPAGE), or is gone. */
	CHECK(!has_flag(flags, "hg"));
	released = mallinfo2();
	/* Trimmed back, and such a block mmapped again: a long-running serve keeps no spike. */
	CHECK(released.arena < before.arena + BTF_SIZE);
	a = touch(BTF_SIZE);
	CHECK(a != NULL);
	CHECK(mallinfo2().hblkhd >= released.hblkhd + BTF_SIZE);
	free(a);

	/*
	 * Once more, with a small block left in use after the big one, as start-up leaves its
	 * objects: the trim stops there, and the heap kept below it must take 4 KB pages again.
	 */
	CHECK(startup_heap_hold());
	a = touch(BTF_SIZE);
	b = touch(64);
	free(a);
	startup_heap_release();
	vm_flags(b, pin_flags, sizeof(pin_flags));
	CHECK(pin_flags[0] != 0);
	CHECK(!has_flag(pin_flags, "hg"));
	if (thp)
		CHECK(has_flag(pin_flags, "nh"));
	free(b);
	/* Printed last: stdout's buffer is a heap block too. */
	printf("held: the block's VmFlags:%sreleased:%s; kept below a block in use:%s\n",
	       held_flags, flags, pin_flags);
	CHECK_DONE("startup_heap");
}
