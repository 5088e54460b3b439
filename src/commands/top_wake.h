/* SPDX-License-Identifier: GPL-2.0 */
/* top --wake: the wake cells' interval and totals (since start or r) that top's w level shows. */
#ifndef VMEXIT_TOP_WAKE_H
#define VMEXIT_TOP_WAKE_H

#include "sample.h"

struct top_wake {
	struct wake_snapshot last;	/* the kernel's cells at the previous sample */
	struct wake_snapshot base;	/* ... at the reset (r); empty: since start */
	struct wake_snapshot cur;	/* grown in the last interval */
	struct wake_snapshot tot;	/* grown since base */
};

/*
 * After a sample: cur and tot from smp->wake (nothing without --wake), of the nr pids (0: all
 * guests). 0 or -ENOMEM (said).
 */
int top_wake_sample(struct top_wake *tw, const struct sample *smp, const int *pids, int nr);
/* r: the totals start again from the last sample. 0 or -ENOMEM (said). */
int top_wake_reset(struct top_wake *tw);
void top_wake_free(struct top_wake *tw);

#endif /* VMEXIT_TOP_WAKE_H */
