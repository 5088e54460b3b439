// SPDX-License-Identifier: GPL-2.0
/* report --wake: stat --wake's delivery cells from recorded deliveries (wake_events.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "wake_events.h"

/* Room for one more cell in both arrays, before the index may name it: 0 or -ENOMEM. */
static int room(struct wake_events *w)
{
	struct wake_snapshot *s = &w->s;
	size_t cap = w->cap ? w->cap * 2 : 16;
	struct wake_key *k;
	struct wake_cell *c;

	if (s->nr_wake < w->cap)
		return 0;
	k = reallocarray(s->wkeys, cap, sizeof(*k));
	if (!k)
		return -ENOMEM;
	s->wkeys = k;
	c = reallocarray(s->wcells, cap, sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->wcells = c;
	w->cap = cap;
	return 0;
}

int wake_events_add(struct wake_events *w, const struct vmexit_event *ev, __u64 start)
{
	struct wake_key k = { .tgid = ev->tgid, .vcpu = ev->vcpu, .source = ev->reason,
			      .vector = ev->intr_info, .proc_start = start };
	struct vmexit_event e = *ev;
	struct wake_cell *c;
	bool added;
	size_t *at;

	/* Untimed (no entry seen for its vCPU): in no row, counted as bpf/wake.bpf.c does. */
	if (VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_WAKE_UNTIMED) {
		w->s.untimed++;
		return 0;
	}
	__u32 b;

	if (room(w))
		return -ENOMEM;
	at = wake_cell_index_get(&w->index, &k, &added);
	if (!at)
		return -ENOMEM;
	if (added) {
		*at = w->s.nr_wake++;
		w->s.wkeys[*at] = k;
		memset(&w->s.wcells[*at], 0, sizeof(*w->s.wcells));
	}
	/* Posted (no exit): counted in its cell and the total, as bpf/wake.bpf.c does; no time. */
	if (VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_WAKE_POSTED) {
		w->s.wcells[*at].posted++;
		w->s.posted++;
		return 0;
	}
	/* As bpf/wake.bpf.c adds a delivery to its cell. */
	c = &w->s.wcells[*at];
	c->count++;
	c->sum_ns += ev->latency_ns;
	if (ev->latency_ns > c->max_ns)
		c->max_ns = ev->latency_ns;
	b = hist_bucket(ev->latency_ns);
	if (b < NR_BUCKETS)
		c->hist[b]++;
	for (int i = 0; i < NR_WAKE_PARTS; i++)
		c->parts[i] += *wake_event_part(&e, i);
	return 0;
}

void wake_events_lost(struct wake_events *w, const __u64 lost[NR_WAKE_LOSSES])
{
	for (int i = 0; i < NR_WAKE_LOST; i++)
		w->s.lost[i] += lost[i];
	w->s.ring_lost += lost[WAKE_LOST_RING];
}

void wake_events_free(struct wake_events *w)
{
	wake_snapshot_free(&w->s);
	wake_cell_index_free(&w->index);
	w->cap = 0;
}
