// SPDX-License-Identifier: GPL-2.0
/* crash_guard: a child's result, its death (signal, exit, time limit) and its last mark. */
#include <signal.h>
#include <string.h>
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

/* As a library looping for ever on a damaged input would. */
static int hangs(struct crash_guard *g, void *arg)
{
	(void)arg;
	crash_guard_at(g, 30);
	for (;;)
		pause();
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
	char how[48];

	CHECK(!crash_guard_run(returns_7, NULL, &r));
	CHECK(r.done && !r.killed && r.status == 7 && r.marked && r.mark == 1);
	CHECK(!crash_guard_run(faults, NULL, &r));
	CHECK(!r.done && r.killed && r.status == SIGSEGV);
	CHECK(r.marked && r.mark == 20);
	CHECK(!crash_guard_run(exits_3, NULL, &r));
	CHECK(!r.done && !r.killed && r.status == 3 && !r.marked);
	/* A hang ends at the limit, marked, and says so; a fault is not a timeout. */
	crash_guard_set_limit(1);
	CHECK(!crash_guard_run(hangs, NULL, &r));
	CHECK(!r.done && r.killed && r.timed_out && r.marked && r.mark == 30);
	crash_guard_death(&r, how, sizeof(how));
	CHECK(!strcmp(how, "did not finish within 1 s"));
	CHECK(!crash_guard_run(faults, NULL, &r));
	CHECK(!r.timed_out);
	crash_guard_death(&r, how, sizeof(how));
	CHECK(!strcmp(how, "crashed: signal 11"));
	crash_guard_set_limit(CRASH_GUARD_SECONDS);
	/* The parent goes on: a second run after a death works as the first. */
	CHECK(!crash_guard_run(returns_7, NULL, &r));
	CHECK(r.done && r.status == 7);
	CHECK_DONE("crash_guard");
}
