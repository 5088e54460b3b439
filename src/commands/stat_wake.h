/* SPDX-License-Identifier: GPL-2.0 */
/* stat --wake: the end of the run's delivery and halt rows. */
#ifndef VMEXIT_STAT_WAKE_H
#define VMEXIT_STAT_WAKE_H

#include <sys/types.h>
#include "cli_filters.h"
#include "stat_output.h"
#include "sample.h"

/* Prints the sample's wake cells (the -p pids', or the command's, when given); 0 or -errno,
 * said. Nothing without --wake (smp->wake NULL). */
int stat_wake_print(const struct sample *smp, const struct cli_filters *cf, pid_t child,
		    enum out_format fmt);

#endif /* VMEXIT_STAT_WAKE_H */
