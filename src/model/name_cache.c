// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "name_cache.h"
#include "array_grow.h"
#include "proc_names.h"
#include "text_escape.h"

static struct cached_name *find_at(struct name_cache *n, __u32 tgid, __u64 start)
{
	struct guest_key k = guest_key_of(tgid, start);
	__u32 *i = name_cache_index_find(&n->index, &k);

	return i ? &n->v[*i] : NULL;
}

static struct cached_name *latest(struct name_cache *n, __u32 tgid)
{
	__u32 *i = name_cache_latest_find(&n->latest, &tgid);

	return i ? &n->v[*i] : NULL;
}

/*
 * Links v[i] into its pid's processes, latest first (the latest map holds the first, each entry
 * the one that started before it): pids are reused forward in time, so a new process goes first,
 * in O(1); one found late (cells read out of order) walks down to its place. On equal starts
 * (only 0, unknown) the one added last goes first.
 */
static int link_process(struct name_cache *n, __u32 i)
{
	bool added;
	__u32 *l = name_cache_latest_get(&n->latest, &n->v[i].tgid, &added);

	if (!l)
		return -ENOMEM;
	n->gen++;
	if (added)
		*l = NAME_CACHE_NONE;
	while (*l != NAME_CACHE_NONE && n->v[*l].start > n->v[i].start)
		l = &n->v[*l].prev;
	n->v[i].prev = *l;
	*l = i;
	return 0;
}

static int index_entry(struct name_cache *n, __u32 i)
{
	struct guest_key k = guest_key_of(n->v[i].tgid, n->v[i].start);
	bool added;
	__u32 *slot = name_cache_index_get(&n->index, &k, &added);

	if (!slot)
		return -ENOMEM;
	*slot = i;
	return link_process(n, i);
}

static struct cached_name *add(struct name_cache *n, __u32 tgid, __u64 start)
{
	if (array_reserve(n->v, n->nr, n->cap, 16))
		return NULL;
	n->v[n->nr].tgid = tgid;
	n->v[n->nr].start = start;
	n->v[n->nr].name[0] = 0;
	if (index_entry(n, n->nr))
		return NULL;
	return &n->v[n->nr++];
}

/* The index and the pids' lists made again from v (the index has no removal). */
static int reindex(struct name_cache *n)
{
	name_cache_index_clear(&n->index);
	name_cache_latest_clear(&n->latest);
	for (__u32 i = 0; i < n->nr; i++)
		if (index_entry(n, i))
			return -ENOMEM;
	return 0;
}

int name_cache_born(struct name_cache *n, __u32 tgid, __u64 start)
{
	struct cached_name *l = latest(n, tgid);

	if (!start)		/* nothing to tell it from the pid's latest process */
		return l || add(n, tgid, 0) ? 0 : -ENOMEM;
	if (find_at(n, tgid, start))
		return 0;
	/*
	 * Named by pid before its start time was known (a vCPU's TSC offset is written before
	 * its first exit): that was this process. One entry, not (pid, 0) beside (pid, start):
	 * whatever keys guests by the cache's entries (--qmp's asks) would see two.
	 */
	if (l && !l->start) {
		l->start = start;
		return reindex(n);
	}
	return add(n, tgid, start) ? 0 : -ENOMEM;
}

/* Asks the kernel's copy of the command line, then /proc; else the pid as text. Only for the
 * pid's latest process: an older one's pid names another process now. */
static const char *resolve(struct name_cache *n, struct cached_name *e)
{
	if (e->name[0])
		return e->name;
	if (e == latest(n, e->tgid)) {
		if (n->args) {
			char args[PROC_ARGS_MAX];
			int len = n->args(n->args_ctx, e->tgid, args, sizeof(args));

			if (len > 0 && !guest_name_from_cmdline(args, len, e->name, sizeof(e->name)))
				return e->name;
		}
		if (n->resolve && guest_name_for_pid(e->tgid, e->name, sizeof(e->name)) == 0)
			return e->name;
	}
	/* Gone before we saw it: the pid is all we know; keep it so we do not ask again. */
	snprintf(e->name, sizeof(e->name), "%u", e->tgid);
	return e->name;
}

/* The pid as text, when even memory for remembering it failed. */
static const char *pid_text(__u32 tgid)
{
	static char buf[16];

	snprintf(buf, sizeof(buf), "%u", tgid);
	return buf;
}

const char *name_cache_get(struct name_cache *n, __u32 tgid)
{
	struct cached_name *e = latest(n, tgid);

	if (!e)
		e = add(n, tgid, 0);
	return e ? resolve(n, e) : pid_text(tgid);
}

/* The pid's process at ts: the latest that started at or before it; NULL if none did. */
static struct cached_name *at_time(struct name_cache *n, __u32 tgid, __u64 ts)
{
	struct name_memo *m = &n->memo[tgid & (NAME_CACHE_MEMO - 1)];
	__u64 until = ~0ull;	/* when the process after it started */
	__u32 *l;

	if (m->tgid == tgid && m->gen == n->gen && ts >= m->from && ts < m->until)
		return &n->v[m->idx];
	l = name_cache_latest_find(&n->latest, &tgid);
	for (__u32 i = l ? *l : NAME_CACHE_NONE; i != NAME_CACHE_NONE; i = n->v[i].prev) {
		if (n->v[i].start <= ts) {
			*m = (struct name_memo){ tgid, i, n->gen, n->v[i].start, until };
			return &n->v[i];
		}
		until = n->v[i].start;
	}
	return NULL;
}

__u64 name_cache_start_at_time(struct name_cache *n, __u32 tgid, __u64 ts)
{
	struct cached_name *e = at_time(n, tgid, ts);

	return e ? e->start : 0;
}

const char *name_cache_get_at_time(struct name_cache *n, __u32 tgid, __u64 ts)
{
	struct cached_name *e = at_time(n, tgid, ts);

	return e ? resolve(n, e) : name_cache_get(n, tgid);
}

const char *name_cache_get_at(struct name_cache *n, __u32 tgid, __u64 start)
{
	struct cached_name *e;

	if (!start)
		return name_cache_get(n, tgid);
	e = find_at(n, tgid, start);
	if (!e)
		e = add(n, tgid, start);
	return e ? resolve(n, e) : pid_text(tgid);
}

bool name_cache_shadowed(struct name_cache *n, __u32 tgid, __u64 start,
			 bool (*same)(const char *a, const char *b))
{
	struct cached_name *e = find_at(n, tgid, start), *l = latest(n, tgid);

	/* Every later one: with A, B, C on one pid, C's name may differ while B's matches A's. */
	for (; e && l && l != e && l->start > e->start;
	     l = l->prev == NAME_CACHE_NONE ? NULL : &n->v[l->prev]) {
		if (same(resolve(n, e), resolve(n, l)))
			return true;
	}
	return false;
}

static int set_name(struct cached_name *e, const char *name)
{
	if (!e)
		return -ENOMEM;
	utf8_copy(e->name, sizeof(e->name), name);
	return 0;
}

int name_cache_set(struct name_cache *n, __u32 tgid, const char *name)
{
	struct cached_name *e = latest(n, tgid);

	return set_name(e ? e : add(n, tgid, 0), name);
}

int name_cache_set_at(struct name_cache *n, __u32 tgid, __u64 start, const char *name)
{
	struct cached_name *e;

	if (!start)
		return name_cache_set(n, tgid, name);
	e = find_at(n, tgid, start);
	return set_name(e ? e : add(n, tgid, start), name);
}

int name_cache_prune(struct name_cache *n, bool (*keep)(void *ctx, __u32 tgid, __u64 start),
		     void *ctx)
{
	__u32 kept = 0;

	for (__u32 i = 0; i < n->nr; i++)
		if (keep(ctx, n->v[i].tgid, n->v[i].start))
			n->v[kept++] = n->v[i];
	if (kept == n->nr)
		return 0;
	n->nr = kept;
	return reindex(n);
}

void name_cache_clear(struct name_cache *n)
{
	n->gen++;
	n->nr = 0;
	name_cache_index_clear(&n->index);
	name_cache_latest_clear(&n->latest);
}

void name_cache_free(struct name_cache *n)
{
	free(n->v);
	name_cache_index_free(&n->index);
	name_cache_latest_free(&n->latest);
	memset(n, 0, sizeof(*n));
}
