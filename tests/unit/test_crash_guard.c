// SPDX-License-Identifier: GPL-2.0
/* crash_guard: a child's result, its death (by signal, by exit) and its last mark. */
#include <signal.h>
#include <unistd.h>
#include "check.h"
#include "crash_guard.h"

static int returns_7(struct crash_guard *g, void *arg)
{
	(void)arg;
	crash_guard_at(g, 1);
	return 7;
}

/* As libtraceevent 1.7 does on a damaged format: a fault, after two marks. */
static int faults(struct crash_guard *g, void *arg)
{
	(void)arg;
	crash_guard_at(g, 10);
	crash_guard_at(g, 20);
	raise(SIGSEGV);
	return 0;
}

static int exits_3(struct crash_guard *g, void *arg)
{
	(void)g;
	(void)arg;
	_exit(3);
}

int main(void)
{
	struct crash_guard_result r;

	CHECK(!crash_guard_run(returns_7, NULL, &r));
	CHECK(r.done && !r.killed && r.status == 7 && r.marked && r.mark == 1);
	CHECK(!crash_guard_run(faults, NULL, &r));
	CHECK(!r.done && r.killed && r.status == SIGSEGV);
	CHECK(r.marked && r.mark == 20);
	CHECK(!crash_guard_run(exits_3, NULL, &r));
	CHECK(!r.done && !r.killed && r.status == 3 && !r.marked);
	/* The parent goes on: a second run after a death works as the first. */
	CHECK(!crash_guard_run(returns_7, NULL, &r));
	CHECK(r.done && r.status == 7);
	CHECK_DONE("crash_guard");
}
