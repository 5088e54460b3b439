// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "serve_guests.h"

/* Boot time in Unix ms (/proc/stat btime), 0 if unknown. */
static __u64 boot_ms(void)
{
	static __u64 cached;
	char line[256];
	FILE *f;

	if (cached)
		return cached;
	f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long b;

		if (sscanf(line, "btime %llu", &b) == 1) {
			cached = b * 1000;
			break;
		}
	}
	fclose(f);
	return cached;
}

/* The start time of process tgid (field 22 of /proc/PID/stat); false if it is gone. */
static bool proc_alive(void *ctx, __u32 tgid, __u64 *ticks, __u64 *ms)
{
	char path[64], buf[1024], *p;
	unsigned long long start;
	long hz = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%u/stat", tgid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* The name (field 2) may hold spaces and parentheses: fields resume after the last ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &start) != 1)
		return false;
	/* A zombie has exited: its counts are final. */
	if (p[1] == ' ' && p[2] == 'Z')
		return false;
	*ticks = start;
	*ms = boot_ms() && hz > 0 ? boot_ms() + start * 1000 / hz : 0;
	return true;
}

static bool alive(struct serve_guests *g, __u32 tgid, __u64 *ticks, __u64 *ms)
{
	return (g->alive ? g->alive : proc_alive)(g->ctx, tgid, ticks, ms);
}

const struct serve_guest *serve_guests_find(const struct serve_guests *g, __u32 tgid)
{
	return serve_guest_map_find(&g->map, &tgid);
}

static int add(struct serve_guests *g, __u32 tgid, __u64 now_ms)
{
	struct serve_guest *x;
	__u64 ticks = 0, ms = 0;
	bool added;

	x = serve_guest_map_get(&g->map, &tgid, &added);
	if (!x)
		return -ENOMEM;
	if (!added)
		return 0;
	x->tgid = tgid;
	if (alive(g, tgid, &ticks, &ms)) {
		x->start_ticks = ticks;
		/* Counting began when both vmexit and the VMM ran. */
		x->created_ms = ms > g->start_ms ? ms : g->start_ms;
	} else {
		/* Gone before we looked: its counts are final, keep them from now on. */
		x->created_ms = g->start_ms;
		x->ended_ms = now_ms;
	}
	return 0;
}

int serve_guests_learn(struct serve_guests *g, const struct row_table *rows, __u64 now_ms)
{
	__u32 last = 0;

	for (__u32 i = 0; i < rows->nr; i++) {
		__u32 tgid = rows->rows[i].key.tgid;

		/* Rows come grouped by guest mostly: skip the repeats cheaply. */
		if (tgid == last && i)
			continue;
		last = tgid;
		if (add(g, tgid, now_ms))
			return -ENOMEM;
	}
	return 0;
}

void serve_guests_check(struct serve_guests *g, __u64 now_ms)
{
	struct serve_guest_map_slot *slot;

	hashmap_for_each(slot, &g->map) {
		struct serve_guest *x = &slot->val;
		__u64 ticks, ms;

		if (x->ended_ms)
			continue;
		if (!alive(g, x->tgid, &ticks, &ms) || ticks != x->start_ticks)
			x->ended_ms = now_ms;
	}
}

bool serve_guest_exported(const struct serve_guests *g, const struct serve_guest *x,
			  __u64 now_ms)
{
	return !x->ended_ms || now_ms - x->ended_ms <= g->keep_ms;
}

__u32 serve_guests_running(const struct serve_guests *g)
{
	const struct serve_guest_map_slot *slot;
	__u32 n = 0;

	hashmap_for_each(slot, &g->map)
		n += !slot->val.ended_ms;
	return n;
}

void serve_guests_free(struct serve_guests *g)
{
	serve_guest_map_free(&g->map);
}
