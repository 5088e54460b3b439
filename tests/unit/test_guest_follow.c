// SPDX-License-Identifier: GPL-2.0
/* guest_follow: which pids join and leave the kernel's filter as VMMs of a name come and go. */
#include <errno.h>
#include "check.h"
#include "guest_follow.h"

/* The fake host: each pid's command-line guest name (NULL: gone), and what the kernel saw
 * making exits while not traced. */
#define NR_PIDS	32
static const char *name_at[NR_PIDS];
static int seen[NR_PIDS], nr_seen;
static int added[64], nr_added, removed[64], nr_removed, fail_apply;

static int fake_seen(void *ctx, int *pids, int max)
{
	(void)ctx;
	for (int i = 0; i < nr_seen && i < max; i++)
		pids[i] = seen[i];
	return nr_seen < max ? nr_seen : max;
}

static int fake_name_of(int pid, char *out, size_t len)
{
	if (pid < 0 || pid >= NR_PIDS || !name_at[pid])
		return -ESRCH;
	snprintf(out, len, "%s", name_at[pid]);
	return 0;
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

	name_at[10] = name_at[7] = "web";
	name_at[20] = "other";
	seen[nr_seen++] = 20;			/* another guest: the kernel saw it, not ours */
	guest_follow_init(&g, names, 2, fixed, 1, found, 2);
	g.seen = fake_seen;
	g.name_of = fake_name_of;
	g.apply = fake_apply;

	/* Nothing new: no change to the filter (7 stays the -p's, 20 is not named web or db). */
	guest_follow_poll(&g, t);
	CHECK_EQ_U64(nr_added + nr_removed, 0);
	CHECK_EQ_U64(g.nr, 1);

	/* web restarts (10 gone, 11 new), db starts as 12, and a VMM named db on the -p pid 7:
	 * within one period nothing is looked at, then all are. */
	name_at[10] = NULL;
	name_at[11] = "web";
	name_at[12] = "db";
	name_at[7] = "db";
	seen[nr_seen++] = 11;
	seen[nr_seen++] = 12;
	guest_follow_poll(&g, t + GUEST_FOLLOW_S / 2);
	CHECK_EQ_U64(nr_added + nr_removed, 0);
	guest_follow_poll(&g, t + GUEST_FOLLOW_S);
	CHECK_EQ_U64(nr_added, 2);
	CHECK_EQ_U64(added[0], 11);
	CHECK_EQ_U64(added[1], 12);
	CHECK_EQ_U64(nr_removed, 1);
	CHECK_EQ_U64(removed[0], 10);

	/* A followed pid now running another guest (a reused pid) leaves; the -p pid never does. */
	name_at[11] = "other";
	name_at[12] = NULL;
	name_at[7] = NULL;
	guest_follow_poll(&g, t + 2 * GUEST_FOLLOW_S);
	CHECK_EQ_U64(nr_removed, 3);
	CHECK(removed[1] != 7 && removed[2] != 7);
	CHECK_EQ_U64(removed[1] + removed[2], 11 + 12);
	CHECK_EQ_U64(g.nr, 0);

	/* A failed update is tried again at the next look, not taken as done. */
	name_at[13] = "web";
	seen[nr_seen++] = 13;
	fail_apply = 1;
	guest_follow_poll(&g, t + 3 * GUEST_FOLLOW_S);
	CHECK_EQ_U64(g.nr, 0);
	fail_apply = 0;
	guest_follow_poll(&g, t + 4 * GUEST_FOLLOW_S);
	CHECK_EQ_U64(nr_added, 3);
	CHECK_EQ_U64(added[2], 13);
	CHECK_DONE("guest_follow");
}
