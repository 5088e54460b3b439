// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "guest_follow.h"
#include "proc_names.h"

static bool has(const int *set, int n, int pid)
{
	for (int i = 0; i < n; i++)
		if (set[i] == pid)
			return true;
	return false;
}

void guest_follow_init(struct guest_follow *g, const char *const *names, int nr_names,
		       const int *fixed, int nr_fixed, const int *pids, int nr)
{
	memset(g, 0, sizeof(*g));
	g->names = names;
	g->nr_names = nr_names;
	g->fixed = fixed;
	g->nr_fixed = nr_fixed;
	/* A -p pid that a name matches too is the -p's: never taken out of the filter. */
	for (int i = 0; i < nr && g->nr < GUEST_FOLLOW_MAX; i++)
		if (!has(fixed, nr_fixed, pids[i]) && !has(g->pids, g->nr, pids[i]))
			g->pids[g->nr++] = pids[i];
	g->name_of = guest_cmdline_name;
}

static bool named(struct guest_follow *g, int pid)
{
	char name[256];

	if (g->name_of(pid, name, sizeof(name)))
		return false;
	for (int i = 0; i < g->nr_names; i++)
		if (!strcmp(name, g->names[i]))
			return true;
	return false;
}

/*
 * The names' VMMs now: those followed that still run under a name, and those the kernel saw
 * since, less the -p pids (in the filter anyway).
 */
static int look(struct guest_follow *g)
{
	int n = 0, nc = g->nr;

	memcpy(g->cand, g->pids, g->nr * sizeof(*g->pids));
	nc += g->seen(g->ctx, g->cand + nc, GUEST_FOLLOW_SEEN);
	for (int i = 0; i < nc; i++) {
		int pid = g->cand[i];

		if (has(g->fixed, g->nr_fixed, pid) || has(g->want, n, pid) || !named(g, pid))
			continue;
		if (n == GUEST_FOLLOW_MAX) {
			if (!g->said_full)
				fprintf(stderr, "vmexit: warning: more than %d VMMs match the -g "
					"names: the others are not traced\n", GUEST_FOLLOW_MAX);
			g->said_full = true;
			break;
		}
		g->want[n++] = pid;
	}
	return n;
}

void guest_follow_poll(struct guest_follow *g, double now)
{
	int n, na = 0, nd = 0, err;

	if (!g->nr_names || now < g->next)
		return;
	g->next = now + GUEST_FOLLOW_S;
	n = look(g);
	for (int i = 0; i < n; i++)
		if (!has(g->pids, g->nr, g->want[i]))
			g->add[na++] = g->want[i];
	for (int i = 0; i < g->nr; i++)
		if (!has(g->want, n, g->pids[i]))
			g->del[nd++] = g->pids[i];
	if (!na && !nd)
		return;
	err = g->apply(g->ctx, g->add, na, g->del, nd);
	if (err) {
		/* The next look tries again: nothing is taken as done. */
		if (!g->said_err)
			fprintf(stderr, "vmexit: warning: cannot update the pid filter: %s\n",
				strerror(-err));
		g->said_err = true;
		return;
	}
	for (int i = 0; g->verbose && i < na; i++)
		fprintf(stderr, "vmexit: pid %d (a -g guest) traced from now on\n", g->add[i]);
	for (int i = 0; g->verbose && i < nd; i++)
		fprintf(stderr, "vmexit: pid %d (a -g guest) has exited\n", g->del[i]);
	memcpy(g->pids, g->want, n * sizeof(*g->want));
	g->nr = n;
}
