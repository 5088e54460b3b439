/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Detaching BPF programs together. Destroying the link of a classic tracepoint program (a perf
 * event) waits for an RCU grace period, 20-100 ms, before close() returns; one after another
 * a session's four to six took 250-300 ms to end. The kernel lets such waits run side by side:
 * one thread per link, they take about one grace period in all.
 */
#ifndef VMEXIT_LINKS_DESTROY_H
#define VMEXIT_LINKS_DESTROY_H

struct bpf_link;

/* Destroys *links[0..n) (NULL ones skipped), at once and in no order, and sets each to NULL. */
void links_destroy(struct bpf_link **links[], int n);

#endif /* VMEXIT_LINKS_DESTROY_H */
