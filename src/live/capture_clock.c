// SPDX-License-Identifier: GPL-2.0
/* The stream reader's two clocks (capture_clock.h). */
#include "capture_clock.h"

void capture_clock_start(struct capture_clock *c, __u64 now_ns)
{
	c->read_at = now_ns + CAPTURE_READ_NS;
	c->chores_at = now_ns + CAPTURE_CHORES_NS;
}

int capture_clock_wait_ms(const struct capture_clock *c, __u64 now_ns, __u64 end_ns)
{
	__u64 at = c->read_at;

	if (end_ns && end_ns < at)
		at = end_ns;
	if (at <= now_ns)
		return 0;
	/* Rounded up: waking a little early would only find nothing due yet. */
	return (int)((at - now_ns + 999999) / 1000000);
}

__u64 capture_clock_read_until(__u64 now_ns, __u64 end_ns)
{
	__u64 until = now_ns + CAPTURE_SLICE_NS;

	return end_ns && end_ns < until ? end_ns : until;
}

unsigned int capture_clock_due(struct capture_clock *c, __u64 now_ns)
{
	unsigned int due = 0;

	if (now_ns >= c->read_at) {
		due |= CAPTURE_READ;
		c->read_at = now_ns + CAPTURE_READ_NS;
	}
	if (now_ns >= c->chores_at) {
		due |= CAPTURE_READ | CAPTURE_CHORES;
		c->chores_at = now_ns + CAPTURE_CHORES_NS;
	}
	return due;
}
