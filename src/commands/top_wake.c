// SPDX-License-Identifier: GPL-2.0
/* top --wake: the kernel's wake cells (since the programs loaded) as top's interval and totals. */
#include <errno.h>
#include <stdio.h>
#include "top_wake.h"
#include "wake_delta.h"

static int said(int err)
{
	if (err)
		fprintf(stderr, "vmexit: --wake: out of memory for the wake-up rows\n");
	return err;
}

int top_wake_sample(struct top_wake *tw, const struct sample *smp, const int *pids, int nr)
{
	struct wake_snapshot now;
	int err;

	if (!smp->wake)
		return 0;
	/* A copy: the sampler refills smp->wake at its next sample, before the next interval. */
	err = wake_snapshot_copy(&now, smp->wake);
	if (err)
		return said(err);
	/* The programs see every guest: top shows those it traces (-p, -g), as stat --wake. */
	wake_snapshot_keep(&now, pids, nr);
	wake_snapshot_free(&tw->cur);
	wake_snapshot_free(&tw->tot);
	err = wake_snapshot_delta(&tw->cur, &now, &tw->last);
	err = err ? err : wake_snapshot_delta(&tw->tot, &now, &tw->base);
	wake_snapshot_free(&tw->last);
	tw->last = now;
	return said(err);
}

int top_wake_reset(struct top_wake *tw)
{
	wake_snapshot_free(&tw->base);
	return said(wake_snapshot_copy(&tw->base, &tw->last));
}

void top_wake_free(struct top_wake *tw)
{
	wake_snapshot_free(&tw->last);
	wake_snapshot_free(&tw->base);
	wake_snapshot_free(&tw->cur);
	wake_snapshot_free(&tw->tot);
}
