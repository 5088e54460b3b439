/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve's heap: every scrape builds and frees buffers of megabytes (the exposition, its gzip,
 * the protobuf's text pass). glibc raises its mmap threshold to the size of each large block
 * freed (up to 32 MB), after which blocks that size come from the heap and stay resident once
 * freed, between scrapes too. A fixed threshold keeps them mapped, so a freed buffer leaves:
 * 1,000 guests (bench_serve_scale), 73 -> 66 MB resident between scrapes.
 */
#ifndef VMEXIT_HEAP_POLICY_H
#define VMEXIT_HEAP_POLICY_H

/* Before the first large allocation. */
void serve_heap_policy(void);

#endif /* VMEXIT_HEAP_POLICY_H */
