// SPDX-License-Identifier: GPL-2.0
/* report --wake: stat --wake's halted-exit cells from recorded halts (hlt_events.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "hlt_events.h"

enum halt_end halt_end_of(const struct vmexit_event *ev)
{
	struct vmexit_event e = *ev;

	if (!(ev->error_code & VMEXIT_HALT_WAITED))
		return HALT_END_POLLED;
	/* bpf/wake.bpf.c: a halt that slept polled first when its first sleep came after it
	 * began, which is its poll part. */
	return *hlt_event_part(&e, HLT_PART_POLL) ? HALT_END_POLL_SLEPT : HALT_END_SLEPT;
}

const char *halt_end_name(enum halt_end e)
{
	switch (e) {
	case HALT_END_POLLED:		return "polled";
	case HALT_END_POLL_SLEPT:	return "poll_slept";
	default:			return "slept";
	}
}

/* Room for one more cell in both arrays, before the index may name it: 0 or -ENOMEM. */
static int room(struct hlt_events *h, struct wake_snapshot *s)
{
	size_t cap = h->cap ? h->cap * 2 : 16;
	struct hlt_key *k;
	struct hlt_cell *c;

	if (s->nr_hlt < h->cap)
		return 0;
	k = reallocarray(s->hkeys, cap, sizeof(*k));
	if (!k)
		return -ENOMEM;
	s->hkeys = k;
	c = reallocarray(s->hcells, cap, sizeof(*c));
	if (!c)
		return -ENOMEM;
	s->hcells = c;
	h->cap = cap;
	return 0;
}

/* As wake_halt_end in bpf/wake_common.bpf.h adds a halt to its cell. */
static void add_halt(struct hlt_cell *c, struct vmexit_event *e)
{
	__u64 wake;
	__u32 b;

	c->halts++;
	c->halt_ns += e->latency_ns;
	if (!(e->error_code & VMEXIT_HALT_VALID))
		c->invalid++;
	switch (halt_end_of(e)) {
	case HALT_END_POLLED:
		c->polled++;
		break;
	case HALT_END_POLL_SLEPT:
		c->poll_slept++;
		break;
	default:
		c->slept++;
	}
	/* Its start to its wake-up: the whole of a polled one, else its poll and sleep. */
	wake = *hlt_event_part(e, HLT_PART_POLL);
	if (e->error_code & VMEXIT_HALT_WAITED) {
		wake += *hlt_event_part(e, HLT_PART_SLEEP);
		c->slept_halt_ns += e->latency_ns;
	}
	b = hist_bucket(wake);
	if (b < NR_BUCKETS)
		c->hist[b]++;
	c->wake_sum_ns += wake;
}

/* As hlt_account() there adds a halted exit: the halts' parts came with it, not with them. */
static void add_exit(struct hlt_cell *c, struct vmexit_event *e)
{
	c->exits++;
	c->sum_ns += e->latency_ns;
	for (int i = 0; i < NR_HLT_PARTS; i++)
		c->parts[i] += *hlt_event_part(e, i);
}

int hlt_events_add(struct hlt_events *h, struct wake_snapshot *s, const struct vmexit_event *ev,
		   __u64 start)
{
	struct hlt_key k = { .tgid = ev->tgid, .vcpu = ev->vcpu, .proc_start = start };
	__u16 type = VMEXIT_EV_TYPE(ev->type);
	struct vmexit_event e = *ev;
	bool added;
	size_t *at;

	if (type != VMEXIT_EV_HALT && type != VMEXIT_EV_HLT)
		return -EINVAL;
	if (room(h, s))
		return -ENOMEM;
	at = hlt_cell_index_get(&h->index, &k, &added);
	if (!at)
		return -ENOMEM;
	if (added) {
		*at = s->nr_hlt++;
		s->hkeys[*at] = k;
		memset(&s->hcells[*at], 0, sizeof(*s->hcells));
	}
	if (type == VMEXIT_EV_HALT)
		add_halt(&s->hcells[*at], &e);
	else
		add_exit(&s->hcells[*at], &e);
	return 0;
}

void hlt_events_free(struct hlt_events *h)
{
	hlt_cell_index_free(&h->index);
	h->cap = 0;
}
