// SPDX-License-Identifier: GPL-2.0
/* serve --wake: the kernel's wake cells summed into the exported series (wake_series.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "wake_series.h"

static void wake_cell_add(struct wake_cell *to, const struct wake_cell *c)
{
	to->count += c->count;
	to->posted += c->posted;
	to->sum_ns += c->sum_ns;
	if (c->max_ns > to->max_ns)
		to->max_ns = c->max_ns;
	for (int p = 0; p < NR_WAKE_PARTS; p++)
		to->parts[p] += c->parts[p];
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		to->hist[b] += c->hist[b];
}

static void hlt_cell_add(struct hlt_cell *to, const struct hlt_cell *c)
{
	to->exits += c->exits;
	to->halts += c->halts;
	to->polled += c->polled;
	to->poll_slept += c->poll_slept;
	to->slept += c->slept;
	to->invalid += c->invalid;
	to->sum_ns += c->sum_ns;
	to->halt_ns += c->halt_ns;
	to->wake_sum_ns += c->wake_sum_ns;
	to->slept_halt_ns += c->slept_halt_ns;
	for (int p = 0; p < NR_HLT_PARTS; p++)
		to->parts[p] += c->parts[p];
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		to->hist[b] += c->hist[b];
}

static int grow(void **p, __u32 *cap, __u32 need, size_t sz)
{
	__u32 n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, (size_t)n * sz);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/*
 * The cells come sorted by pid, start, vCPU, source, vector: a series is a run of them, except
 * that without --by vcpu one guest's sources repeat for each vCPU. So each cell goes to the
 * series of its (vCPU, source) among this VMM's series so far (a handful: 7 sources at most).
 */
static int take_wake(struct wake_series *ws, const struct wake_snapshot *w,
		     wake_series_guest_fn *guest, void *ctx)
{
	__u32 first = 0;	/* this VMM's first series */
	__u32 tgid = 0;
	__u64 start = 0;
	bool exported = false;
	const char *name = NULL;
	__u64 created = 0;

	for (size_t i = 0; i < w->nr_wake; i++) {
		const struct wake_key *k = &w->wkeys[i];
		__s32 vcpu = ws->by_vcpu ? k->vcpu : -1;
		__u32 s;

		if (!i || k->tgid != tgid || k->proc_start != start) {
			tgid = k->tgid;
			start = k->proc_start;
			first = ws->nr_wake;
			exported = guest(ctx, tgid, start, &name, &created);
		}
		if (!exported)
			continue;
		for (s = first; s < ws->nr_wake; s++)
			if (ws->wake[s].vcpu == vcpu && ws->wake[s].source == k->source)
				break;
		if (s == ws->nr_wake) {
			if (grow((void **)&ws->wake, &ws->cap_wake, s + 1, sizeof(*ws->wake)))
				return -ENOMEM;
			ws->wake[s] = (struct expo_wake){ .guest = name, .created_ms = created,
				.tgid = tgid, .start = start, .vcpu = vcpu, .source = k->source };
			ws->nr_wake++;
		}
		wake_cell_add(&ws->wake[s].c, &w->wcells[i]);
	}
	return 0;
}

/* Sorted by pid, start, vCPU: without --by vcpu, a VMM's cells make one series. */
static int take_halt(struct wake_series *ws, const struct wake_snapshot *w,
		     wake_series_guest_fn *guest, void *ctx)
{
	bool exported = false;
	const char *name = NULL;
	__u64 created = 0;

	for (size_t i = 0; i < w->nr_hlt; i++) {
		const struct hlt_key *k = &w->hkeys[i];
		__s32 vcpu = ws->by_vcpu ? k->vcpu : -1;
		struct expo_halt *h = ws->nr_halt ? &ws->halt[ws->nr_halt - 1] : NULL;

		if (!i || k->tgid != w->hkeys[i - 1].tgid ||
		    k->proc_start != w->hkeys[i - 1].proc_start)
			exported = guest(ctx, k->tgid, k->proc_start, &name, &created);
		if (!exported)
			continue;
		if (!h || h->tgid != k->tgid || h->start != k->proc_start || h->vcpu != vcpu) {
			if (grow((void **)&ws->halt, &ws->cap_halt, ws->nr_halt + 1,
				 sizeof(*ws->halt)))
				return -ENOMEM;
			h = &ws->halt[ws->nr_halt++];
			*h = (struct expo_halt){ .guest = name, .created_ms = created,
				.tgid = k->tgid, .start = k->proc_start, .vcpu = vcpu };
		}
		hlt_cell_add(&h->c, &w->hcells[i]);
	}
	return 0;
}

int wake_series_take(struct wake_series *ws, const struct wake_snapshot *w,
		     wake_series_guest_fn *guest, void *ctx)
{
	int err;

	ws->nr_wake = 0;
	ws->nr_halt = 0;
	memcpy(ws->lost, w->lost, sizeof(ws->lost));
	ws->untimed = w->untimed;
	ws->untimed_known = w->untimed_known;
	ws->halt_poll_ns = w->halt_poll_ns;
	err = take_wake(ws, w, guest, ctx);
	return err ? err : take_halt(ws, w, guest, ctx);
}

void wake_series_free(struct wake_series *ws)
{
	free(ws->wake);
	free(ws->halt);
	ws->wake = NULL;
	ws->halt = NULL;
	ws->nr_wake = ws->cap_wake = ws->nr_halt = ws->cap_halt = 0;
}
