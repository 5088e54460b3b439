/* SPDX-License-Identifier: GPL-2.0 */
/* VMEXIT_DEBUG_TIMING=1: each start-up step's time on stderr, to see where start-up goes. */
#ifndef VMEXIT_STARTUP_TIMING_H
#define VMEXIT_STARTUP_TIMING_H

/* Marks the end of a step: "vmexit: timing: <step> <ms since the first mark> (+<ms>)". */
void startup_mark(const char *step);

#endif /* VMEXIT_STARTUP_TIMING_H */
