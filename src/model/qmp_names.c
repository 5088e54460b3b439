// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "key_names.h"
#include "qmp_names.h"
#include "text_escape.h"

void qmp_names_init(struct qmp_names *q, const char *spec)
{
	memset(q, 0, sizeof(*q));
	q->path = strcmp(spec, "auto") ? spec : NULL;
	q->timeout_ms = QMP_TIMEOUT_MS;
	pthread_mutex_init(&q->lock, NULL);
}

void qmp_names_free(struct qmp_names *q)
{
	for (__u32 i = 0; i < q->nr; i++)
		mtree_map_free(&q->g[i].map);
	free(q->g);
	qmp_guest_index_free(&q->index);
	pthread_mutex_destroy(&q->lock);
	memset(q, 0, sizeof(*q));
}

/* The entry of guest (tgid, start), added when new; NULL on ENOMEM. Under q->lock. */
struct qmp_guest *qmp_guest_get(struct qmp_names *q, __u32 tgid, __u64 start)
{
	struct guest_key k = guest_key_of(tgid, start);
	struct qmp_guest *g;
	bool added;
	__u32 *idx = qmp_guest_index_find(&q->index, &k);

	if (idx)
		return &q->g[*idx];
	/* Room first: the index never points past the array. */
	if (array_reserve(q->g, q->nr, q->cap, 16))
		return NULL;
	idx = qmp_guest_index_get(&q->index, &k, &added);
	if (!idx)
		return NULL;
	*idx = q->nr;
	g = &q->g[q->nr++];
	memset(g, 0, sizeof(*g));
	g->tgid = tgid;
	g->start = start;
	g->nr_paths = -1;
	return g;
}

int qmp_guest_started(struct qmp_names *q, __u32 tgid, __u64 start)
{
	struct guest_key k0 = guest_key_of(tgid, 0), k = guest_key_of(tgid, start);
	__u32 *i0 = qmp_guest_index_find(&q->index, &k0);

	if (!start || !i0 || qmp_guest_index_find(&q->index, &k))
		return 0;
	q->g[*i0].start = start;
	/* The index again (it has no removal): (tgid, 0) is no key any more. */
	qmp_guest_index_clear(&q->index);
	for (__u32 i = 0; i < q->nr; i++) {
		struct guest_key gk = guest_key_of(q->g[i].tgid, q->g[i].start);
		bool added;
		__u32 *idx = qmp_guest_index_get(&q->index, &gk, &added);

		if (!idx)
			return -ENOMEM;
		*idx = i;
	}
	return 0;
}

int qmp_names_add_region(struct qmp_names *q, __u32 tgid, __u64 start, bool io, __u64 lo,
			 __u64 hi, const char *name)
{
	struct qmp_guest *g;
	int err = -ENOMEM;

	pthread_mutex_lock(&q->lock);
	g = qmp_guest_get(q, tgid, start);
	if (g) {
		/* Known, never asked: nothing on the command line, no socket to find. */
		g->nr_paths = 0;
		g->asked = g->answered = true;
		err = mtree_map_add(&g->map, io, lo, hi, name);
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

void qmp_names_watch(struct qmp_names *q)
{
	pthread_mutex_lock(&q->lock);
	for (__u32 i = 0; i < q->nr; i++)
		if (q->g[i].answered)
			q->g[i].missed = true;
	pthread_mutex_unlock(&q->lock);
}

int qmp_names_each_region(struct qmp_names *q,
			  int (*fn)(void *ctx, __u32 tgid, __u64 start, bool io, __u64 lo, __u64 hi,
				    const char *name), void *ctx)
{
	int err = 0;

	pthread_mutex_lock(&q->lock);
	for (__u32 i = 0; !err && i < q->nr; i++) {
		const struct qmp_guest *g = &q->g[i];

		for (int s = 0; g->answered && s < 2; s++) {
			const struct mtree_space *sp = s ? &g->map.mem : &g->map.io;

			for (__u32 j = 0; !err && j < sp->nr; j++)
				err = fn(ctx, g->tgid, g->start, !s, sp->r[j].lo, sp->r[j].hi,
					 g->map.names.buf + sp->r[j].name);
		}
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

/* Whether g is guest (tgid, start), 0 in either standing for any. */
static bool guest_matches(const struct qmp_guest *g, __u32 tgid, __u64 start)
{
	return (!tgid || g->tgid == tgid) && (!start || g->start == start);
}

/* A region found: its span and name (in the answering guest's map, under q->lock). */
struct region_hit {
	const struct mtree_range *r;
	const struct mtree_map *map;
};

/*
 * Any guest's region for a key, with tgid 0 (top's views summed over guests) or start 0 (one
 * pid, any process on it) as wildcards: the one every answered guest that maps the key agrees
 * on (same name and span); guests that disagree leave it unknown (-1). 1: found; 0: guests
 * answered and none maps it; -1: no map (or no agreement). Under q->lock.
 */
static int any_guest_region(struct qmp_names *q, __u32 tgid, __u64 start, bool io, __u64 key,
			    struct region_hit *hit)
{
	bool any = false;

	*hit = (struct region_hit){ NULL, NULL };
	for (__u32 i = 0; i < q->nr; i++) {
		struct qmp_guest *g = &q->g[i];
		const struct mtree_range *r;

		if (!guest_matches(g, tgid, start) || !g->answered)
			continue;
		any = true;
		r = mtree_map_find(&g->map, io, key);
		if (r && hit->r && (r->lo != hit->r->lo || r->hi != hit->r->hi ||
				    strcmp(g->map.names.buf + r->name,
					   hit->map->names.buf + hit->r->name)))
			return -1;
		if (r && !hit->r)
			*hit = (struct region_hit){ r, &g->map };
	}
	/* None maps it: a device mapped since, in some guest (which one is not known here). */
	for (__u32 i = 0; any && !hit->r && i < q->nr; i++)
		if (guest_matches(&q->g[i], tgid, start))
			q->g[i].missed = true;
	return hit->r ? 1 : any ? 0 : -1;
}

/* The key's region in its guest's map (as qmp_key_region), under q->lock. */
static int key_region(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
		      struct region_hit *hit)
{
	bool io = k->kind == KEY_PORT;
	struct guest_key gk = guest_key_of(tgid, start);
	struct qmp_guest *g;
	__u32 *idx;

	*hit = (struct region_hit){ NULL, NULL };
	if (!io && k->kind != KEY_MMIO && k->kind != KEY_GPA)
		return -1;
	if (!tgid || !start)
		return any_guest_region(q, tgid, start, io, k->key, hit);
	idx = qmp_guest_index_find(&q->index, &gk);
	if (!idx || !q->g[*idx].answered)
		return -1;
	g = &q->g[*idx];
	hit->r = mtree_map_find(&g->map, io, k->key);
	hit->map = &g->map;
	if (!hit->r)
		g->missed = true;
	return hit->r ? 1 : 0;
}

int qmp_key_region(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
		   __u64 *lo, __u64 *hi, char *buf, size_t len)
{
	struct region_hit hit;
	int rc;

	if (!q)
		return -1;
	pthread_mutex_lock(&q->lock);
	rc = key_region(q, tgid, start, k, &hit);
	if (rc > 0) {
		*lo = hit.r->lo;
		*hi = hit.r->hi;
		snprintf(buf, len, "%s", hit.map->names.buf + hit.r->name);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}

const char *qmp_key_name(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
			 char *buf, size_t len)
{
	__u64 lo, hi;
	int rc = qmp_key_region(q, tgid, start, k, &lo, &hi, buf, len);

	/* With its map, a key QEMU maps to nothing is no device, whatever the PC's would be. */
	if (!rc)
		snprintf(buf, len, "%s", QMP_UNMAPPED);
	else if (rc < 0)
		snprintf(buf, len, "%s", key_builtin_name(k));
	return buf;
}
