/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report --wake: the delivery cells of stat --wake, made from the deliveries of a recording
 * (VMEXIT_EV_WAKE events) exactly as bpf/wake.bpf.c makes them from the same deliveries, so
 * that wake_rows.h and wake_output.h print them as they print the kernel's.
 */
#ifndef VMEXIT_WAKE_EVENTS_H
#define VMEXIT_WAKE_EVENTS_H

#include "hashmap.h"
#include "wake_rows.h"

DEFINE_HASHMAP(wake_cell_index, struct wake_key, size_t)

struct wake_events {
	struct wake_snapshot s;		/* the cells so far, in order of first delivery */
	size_t cap;
	struct wake_cell_index index;	/* key -> its place in s */
};

/* One delivery of the VMM process (ev->tgid, start): 0 or -ENOMEM. */
int wake_events_add(struct wake_events *w, const struct vmexit_event *ev, __u64 start);
/* The loss counters grew by these (the ring's too: a recording's deliveries came through it). */
void wake_events_lost(struct wake_events *w, const __u64 lost[NR_WAKE_LOSSES]);
void wake_events_free(struct wake_events *w);

#endif /* VMEXIT_WAKE_EVENTS_H */
