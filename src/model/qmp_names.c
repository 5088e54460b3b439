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

/* Whether g is guest (tgid, start), 0 in either standing for any. */
static bool guest_matches(const struct qmp_guest *g, __u32 tgid, __u64 start)
{
	return (!tgid || g->tgid == tgid) && (!start || g->start == start);
}

/*
 * Any guest's name for a key, with tgid 0 (top's views summed over guests) or start 0 (one pid,
 * any process on it) as wildcards: the name every answered guest that maps the key agrees on;
 * guests that disagree leave it to the built-in name. Under q->lock.
 */
static const char *any_guest_name(struct qmp_names *q, __u32 tgid, __u64 start, bool io,
				  __u64 key)
{
	const char *name = NULL;
	bool any = false;

	for (__u32 i = 0; i < q->nr; i++) {
		struct qmp_guest *g = &q->g[i];
		const char *n;

		if (!guest_matches(g, tgid, start) || !g->answered)
			continue;
		any = true;
		n = mtree_map_name(&g->map, io, key);
		if (n && name && strcmp(n, name))
			return NULL;
		if (n)
			name = n;
	}
	/* None maps it: a device mapped since, in some guest (which one is not known here). */
	for (__u32 i = 0; any && !name && i < q->nr; i++)
		if (guest_matches(&q->g[i], tgid, start))
			q->g[i].missed = true;
	return name;
}

const char *qmp_key_name(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
			 char *buf, size_t len)
{
	bool io = k->kind == KEY_PORT;
	const char *name = NULL;

	if (q && (io || k->kind == KEY_MMIO || k->kind == KEY_GPA)) {
		struct guest_key gk = guest_key_of(tgid, start);
		__u32 *idx;

		pthread_mutex_lock(&q->lock);
		idx = tgid && start ? qmp_guest_index_find(&q->index, &gk) : NULL;
		if (idx && q->g[*idx].answered) {
			name = mtree_map_name(&q->g[*idx].map, io, k->key);
			if (!name)
				q->g[*idx].missed = true;
		} else if (!tgid || !start) {
			name = any_guest_name(q, tgid, start, io, k->key);
		}
		if (name)
			snprintf(buf, len, "%s", name);
		pthread_mutex_unlock(&q->lock);
	}
	if (!name)
		snprintf(buf, len, "%s", key_builtin_name(k));
	return buf;
}
