/* SPDX-License-Identifier: GPL-2.0 */
/* top --wake: the wake cells' growth between two snapshots. */
#ifndef VMEXIT_WAKE_DELTA_H
#define VMEXIT_WAKE_DELTA_H

#include "wake_rows.h"

/*
 * out: cur's cells, each less base's of the same key (base NULL: none), in cur's order and
 * with all of cur's keys (those that did not grow: count 0), so that two deltas of one cur
 * line up row by row. cur and base sorted (wake_snapshot_sort). 0 or -ENOMEM (out empty).
 */
int wake_snapshot_delta(struct wake_snapshot *out, const struct wake_snapshot *cur,
			const struct wake_snapshot *base);

#endif /* VMEXIT_WAKE_DELTA_H */
