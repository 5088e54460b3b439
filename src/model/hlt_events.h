/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report --wake: stat --wake's halted-exit cells (struct hlt_cell), made from a recording's
 * halts and halted exits (VMEXIT_EV_HALT, VMEXIT_EV_HLT) exactly as bpf/wake.bpf.c makes them
 * from the same events, into a wake_snapshot that wake_output.h prints as it prints stat's.
 */
#ifndef VMEXIT_HLT_EVENTS_H
#define VMEXIT_HLT_EVENTS_H

#include "hashmap.h"
#include "wake_rows.h"

/* How a halt ended, as struct hlt_cell counts it. */
enum halt_end {
	HALT_END_POLLED,	/* woken while polling */
	HALT_END_POLL_SLEPT,	/* polled, then slept */
	HALT_END_SLEPT,		/* slept without polling */
};

/* Of a VMEXIT_EV_HALT event. */
enum halt_end halt_end_of(const struct vmexit_event *ev);
const char *halt_end_name(enum halt_end e);

DEFINE_HASHMAP(hlt_cell_index, struct hlt_key, size_t)

struct hlt_events {
	size_t cap;			/* of the snapshot's hkeys and hcells */
	struct hlt_cell_index index;	/* key -> its place in the snapshot */
};

/*
 * One halt or halted exit of VMM process (ev->tgid, start) into s's halted-exit cells: 0,
 * -ENOMEM, or -EINVAL for an event of another type.
 */
int hlt_events_add(struct hlt_events *h, struct wake_snapshot *s, const struct vmexit_event *ev,
		   __u64 start);
/* The index only: the cells are the snapshot's (wake_snapshot_free()). */
void hlt_events_free(struct hlt_events *h);

#endif /* VMEXIT_HLT_EVENTS_H */
