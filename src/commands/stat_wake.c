// SPDX-License-Identifier: GPL-2.0
/* stat --wake: the kernel's wake cells at the run's last sample, for the guests stat traced. */
#include <stdio.h>
#include "out_write.h"
#include "stat_wake.h"
#include "wake_output.h"

int stat_wake_print(const struct sample *smp, enum out_format fmt)
{
	struct wake_snapshot s;
	int err;

	if (!smp->wake)
		return 0;
	err = wake_snapshot_copy(&s, smp->wake);
	if (err) {
		out_write_error("the wake-up statistics", err);
		return err;
	}
	wake_snapshot_sort(&s);
	err = wake_print(&s, fmt, s.halt_poll_ns, stdout);
	if (err)
		out_write_error("the wake-up statistics", err);
	wake_snapshot_free(&s);
	return err;
}
