// SPDX-License-Identifier: GPL-2.0
/* guest_follow: which pids join and leave the kernel's filter as VMMs of a name come and go. */
#include <errno.h>
#include "check.h"
#include "guest_follow.h"

/* The fake /proc: the VMMs of name "web" and of name "db". */
static int web[8], nr_web, db[8], nr_db;
static int added[64], nr_added, removed[64], nr_removed, fail_apply;

static int fake_find(const char *name, int *pids, int max)
{
	const int *src = name[0] == 'w' ? web : db;
	int n = name[0] == 'w' ? nr_web : nr_db;

	for (int i = 0; i < n && i < max; i++)
		pids[i] = src[i];
	return n;
}

static int fake_apply(void *ctx, const int *add, int na, const int *del, int nd)
{
	(void)ctx;
	if (fail_apply)
		return -EPERM;
	for (int i = 0; i < na; i++)
		added[nr_added++] = add[i];
	for (int i = 0; i < nd; i++)
		removed[nr_removed++] = del[i];
	return 0;
}

int main(void)
{
	static struct guest_follow g;
	static const char *const names[] = { "web", "db" };
	/* At the start, -g web found 10, and 7, which is also a -p pid. */
	static const int fixed[] = { 7 }, found[] = { 10, 7 };
	double t = 100;

	web[0] = 10;
	web[1] = 7;
	nr_web = 2;
	guest_follow_init(&g, names, 2, fixed, 1, found, 2);
	g.find = fake_find;
	g.apply = fake_apply;

	/* Nothing new: no change to the filter. */
	guest_follow_poll(&g, t);
	CHECK_EQ_U64(nr_added + nr_removed, 0);

	/* web restarts (pid 10 gone, pid 11 new; 7 gone from web's), db starts as pid 7 too (a
	 * -p pid, in already) and pid 12: within one period nothing is looked at, then both
	 * names are. */
	web[0] = 11;
	nr_web = 1;
	db[0] = 7;
	db[1] = 12;
	nr_db = 2;
	guest_follow_poll(&g, t + GUEST_FOLLOW_S / 2);
	CHECK_EQ_U64(nr_added + nr_removed, 0);
	guest_follow_poll(&g, t + GUEST_FOLLOW_S);
	CHECK_EQ_U64(nr_added, 2);
	CHECK_EQ_U64(added[0], 11);
	CHECK_EQ_U64(added[1], 12);
	CHECK_EQ_U64(nr_removed, 1);
	CHECK_EQ_U64(removed[0], 10);

	/* Every VMM gone: the names' pids leave, the -p pid is never removed. */
	nr_web = nr_db = 0;
	guest_follow_poll(&g, t + 2 * GUEST_FOLLOW_S);
	CHECK_EQ_U64(nr_removed, 3);
	CHECK(removed[1] != 7 && removed[2] != 7);
	CHECK_EQ_U64(removed[1] + removed[2], 11 + 12);
	CHECK_EQ_U64(g.nr, 0);

	/* A failed update is tried again at the next look, not taken as done. */
	web[0] = 13;
	nr_web = 1;
	fail_apply = 1;
	guest_follow_poll(&g, t + 3 * GUEST_FOLLOW_S);
	CHECK_EQ_U64(g.nr, 0);
	fail_apply = 0;
	guest_follow_poll(&g, t + 4 * GUEST_FOLLOW_S);
	CHECK_EQ_U64(nr_added, 3);
	CHECK_EQ_U64(added[2], 13);

	CHECK_DONE("guest_follow");
}
