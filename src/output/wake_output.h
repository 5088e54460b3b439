/* SPDX-License-Identifier: GPL-2.0 */
/* stat --wake: delivery rows, halted-exit rows and halt-poll advice as table, CSV or JSON. */
#ifndef VMEXIT_WAKE_OUTPUT_H
#define VMEXIT_WAKE_OUTPUT_H

#include <stdio.h>
#include "stat_output.h"
#include "wake_rows.h"

/*
 * s sorted (wake_snapshot_sort); halt_poll_ns: KVM's parameter now, or < 0 when unknown.
 * Returns 0 or the failed write's -errno.
 */
int wake_print(const struct wake_snapshot *s, enum out_format fmt, long long halt_poll_ns,
	       FILE *f);

#endif /* VMEXIT_WAKE_OUTPUT_H */
