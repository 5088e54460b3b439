// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "process_stats.h"
#include "serve_guests.h"

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Is the process tgid that started at start still running (not a zombie, not another process
 * on the pid)? /proc/PID/stat gives its start in clock ticks since boot (CLOCK_BOOTTIME), the
 * kernel's cells in CLOCK_MONOTONIC ns: they differ by the time suspended before it started,
 * at most the whole of it now. A later process on a reused pid started after this one, so
 * after start plus that, plus two ticks of rounding.
 */
static bool proc_alive(void *ctx, __u32 tgid, __u64 start, __u64 *ms)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	__u64 tick_ns, suspended;
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
	if (!p || hz <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
		   "%*d %*d %*d %*d %llu", &ticks) != 1)
		return false;
	/* A zombie has exited: its counts are final. */
	if (p[1] == ' ' && p[2] == 'Z')
		return false;
	tick_ns = 1000000000 / hz;
	suspended = clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC);
	if (start && ticks * tick_ns > start + suspended + 2 * tick_ns)
		return false;
	*ms = boot_unix_ms() ? boot_unix_ms() + ticks * 1000 / hz : 0;
	return true;
}

static bool alive(const struct serve_guests *g, __u32 tgid, __u64 start, __u64 *ms)
{
	return (g->alive ? g->alive : proc_alive)(g->ctx, tgid, start, ms);
}

const struct serve_guest *serve_guests_find(const struct serve_guests *g, __u32 tgid,
					    __u64 start)
{
	struct guest_key k = guest_key_of(tgid, start);

	return serve_guest_map_find(&g->map, &k);
}

int serve_guests_learn_one(struct serve_guests *g, __u32 tgid, __u64 start, __u64 now_ms)
{
	struct guest_key k = guest_key_of(tgid, start);
	struct serve_guest *x;
	__u64 ms = 0;
	bool added;

	x = serve_guest_map_get(&g->map, &k, &added);
	if (!x)
		return -ENOMEM;
	if (!added)
		return 0;
	x->tgid = tgid;
	x->start = start;
	if (alive(g, tgid, start, &ms)) {
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
	for (__u32 i = 0; i < rows->nr; i++) {
		const struct row_key *k = &rows->rows[i].key;

		/* Rows come grouped by guest mostly: skip the repeats cheaply. */
		if (i && k->tgid == rows->rows[i - 1].key.tgid &&
		    k->start == rows->rows[i - 1].key.start)
			continue;
		if (serve_guests_learn_one(g, k->tgid, k->start, now_ms))
			return -ENOMEM;
	}
	return 0;
}

void serve_guests_check(struct serve_guests *g, __u64 now_ms)
{
	struct serve_guest_map_slot *slot;

	hashmap_for_each(slot, &g->map) {
		struct serve_guest *x = &slot->val;
		__u64 ms;

		if (!x->ended_ms && !alive(g, x->tgid, x->start, &ms))
			x->ended_ms = now_ms;
	}
}

bool serve_guest_exported(const struct serve_guests *g, const struct serve_guest *x,
			  __u64 now_ms)
{
	return !x->ended_ms || now_ms - x->ended_ms <= g->keep_ms;
}

bool serve_guests_expired(const struct serve_guests *g, __u32 tgid, __u64 start, __u64 now_ms)
{
	const struct serve_guest *x = serve_guests_find(g, tgid, start);

	return x && !serve_guest_exported(g, x, now_ms);
}

int serve_guests_prune(struct serve_guests *g, __u64 now_ms)
{
	struct serve_guest_map kept = {};
	struct serve_guest_map_slot *slot;
	bool gone = false;

	hashmap_for_each(slot, &g->map)
		gone |= !serve_guest_exported(g, &slot->val, now_ms);
	if (!gone)
		return 0;
	/* The map has no removal: the guests still exported move to a new one. */
	hashmap_for_each(slot, &g->map) {
		struct serve_guest *x;
		bool added;

		if (!serve_guest_exported(g, &slot->val, now_ms))
			continue;
		x = serve_guest_map_get(&kept, &slot->key, &added);
		if (!x) {
			serve_guest_map_free(&kept);
			return -ENOMEM;
		}
		*x = slot->val;
	}
	serve_guest_map_free(&g->map);
	g->map = kept;
	return 0;
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
