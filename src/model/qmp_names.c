// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "key_names.h"
#include "proc_names.h"
#include "qmp_client.h"
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

/* FNV-1a: an answer like the last one tells nothing new. */
static __u64 text_hash(const char *s)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* The sockets to ask: --qmp PATH, or those on the guest's command line. */
static void find_paths(struct qmp_names *q, struct qmp_guest *g)
{
	size_t len;
	char *args;

	if (q->path) {
		snprintf(g->paths[0], QMP_PATH_MAX, "%s", q->path);
		g->nr_paths = 1;
		return;
	}
	args = proc_cmdline((int)g->tgid, &len);
	g->nr_paths = args ? qmp_sockets_from_cmdline(args, len, g->paths, QMP_PATHS) : 0;
	free(args);
}

static void note(struct qmp_guest *g, struct name_cache *names, const char *path, const char *why)
{
	char nb[TEXT_NAME_MAX];

	if (g->noted)
		return;
	g->noted = true;
	fprintf(stderr, "vmexit: note: --qmp: guest %s (pid %u): ",
		text_esc(nb, name_cache_get_at(names, g->tgid, g->start)), g->tgid);
	if (path)
		fprintf(stderr, "QMP at %s: %s", text_esc(nb, path), why);
	else
		fputs(why, stderr);
	fputs("; its ports and addresses keep built-in names\n", stderr);
}

static double longer(double backoff)
{
	return backoff * 2 < QMP_REASK_MAX_S ? backoff * 2 : QMP_REASK_MAX_S;
}

/* The new map in g, or why not in err; each socket in turn until one answers. */
static void ask(struct qmp_names *q, struct qmp_guest *g, struct name_cache *names, double now)
{
	struct mtree_map m = {}, old;
	char err[256] = "", *text = NULL;
	const char *path = NULL;
	int rc = -ENOENT, pid = 0;
	bool changed;
	__u64 h = 0;

	if (g->nr_paths < 0)
		find_paths(q, g);
	g->asked = true;
	if (!g->nr_paths) {
		note(g, names, NULL, "no QMP socket on its command line "
		     "(-qmp unix:PATH,server=on,wait=off)");
		return;
	}
	for (int i = 0; i < g->nr_paths && rc; i++) {
		path = g->paths[i];
		rc = qmp_hmp_ask(path, "info mtree -f", q->timeout_ms, &text, &pid, err,
				 sizeof(err));
		if (rc)
			continue;
		if ((__u32)pid != g->tgid) {
			/* --qmp PATH names one VMM's socket: the other guests keep theirs. */
			if (q->path) {
				g->not_ours = true;
				free(text);
				return;
			}
			snprintf(err, sizeof(err), "is served by pid %d, not by the guest", pid);
			rc = -ESRCH;
		} else {
			rc = mtree_map_parse(&m, text);
			if (rc == -EINVAL)
				snprintf(err, sizeof(err), "answered info mtree -f with no flat view "
					 "of the I/O or memory space");
			else if (rc)
				snprintf(err, sizeof(err), "%s", strerror(-rc));
			else
				h = text_hash(text);
		}
		free(text);
		text = NULL;
	}
	if (rc) {
		note(g, names, path, err);
		g->backoff = g->backoff ? longer(g->backoff) : QMP_REASK_S;
		g->next_ask = now + g->backoff;
		return;
	}
	changed = !g->answered || h != g->text_hash;
	pthread_mutex_lock(&q->lock);
	old = g->map;
	g->map = m;
	g->answered = true;
	g->missed = false;
	pthread_mutex_unlock(&q->lock);
	mtree_map_free(&old);
	g->text_hash = h;
	g->backoff = changed || !g->backoff ? QMP_REASK_S : longer(g->backoff);
	g->next_ask = now + g->backoff;
}

/* The entry of guest (tgid, start), added when new; NULL on ENOMEM. Under q->lock. */
static struct qmp_guest *guest_get(struct qmp_names *q, __u32 tgid, __u64 start)
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

/* Forgets the guests the name cache forgot (serve's --keep), and their maps. */
static void prune(struct qmp_names *q, struct name_cache *names)
{
	__u32 kept = 0;

	pthread_mutex_lock(&q->lock);
	qmp_guest_index_clear(&q->index);
	for (__u32 i = 0; i < q->nr; i++) {
		struct qmp_guest *g = &q->g[i];
		struct guest_key k = guest_key_of(g->tgid, g->start);
		__u32 *idx = NULL;
		bool added;

		/* Out of memory: the guest is asked again if it shows up again. */
		if (name_cache_index_find(&names->index, &k))
			idx = qmp_guest_index_get(&q->index, &k, &added);
		if (!idx) {
			mtree_map_free(&g->map);
			continue;
		}
		q->g[kept] = *g;
		*idx = kept++;
	}
	q->nr = kept;
	pthread_mutex_unlock(&q->lock);
}

int qmp_names_add_region(struct qmp_names *q, __u32 tgid, __u64 start, bool io, __u64 lo,
			 __u64 hi, const char *name)
{
	struct qmp_guest *g;
	int err = -ENOMEM;

	pthread_mutex_lock(&q->lock);
	g = guest_get(q, tgid, start);
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

void qmp_names_tick(struct qmp_names *q, struct name_cache *names, double now)
{
	/* Rebuilt now and then, not at every guest forgotten: the index has no removal. */
	if (q->nr > names->nr + QMP_PRUNE_SLACK)
		prune(q, names);
	for (__u32 i = 0; i < names->nr; i++) {
		const struct cached_name *c = &names->v[i];
		struct qmp_guest *g;
		bool due;

		pthread_mutex_lock(&q->lock);
		g = guest_get(q, c->tgid, c->start);
		due = g && !g->not_ours && g->nr_paths &&
		      (!g->asked || ((g->missed || !g->answered) && now >= g->next_ask));
		pthread_mutex_unlock(&q->lock);
		/* A guest gone has no QMP left to ask; its last map stays. */
		if (due && !(kill((pid_t)c->tgid, 0) && errno == ESRCH))
			ask(q, g, names, now);
	}
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
