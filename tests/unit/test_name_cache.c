// SPDX-License-Identifier: GPL-2.0
/* The run's guest names by VMM pid: learnt once, kept in first-seen order, found by pid. */
#include <stdio.h>
#include <string.h>
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

/* Forgets pid 7000's processes that started before 222. */
static bool keep_not_old(void *ctx, __u32 tgid, __u64 start)
{
	(void)ctx;
	return tgid != 7000 || start >= 222;
}

/* Forgets pid 8000's second process. */
static bool keep_not_second(void *ctx, __u32 tgid, __u64 start)
{
	(void)ctx;
	return tgid != 8000 || start != 200;
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
	/* A long name (a recording keeps 255 bytes) is cut at a character: "a" and 40
	 * three-byte characters keep 20 of them (61 bytes), not two bytes of the 21st. */
	{
		char name[128] = "a";

		for (int i = 0; i < 40; i++)
			strcat(name, "\xe6\x97\xa5");
		CHECK(name_cache_set(&n, 6, name) == 0);
		name[61] = '\0';
		CHECK_STR(name_cache_get(&n, 6), name);
	}

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
	/* Each process keeps its own name: the old VMM's rows are still "old". */
	CHECK_STR(name_cache_get_at(&n, 7000, 111), "old");
	CHECK_STR(name_cache_get_at(&n, 7000, 222), "new");
	CHECK_STR(name_cache_get_at(&n, 7000, 0), "new");
	/* An old process found late (cells read out of order) does not become the latest. */
	CHECK(name_cache_born(&n, 7000, 50) == 0);
	CHECK_STR(name_cache_get(&n, 7000), "new");
	/* ...and is never asked about: the pid names another process now. */
	CHECK_STR(name_cache_get_at(&n, 7000, 50), "7000");
	CHECK_EQ_U64(asked, 2);
	/* A copy (snapshot) by process. */
	CHECK(name_cache_set_at(&n, 7001, 5, "copy5") == 0);
	CHECK(name_cache_set_at(&n, 7001, 9, "copy9") == 0);
	CHECK_STR(name_cache_get_at(&n, 7001, 5), "copy5");
	CHECK_STR(name_cache_get(&n, 7001), "copy9");
	/* Named by pid before its start time was known: born adopts that name. */
	CHECK(name_cache_set(&n, 7002, "early") == 0);
	{
		__u32 before = n.nr, of_7002 = 0;

		CHECK(name_cache_born(&n, 7002, 77) == 0);
		CHECK_STR(name_cache_get_at(&n, 7002, 77), "early");
		/* ...and is that process: one entry, (7002, 77), not a (7002, 0) beside it, which
		 * --qmp asked as a guest of its own (two notes for one QEMU). */
		for (__u32 i = 0; i < n.nr; i++)
			of_7002 += n.v[i].tgid == 7002;
		CHECK_EQ_U64(n.nr, before);
		CHECK_EQ_U64(of_7002, 1);
		CHECK_EQ_U64(name_cache_start_at_time(&n, 7002, 78), 77);
		CHECK(name_cache_index_find(&n.index, &(struct guest_key){ 7002, 0, 0 }) == NULL);
		CHECK_STR(name_cache_get(&n, 7002), "early");
		CHECK_EQ_U64(n.nr, before);
	}

	/* Pruning the old processes of 7000 keeps the new one as the pid's latest. */
	{
		__u32 before = n.nr;

		CHECK(name_cache_prune(&n, keep_not_old, NULL) == 0);
		CHECK_EQ_U64(n.nr, before - 2);
		CHECK_STR(name_cache_get(&n, 7000), "new");
		CHECK_STR(name_cache_get_at(&n, 7001, 9), "copy9");
		CHECK_STR(name_cache_get(&n, 1001), "web01");
		CHECK_EQ_U64(asked, 2);
	}
	/*
	 * The process of a pid at a time: the latest that started by then. Pid 8000 had three
	 * VMMs (starts 100, 200, 300), learnt out of order; an event before the first is none's.
	 */
	CHECK(name_cache_set_at(&n, 8000, 200, "second") == 0);
	CHECK(name_cache_set_at(&n, 8000, 100, "first") == 0);
	CHECK(name_cache_set_at(&n, 8000, 300, "third") == 0);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, 100), 100);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, 199), 100);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, 200), 200);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, 299), 200);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, ~0ull), 300);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, 99), 0);
	CHECK_STR(name_cache_get_at_time(&n, 8000, 150), "first");
	CHECK_STR(name_cache_get_at_time(&n, 8000, 250), "second");
	CHECK_STR(name_cache_get_at_time(&n, 8000, 350), "third");
	CHECK_STR(name_cache_get_at_time(&n, 8000, 50), "third");	/* unknown: the latest */
	CHECK_STR(name_cache_get(&n, 8000), "third");
	/* A pid known by name only (start 0, a file before 1.3) is its process at any time. */
	CHECK(name_cache_set(&n, 8001, "only") == 0);
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8001, 5), 0);
	CHECK_STR(name_cache_get_at_time(&n, 8001, 5), "only");
	/* ...and a VMM started later on it takes over from its start. */
	CHECK(name_cache_set_at(&n, 8001, 1000, "later") == 0);
	CHECK_STR(name_cache_get_at_time(&n, 8001, 999), "only");
	CHECK_STR(name_cache_get_at_time(&n, 8001, 1000), "later");
	/* An unknown pid: no start; named as by pid alone (here the kernel's command line). */
	CHECK_EQ_U64(name_cache_start_at_time(&n, 8002, 5), 0);
	CHECK_STR(name_cache_get_at_time(&n, 8002, 5), "vm8002");
	/* Pruning keeps the order of what is left. */
	{
		CHECK(name_cache_prune(&n, keep_not_second, NULL) == 0);
		CHECK_EQ_U64(name_cache_start_at_time(&n, 8000, 250), 100);
		CHECK_STR(name_cache_get_at_time(&n, 8000, 350), "third");
		CHECK_STR(name_cache_get_at_time(&n, 8001, 999), "only");
	}

	name_cache_clear(&n);
	CHECK_EQ_U64(n.nr, 0);
	CHECK(name_cache_set(&n, 1, "one") == 0);
	CHECK_STR(name_cache_get(&n, 1), "one");
	name_cache_free(&n);
	CHECK_EQ_U64(n.nr, 0);
	CHECK_DONE("name_cache");
}
