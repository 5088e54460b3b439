// SPDX-License-Identifier: GPL-2.0
/* The run's guest names by VMM pid: learnt once, kept in first-seen order, found by pid. */
#include <stdio.h>
#include "check.h"
#include "name_cache.h"

static int asked;
static int generation;	/* the VMM now on pid 7000: "old" (0) or "new" (1) */

/* Even pids ran as "qemu -name guest=vm<pid>"; odd ones left nothing. */
static int fake_args(void *ctx, __u32 tgid, char *buf, size_t len)
{
	(void)ctx;
	asked++;
	if (tgid == 7000)
		return snprintf(buf, len, "qemu%c-name%cguest=%s", 0, 0,
				generation ? "new" : "old") + 1;
	if (tgid % 2)
		return -2;
	return snprintf(buf, len, "qemu%c-name%cguest=vm%u", 0, 0, tgid) + 1;
}

int main(void)
{
	struct name_cache n = { .args = fake_args };
	char want[32];

	/* Many guests: each asked once, then found by pid whatever the order. */
	for (__u32 pid = 1000; pid < 3000; pid++)
		name_cache_get(&n, pid);
	CHECK_EQ_U64(asked, 2000);
	for (__u32 pid = 2999; pid >= 1000; pid--) {
		snprintf(want, sizeof(want), pid % 2 ? "%u" : "vm%u", pid);
		CHECK_STR(name_cache_get(&n, pid), want);
	}
	CHECK_EQ_U64(asked, 2000);
	CHECK_EQ_U64(n.nr, 2000);
	/* First-seen order is kept (report lists a file's guests in it). */
	CHECK_EQ_U64(n.v[0].tgid, 1000);
	CHECK_EQ_U64(n.v[1999].tgid, 2999);

	/* A name learnt elsewhere replaces the one we had, and a new pid is added once. */
	CHECK(name_cache_set(&n, 1001, "web01") == 0);
	CHECK_STR(name_cache_get(&n, 1001), "web01");
	CHECK(name_cache_set(&n, 5, "db") == 0);
	CHECK(name_cache_set(&n, 5, "db2") == 0);
	CHECK_STR(name_cache_get(&n, 5), "db2");
	CHECK_EQ_U64(n.nr, 2001);
	CHECK_EQ_U64(asked, 2000);

	/* A pid reused by a new VMM (another start time): its name is asked again, once. */
	asked = 0;
	CHECK(name_cache_born(&n, 7000, 111) == 0);
	CHECK_STR(name_cache_get(&n, 7000), "old");
	CHECK(name_cache_born(&n, 7000, 111) == 0);	/* the same process: kept */
	generation = 1;
	CHECK_STR(name_cache_get(&n, 7000), "old");
	CHECK_EQ_U64(asked, 1);
	CHECK(name_cache_born(&n, 7000, 222) == 0);
	CHECK_STR(name_cache_get(&n, 7000), "new");
	CHECK_STR(name_cache_get(&n, 7000), "new");
	CHECK_EQ_U64(asked, 2);
	/* Unknown start times (0) tell nothing: the name stays. */
	CHECK(name_cache_born(&n, 7000, 0) == 0);
	CHECK_STR(name_cache_get(&n, 7000), "new");
	CHECK_EQ_U64(asked, 2);
	name_cache_free(&n);
	CHECK_EQ_U64(n.nr, 0);
	CHECK_DONE("name_cache");
}
