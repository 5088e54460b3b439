/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthesized kernel cells for `vmexit serve` without KVM: the sampler reads them through the
 * same code path as the kernel's map (struct sampler_source). Cell i is guest i / (vcpus x
 * reasons), vCPU (i / reasons) % vcpus, reason i % reasons; its k-th exit (k from 0) lasts
 * synth_lat(i, k) ns, so a test can work out every count and bucket from the definition.
 * Shared by the serve bench and tests/host/progs/serve_synth.c.
 */
#ifndef VMEXIT_SYNTH_CELLS_H
#define VMEXIT_SYNTH_CELLS_H

#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "sampler.h"

/* Far above the pids of the host's own processes (pid_max is at most 4194304). */
#define SYNTH_TGID0	4100000u

struct synth {
	struct cell *cells;
	__u32 nr, vcpus, reasons;
	__u32 epoch;
	__u64 *exits;		/* per cell: exits made so far (k of the next one) */
};

/* The reasons, in order: 6 VMX basic exit reasons, then KVM_EXIT_* codes (exits to the VMM). */
static const struct { __u32 isa, reason; } synth_reasons[] = {
	{ VMEXIT_ISA_VMX, 1 }, { VMEXIT_ISA_VMX, 10 }, { VMEXIT_ISA_VMX, 12 },
	{ VMEXIT_ISA_VMX, 30 }, { VMEXIT_ISA_VMX, 48 }, { VMEXIT_ISA_VMX, 32 },
	{ VMEXIT_ISA_USER, 2 }, { VMEXIT_ISA_USER, 6 }, { VMEXIT_ISA_USER, 5 },
	{ VMEXIT_ISA_USER, 24 },
};
#define SYNTH_MAX_REASONS	(sizeof(synth_reasons) / sizeof(synth_reasons[0]))

/* Exit k of cell i: 0 ns for k = 0 (the zero bucket), else spread from 64 ns up to 2^(10 + i
 * % 11) ns more (1 us to 1 ms, by cell). */
static inline __u64 synth_lat(__u32 i, __u64 k)
{
	if (!k)
		return 0;
	return 64 + (k * 2654435761ULL + i * 40503ULL) % (1ULL << (10 + i % 11)) /
		    (1 + k % 4 * 7);
}

static inline __u32 synth_nr(void *ctx)
{
	return ((struct synth *)ctx)->nr;
}

static inline __u32 synth_turn_epoch(void *ctx)
{
	return ((struct synth *)ctx)->epoch++;
}

static inline void synth_lost(void *ctx, __u64 lost[NR_LOST])
{
	(void)ctx;
	memset(lost, 0, NR_LOST * sizeof(lost[0]));
}

/* n more exits on every cell, as the kernel would count them. */
static inline void synth_add(struct synth *s, __u32 n)
{
	for (__u32 i = 0; i < s->nr; i++) {
		struct cell *c = &s->cells[i];

		/* The interval's min and max, as the kernel keeps them per epoch. */
		if (c->iv_epoch != s->epoch) {
			c->iv_epoch = s->epoch;
			c->iv_min_ns = ~0ULL;
			c->iv_max_ns = 0;
		}
		for (__u32 j = 0; j < n; j++) {
			__u64 lat = synth_lat(i, s->exits[i]++);

			c->started++;
			c->count++;
			c->total_ns += lat;
			c->min_ns = c->count > 1 && c->min_ns < lat ? c->min_ns : lat;
			c->max_ns = c->max_ns > lat ? c->max_ns : lat;
			c->iv_min_ns = c->iv_min_ns < lat ? c->iv_min_ns : lat;
			c->iv_max_ns = c->iv_max_ns > lat ? c->iv_max_ns : lat;
			c->hist[hist_bucket(lat)]++;
		}
	}
}

/* guests x vcpus x reasons cells (reasons <= SYNTH_MAX_REASONS), no exits yet; 0 or -1. */
static inline int synth_init(struct synth *s, struct sampler_source *src, __u32 guests,
			     __u32 vcpus, __u32 reasons)
{
	memset(s, 0, sizeof(*s));
	memset(src, 0, sizeof(*src));
	if (reasons > SYNTH_MAX_REASONS)
		return -1;
	s->nr = guests * vcpus * reasons;
	s->vcpus = vcpus;
	s->reasons = reasons;
	s->cells = calloc(s->nr, sizeof(*s->cells));
	s->exits = calloc(s->nr, sizeof(*s->exits));
	if (!s->cells || !s->exits)
		return -1;
	for (__u32 i = 0; i < s->nr; i++) {
		struct cell_key *k = &s->cells[i].key;
		__u32 r = i % reasons;

		k->tgid = SYNTH_TGID0 + i / (vcpus * reasons);
		k->vcpu = (i / reasons) % vcpus;
		k->tid = k->tgid * 8 + k->vcpu;
		k->isa = synth_reasons[r].isa;
		k->reason = synth_reasons[r].reason;
		k->ready = 1;
		s->cells[i].iv_epoch = ~0u;	/* no exit yet in any epoch */
	}
	src->cells.cells = s->cells;
	src->cells.nr_cells = synth_nr;
	src->cells.ctx = s;
	src->turn_epoch = synth_turn_epoch;
	src->lost = synth_lost;
	return 0;
}

static inline void synth_free(struct synth *s)
{
	free(s->cells);
	free(s->exits);
}

#endif /* VMEXIT_SYNTH_CELLS_H */
