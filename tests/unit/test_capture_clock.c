// SPDX-License-Identifier: GPL-2.0
/* The stream reader's clock: never waits past a read, reads on time, chores on their own. */
#include "check.h"
#include "capture_clock.h"

#define MS 1000000ull

int main(void)
{
	struct capture_clock c;
	__u64 t = 1000 * MS;
	int reads = 0, chores = 0;

	capture_clock_start(&c, t);
	/* Nothing due at once; the wait ends at the read, or earlier at the end of tracing. */
	CHECK(capture_clock_due(&c, t) == 0);
	CHECK(capture_clock_wait_ms(&c, t, 0) == CAPTURE_READ_NS / MS);
	CHECK(capture_clock_wait_ms(&c, t, t + 5 * MS) == 5);
	CHECK(capture_clock_wait_ms(&c, t, t + 500 * MS) == CAPTURE_READ_NS / MS);
	/* Rounded up, never 0 before the read is due: a 0 wait would spin. */
	CHECK(capture_clock_wait_ms(&c, t + CAPTURE_READ_NS - 1, 0) == 1);
	CHECK(capture_clock_wait_ms(&c, t + CAPTURE_READ_NS, 0) == 0);
	CHECK(capture_clock_due(&c, t + CAPTURE_READ_NS - 1) == 0);

	/* One second woken every ms (a busy kernel): reads every CAPTURE_READ_NS, chores every
	 * CAPTURE_CHORES_NS, each chores round with a read. */
	for (__u64 now = t + MS; now <= t + 1000 * MS; now += MS) {
		unsigned int due = capture_clock_due(&c, now);

		reads += !!(due & CAPTURE_READ);
		chores += !!(due & CAPTURE_CHORES);
		CHECK(!(due & CAPTURE_CHORES) || (due & CAPTURE_READ));
		/* The longest a record can wait unread: until the next read. */
		CHECK(capture_clock_wait_ms(&c, now, 0) * MS <= CAPTURE_READ_NS);
	}
	CHECK(reads == 1000 * MS / CAPTURE_READ_NS);
	CHECK(chores == 1000 * MS / CAPTURE_CHORES_NS);

	/* After a stall of 10 s: one read and one round of chores, not a burst of them. */
	t += 11000 * MS;
	CHECK(capture_clock_due(&c, t) == (CAPTURE_READ | CAPTURE_CHORES));
	CHECK(capture_clock_due(&c, t + 1) == 0);
	CHECK(capture_clock_wait_ms(&c, t + 1, 0) == CAPTURE_READ_NS / MS);

	/* A read never runs past a slice (a ring that never empties still lets the clock's work
	 * run), nor past -d's end; one past the end stops at once (after its first batch). */
	CHECK(capture_clock_read_until(t, 0) == t + CAPTURE_SLICE_NS);
	CHECK(capture_clock_read_until(t, t + 5 * MS) == t + 5 * MS);
	CHECK(capture_clock_read_until(t, t + CAPTURE_SLICE_NS + 1) == t + CAPTURE_SLICE_NS);
	CHECK(capture_clock_read_until(t, t - 1) == t - 1);
	/* record flushes and asks QMP every second: a slice leaves it room to. */
	CHECK(CAPTURE_SLICE_NS > CAPTURE_READ_NS && CAPTURE_SLICE_NS <= CAPTURE_CHORES_NS);
	CHECK_DONE("capture_clock");
}
