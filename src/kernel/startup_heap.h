/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The heap during start-up: every BPF object libbpf loads parses the kernel's BTF anew (5.5 MB
 * on 6.18, ~15 MB of parse structures), and freed between parses. glibc serves such blocks with
 * fresh mmap()s and gives them back at free(), so each parse faults its memory in again: on a
 * host whose first touch of a page is dear (a VM whose memory the hypervisor backs lazily:
 * 25-40 us a page on the development host) that was most of the start-up. Held on the heap, the
 * second parse reuses the first one's pages, and that heap takes transparent huge pages while
 * start-up lasts, so that even the first parse faults once per 2 MB (docs/design.md, "Start-up").
 */
#ifndef VMEXIT_STARTUP_HEAP_H
#define VMEXIT_STARTUP_HEAP_H

#include <stdbool.h>

/*
 * From the session's start: large blocks on the heap, kept there when freed, and the heap they
 * come from advised MADV_HUGEPAGE. false when the allocator takes no such advice (ASan's: then
 * nothing changes).
 */
bool startup_heap_hold(void);

/* Once every object is loaded: glibc's defaults again, 4 KB pages for the heap that stays, and
 * what is free given back. */
void startup_heap_release(void);

#endif /* VMEXIT_STARTUP_HEAP_H */
