// SPDX-License-Identifier: GPL-2.0
/* report --wake: the recording's deliveries through stat --wake's rows and formats. */
#include <string.h>
#include "report_wake.h"
#include "wake_output.h"

/*
 * A recording keeps each delivery, not the kernel's halted-exit cells: said where their rows
 * would be, never an empty table that reads as "no vCPU halted".
 */
static const char no_halts[] = "not in a recording (record --wake keeps each delivery; the "
			       "halts are counted live: stat --wake, top --wake, serve --wake)";

int report_wake_add(struct report_wake *rw, const struct vmexit_event *ev, __u64 start)
{
	return wake_events_add(&rw->ev, ev, start);
}

void report_wake_lost(struct report_wake *rw, const __u64 lost[NR_WAKE_LOSSES])
{
	__u64 l[NR_WAKE_LOSSES];

	memcpy(l, lost, sizeof(l));
	/* bpf/wake.bpf.c sends the delivery before it looks for its cell: a full cell map costs
	 * stat's rows, none of a recording's deliveries. */
	l[WAKE_LOST_CELLS] = 0;
	wake_events_lost(&rw->ev, l);
}

int report_wake_print(struct report_wake *rw, enum out_format fmt, FILE *f)
{
	struct wake_snapshot *s = &rw->ev.s;

	s->no_hlt = no_halts;
	s->ring = true;
	s->halt_poll_ns = -1;	/* the recording host's, not known here */
	wake_snapshot_sort(s);
	return wake_print(s, fmt, s->halt_poll_ns, f);
}

void report_wake_free(struct report_wake *rw)
{
	wake_events_free(&rw->ev);
}
