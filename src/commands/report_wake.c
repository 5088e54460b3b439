// SPDX-License-Identifier: GPL-2.0
/* report --wake: the recording's deliveries and halts through stat --wake's rows and formats. */
#include <string.h>
#include "report_wake.h"
#include "wake_output.h"

/*
 * A recording older than 1.9 keeps each delivery, not the halts: said where their rows would
 * be, never an empty table that reads as "no vCPU halted".
 */
static const char no_halts[] = "not in this recording (its format is older than 1.9: record "
			       "--wake keeps the halts since; live: stat --wake, top --wake, serve "
			       "--wake)";

void report_wake_set_halts(struct report_wake *rw, bool halts, long long halt_poll_ns)
{
	rw->halts = halts;
	rw->halt_poll_ns = halts ? halt_poll_ns : -1;
}

int report_wake_add(struct report_wake *rw, const struct vmexit_event *ev, __u64 start)
{
	__u16 type = VMEXIT_EV_TYPE(ev->type);

	if (type == VMEXIT_EV_HALT || type == VMEXIT_EV_HLT)
		return hlt_events_add(&rw->hlt, &rw->ev.s, ev, start);
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

	s->no_hlt = rw->halts ? NULL : no_halts;
	s->ring = true;
	s->halt_poll_ns = rw->halt_poll_ns;	/* the recording host's, as recording began */
	wake_snapshot_sort(s);
	return wake_print(s, fmt, s->halt_poll_ns, f);
}

void report_wake_free(struct report_wake *rw)
{
	wake_events_free(&rw->ev);
	hlt_events_free(&rw->hlt);
}
