/* SPDX-License-Identifier: GPL-2.0 */
/* stat --wake: the end of the run's delivery and halt rows. */
#ifndef VMEXIT_STAT_WAKE_H
#define VMEXIT_STAT_WAKE_H

#include "stat_output.h"
#include "sample.h"

/*
 * Prints the sample's wake cells: the kernel keeps only those of the guests and vCPU the run
 * traces (src/kernel/wake_progs.c). 0 or -errno, said. Nothing without --wake (smp->wake NULL).
 */
int stat_wake_print(const struct sample *smp, enum out_format fmt);

#endif /* VMEXIT_STAT_WAKE_H */
