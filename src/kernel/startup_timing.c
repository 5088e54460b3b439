// SPDX-License-Identifier: GPL-2.0
/* Start-up step timings for VMEXIT_DEBUG_TIMING=1 (docs/design.md, "Start-up"). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "env_knobs.h"
#include "startup_timing.h"

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void startup_mark(const char *step)
{
	static int on = -1;
	static double first, last;
	double now;

	if (on < 0)
		on = env_knob_on("VMEXIT_DEBUG_TIMING");
	if (!on)
		return;
	now = mono_ms();
	if (!first)
		first = last = now;
	fprintf(stderr, "vmexit: timing: %-32s %7.1f ms (+%.1f)\n", step, now - first, now - last);
	last = now;
}
