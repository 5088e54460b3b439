// SPDX-License-Identifier: GPL-2.0
/* --qmp's asking: each guest's QMP sockets found and asked on the owner's tick (qmp_ask.h);
 * the names they give are model/qmp_names.c's. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proc_names.h"
#include "qmp_ask.h"
#include "qmp_client.h"
#include "text_escape.h"

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

/*
 * One line in one write: a COMMAND vmexit started shares its stderr, and its own lines came
 * between the pieces of a note written piece by piece (seen in the SVM bed: vmexit-guest's
 * summary inside the note's line). Every line about a guest's QMP begins with the guest.
 */
__attribute__((format(printf, 4, 5)))
static void say(const struct qmp_guest *g, struct name_cache *names, bool is_note,
		const char *fmt, ...)
{
	char nb[TEXT_NAME_MAX], line[4 * TEXT_NAME_MAX + 512];
	size_t n = (size_t)snprintf(line, sizeof(line), "vmexit: %s--qmp: guest %s (pid %u): ",
				    is_note ? "note: " : "",
				    text_esc(nb, name_cache_get_at(names, g->tgid, g->start)),
				    g->tgid);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);	/* room kept for the newline */
	va_end(ap);
	n = strlen(line);
	line[n] = '\n';
	line[n + 1] = '\0';
	fputs(line, stderr);
}

/*
 * The first failure is said; a later ask's failure too while the guest has no map, when it is
 * not the one last said (a socket that appears, then a QEMU that does not answer in time),
 * never the same one at every ask. Once QEMU answered, its map stays: a later ask's failure
 * (most often a QEMU quitting: CI saw record's third ask find the socket gone) names nothing
 * differently, so only -v says it, and not again while its reason stays the same.
 */
static void note(struct qmp_names *q, struct qmp_guest *g, struct name_cache *names,
		 const char *path, const char *why)
{
	char pb[TEXT_NAME_MAX], where[TEXT_NAME_MAX + 16] = "";
	__u64 h = text_hash(why) ^ (path ? text_hash(path) * 31 : 0);

	if (path)
		snprintf(where, sizeof(where), "QMP at %s: ", text_esc(pb, path));
	if (g->answered) {
		if (q->verbose && h != g->said)
			say(g, names, false, "%s%s; its ports and addresses keep QEMU's last map",
			    where, why);
		g->said = h;
		return;
	}
	if (g->noted && h == g->said)
		return;
	say(g, names, true, "%s%s%s; its ports and addresses keep built-in names",
	    g->noted ? "a later ask: " : "", where, why);
	g->noted = true;
	g->said = h;
}

static double longer(double backoff)
{
	return backoff * 2 < QMP_REASK_MAX_S ? backoff * 2 : QMP_REASK_MAX_S;
}

/* The new map in g, or why not in err; each socket in turn until one answers. */
static void ask(struct qmp_names *q, struct qmp_guest *g, struct name_cache *names, double now)
{
	struct mtree_map m = {}, old;
	char err[256] = "", pb[TEXT_NAME_MAX], *text = NULL;
	const char *path = NULL;
	int rc = -ENOENT, pid = 0;
	bool changed;
	__u64 h = 0;

	if (g->nr_paths < 0)
		find_paths(q, g);
	g->asked = true;
	if (!g->nr_paths) {
		note(q, g, names, NULL, "no QMP socket on its command line "
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
		/* The fix where there is one: a QEMU busy or on a slow host answers later. */
		if (rc == -ETIMEDOUT)
			snprintf(err + strlen(err), sizeof(err) - strlen(err),
				 " (--qmp-timeout gives it longer)");
		note(q, g, names, path, err);
		g->backoff = g->backoff ? longer(g->backoff) : QMP_REASK_S;
		g->next_ask = now + g->backoff;
		return;
	}
	/* A QEMU still starting (or busy) can miss the first ask and answer a later one: the
	 * note said built-in names, so say that its names are QEMU's from now on. */
	if (g->noted && !g->answered)
		say(g, names, true, "QMP at %s answered a later ask; its ports and addresses take "
		    "QEMU's names from now on", text_esc(pb, path));
	changed = !g->answered || h != g->text_hash;
	/* Each map that names keys from now on: when a run first had QEMU's names (a test waits
	 * for it before it stops the QEMU), and each time the firmware or a hotplug changed it. */
	if (changed && q->verbose)
		say(g, names, false, "QEMU's map from %s: %u I/O and %u memory ranges",
		    text_esc(pb, path), m.io.nr, m.mem.nr);
	pthread_mutex_lock(&q->lock);
	old = g->map;
	g->map = m;
	g->answered = true;
	g->missed = false;
	/* A failure after this answer is said (-v) even for the reason said before it. */
	g->said = 0;
	pthread_mutex_unlock(&q->lock);
	mtree_map_free(&old);
	g->text_hash = h;
	g->backoff = changed || !g->backoff ? QMP_REASK_S : longer(g->backoff);
	g->next_ask = now + g->backoff;
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

/* Whether the name cache knows guest (tgid, start). */
static bool named(struct name_cache *names, __u32 tgid, __u64 start)
{
	struct guest_key k = guest_key_of(tgid, start);

	return name_cache_index_find(&names->index, &k);
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
		/* Asked as (pid, 0) before its start was known: the same QEMU, asked once. */
		if (c->start && !named(names, c->tgid, 0))
			qmp_guest_started(q, c->tgid, c->start);
		g = qmp_guest_get(q, c->tgid, c->start);
		due = g && !g->not_ours && g->nr_paths &&
		      (!g->asked || ((g->missed || !g->answered) && now >= g->next_ask));
		pthread_mutex_unlock(&q->lock);
		/* A guest gone has no QMP left to ask; its last map stays. */
		if (due && !(kill((pid_t)c->tgid, 0) && errno == ESRCH))
			ask(q, g, names, now);
	}
}
