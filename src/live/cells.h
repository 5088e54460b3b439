/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading the kernel's statistics cells (vmexit.h: struct cell) while its programs write them:
 * the one place that knows which loads make a look safe (a cell's key is complete once
 * key.ready is set, its values are final once ended is set), the one walker over the cells in
 * use, and the exit in flight a cell holds. The tracker (samples) and live_events (stream's
 * --stuck and its reaping of ended threads' cells) both read cells through it.
 */
#ifndef VMEXIT_CELLS_H
#define VMEXIT_CELLS_H

#include <stdbool.h>
#include "inflight.h"
#include "vmexit.h"

/* Its key is complete: the kernel sets key.ready last. */
static inline bool cell_ready(const struct cell *c)
{
	return __atomic_load_n(&c->key.ready, __ATOMIC_ACQUIRE);
}

/* Its thread has exited: once this reads true, every value of the cell is final. */
static inline bool cell_ended(const struct cell *c)
{
	return __atomic_load_n(&c->ended, __ATOMIC_ACQUIRE);
}

/* When its exit in flight began (CLOCK_MONOTONIC ns); 0: none. */
static inline __u64 cell_inflight_ts(const struct cell *c)
{
	return __atomic_load_n(&c->inflight_ts, __ATOMIC_ACQUIRE);
}

/*
 * Calls fn(ctx, i, cell) for each cell of cells[0, nr) whose key is complete, in order; stops
 * at fn's first non-zero return, which it returns (else 0).
 */
int cells_walk(const struct cell *cells, __u32 nr,
	       int (*fn)(void *ctx, __u32 i, const struct cell *c), void *ctx);

/* A cell's vCPU as the kernel knew it: from its exits, else from the thread name it stored
 * ("CPU 3/KVM"); -1 when neither says. Works after the thread is gone. */
__s32 cell_key_vcpu(const struct cell_key *k);

/* The exit in flight of a cell keyed k: its thread, guest and reason, on vcpu, begun at
 * start_ns; nothing else set (one exit: nr 1). */
void inflight_of_cell(struct inflight_exit *e, const struct cell_key *k, __s32 vcpu,
		      __u64 start_ns);

#endif /* VMEXIT_CELLS_H */
