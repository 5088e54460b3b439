/* SPDX-License-Identifier: GPL-2.0 */
/* report of a recording made with --wake: stat --wake's rows from its wake and hlt records. */
#ifndef VMEXIT_REPORT_WAKE_H
#define VMEXIT_REPORT_WAKE_H

#include <stdio.h>
#include "stat_output.h"
#include "hlt_events.h"
#include "wake_events.h"

struct report_wake {
	struct wake_events ev;
	struct hlt_events hlt;		/* into ev.s's halted-exit cells */
	bool halts;			/* the recording keeps its halts (1.9) */
	long long halt_poll_ns;		/* the recording host's; -1 unknown */
};

/* The recording keeps halts (rec_meta.halts), and its host's halt_poll_ns (-1 unknown). */
void report_wake_set_halts(struct report_wake *rw, bool halts, long long halt_poll_ns);
/* A delivery, halt or halted exit that passed report's filters, of VMM process (ev->tgid, start): 0 or -ENOMEM. */
int report_wake_add(struct report_wake *rw, const struct vmexit_event *ev, __u64 start);
void report_wake_lost(struct report_wake *rw, const __u64 lost[NR_WAKE_LOSSES]);
/* The rows as stat --wake prints them (fmt), the halts said absent from an older file: 0 or
 * -errno. */
int report_wake_print(struct report_wake *rw, enum out_format fmt, FILE *f);
void report_wake_free(struct report_wake *rw);

#endif /* VMEXIT_REPORT_WAKE_H */
