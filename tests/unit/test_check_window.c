// SPDX-License-Identifier: GPL-2.0
/* The rule that ends the fast path's start-up check window (src/kernel/hooks.c, hooks.h). */
#include "check.h"
#include "hooks.h"

/* A window of 0.3 s from t = 100 s, as stat's start-up uses. */
static struct check_window win(bool verbose, double window_s)
{
	return (struct check_window){ .start = 100, .window_s = window_s, .verbose = verbose,
				      .last_seen_at = 100 };
}

int main(void)
{
	struct check_window w;

	/* No VM: nothing seen, the window ends after CHECK_IDLE_S. */
	w = win(false, 0.3);
	CHECK(check_window_open(&w, 100.05, 0, 0, 0));
	CHECK(!check_window_open(&w, 100.1, 0, 0, 0));

	/*
	 * The host already quiet for 0.07 s before the window (start-up's kvm_exit watch): the
	 * 0.1 s without exits is over by 0.04 s into the window; an exit in time keeps it open.
	 */
	w = win(false, 0.3);
	w.quiet_s = 0.07;
	CHECK(check_window_open(&w, 100.02, 0, 0, 0));
	CHECK(!check_window_open(&w, 100.04, 0, 0, 0));
	w = win(false, 0.3);
	w.quiet_s = 0.07;
	CHECK(check_window_open(&w, 100.02, 1, 0, 0));
	CHECK(check_window_open(&w, 100.2, 150, 120, 0));
	/* Quiet longer than CHECK_IDLE_S before it (a slow start-up): over at once. */
	w = win(false, 0.3);
	w.quiet_s = 0.15;
	CHECK(!check_window_open(&w, 100.0, 0, 0, 0));

	/* Plenty of exits: over as soon as CHECK_ENOUGH agreed, even early. */
	w = win(false, 0.3);
	CHECK(check_window_open(&w, 100.05, 4000, 4000, 0));
	CHECK(!check_window_open(&w, 100.06, 5001, 5000, 0));

	/* A normal host: the nominal window, with enough exits, then over. */
	w = win(false, 0.3);
	CHECK(check_window_open(&w, 100.2, 300, 300, 0));
	CHECK(!check_window_open(&w, 100.3, 400, 400, 0));

	/* A slow machine: fewer than CHECK_MIN_MATCHED agreed at 0.3 s, exits still coming:
	 * extended; over once CHECK_MIN_MATCHED agreed. */
	w = win(false, 0.3);
	CHECK(check_window_open(&w, 100.2, 10, 9, 0));
	CHECK(check_window_open(&w, 100.35, 40, 39, 0));
	CHECK(check_window_open(&w, 100.9, 90, 89, 0));
	CHECK(!check_window_open(&w, 101.0, 101, 100, 0));

	/* Exits stopped (the VM quit) with too few agreed: over CHECK_IDLE_S after the last. */
	w = win(false, 0.3);
	CHECK(check_window_open(&w, 100.25, 20, 20, 0));
	CHECK(check_window_open(&w, 100.34, 20, 20, 0));
	CHECK(!check_window_open(&w, 100.36, 20, 20, 0));

	/* Exits trickling in forever: start-up still ends, at CHECK_MAX_WINDOWS windows. */
	w = win(false, 0.3);
	for (int i = 1; i < 290; i++)
		CHECK(check_window_open(&w, 100 + i * 0.01, i, i / 10, 0));
	CHECK(!check_window_open(&w, 100 + CHECK_MAX_WINDOWS * 0.3, 300, 30, 0));

	/* A disagreement: the verdict is in, the window ends at once, before enough agreed. */
	w = win(false, 0.3);
	CHECK(check_window_open(&w, 100.05, 30, 30, 0));
	CHECK(!check_window_open(&w, 100.06, 40, 30, 1));

	/* --check-hooks: the whole window even with plenty of exits, and no verdict on fewer
	 * than CHECK_MIN_MATCHED while the cap allows. */
	w = win(true, 2.0);
	CHECK(check_window_open(&w, 101.5, 9000, 9000, 0));
	CHECK(check_window_open(&w, 101.5, 9000, 8000, 1000));	/* counts printed for all of it */
	CHECK(!check_window_open(&w, 102.0, 9000, 9000, 0));
	w = win(true, 2.0);
	CHECK(check_window_open(&w, 102.5, 50, 50, 0));
	CHECK(!check_window_open(&w, 102.6, 100, 100, 0));
	CHECK(!check_window_open(&w, 100 + CHECK_MAX_WINDOWS * 2.0, 60, 60, 0));
	w = win(true, 2.0);
	CHECK(check_window_open(&w, 101.0, 50, 0, 50));
	CHECK(!check_window_open(&w, 102.0, 60, 0, 60));	/* refused: no need for more */

	/* --check-hooks on a host with no exit at all: the 2 s window, not the cap. */
	w = win(true, 2.0);
	CHECK(check_window_open(&w, 101.99, 0, 0, 0));
	CHECK(!check_window_open(&w, 102.0, 0, 0, 0));
	/* Exits came early in the window, then stopped: over at 2 s, not extended. */
	w = win(true, 2.0);
	CHECK(check_window_open(&w, 100.5, 30, 30, 0));
	CHECK(!check_window_open(&w, 102.0, 30, 30, 0));
	/* Exits still coming at 2 s with too few agreed: extended, CHECK_IDLE_S after the last. */
	w = win(true, 2.0);
	CHECK(check_window_open(&w, 101.95, 40, 40, 0));
	CHECK(check_window_open(&w, 102.04, 41, 41, 0));
	CHECK(check_window_open(&w, 102.1, 45, 45, 0));
	CHECK(!check_window_open(&w, 102.21, 45, 45, 0));

	CHECK_DONE("check_window");
}
