/* SPDX-License-Identifier: GPL-2.0 */
/* report of a recording made with --wake: stat --wake's delivery rows from its wake records. */
#ifndef VMEXIT_REPORT_WAKE_H
#define VMEXIT_REPORT_WAKE_H

#include <stdio.h>
#include "stat_output.h"
#include "wake_events.h"

struct report_wake {
	struct wake_events ev;
};

/* A delivery that passed report's filters, of VMM process (ev->tgid, start): 0 or -ENOMEM. */
int report_wake_add(struct report_wake *rw, const struct vmexit_event *ev, __u64 start);
void report_wake_lost(struct report_wake *rw, const __u64 lost[NR_WAKE_LOSSES]);
/* The rows as stat --wake prints them (fmt), the halts said to be absent: 0 or -errno. */
int report_wake_print(struct report_wake *rw, enum out_format fmt, FILE *f);
void report_wake_free(struct report_wake *rw);

#endif /* VMEXIT_REPORT_WAKE_H */
