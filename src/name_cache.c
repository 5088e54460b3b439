// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "name_cache.h"
#include "array_grow.h"
#include "proc_names.h"

static struct cached_name *find(struct name_cache *n, __u32 tgid)
{
	__u32 *i = name_cache_index_find(&n->index, &tgid);

	return i ? &n->v[*i] : NULL;
}

static struct cached_name *add(struct name_cache *n, __u32 tgid)
{
	bool added;
	__u32 *i;

	if (array_reserve(n->v, n->nr, n->cap, 16))
		return NULL;
	i = name_cache_index_get(&n->index, &tgid, &added);
	if (!i)
		return NULL;
	*i = n->nr;
	n->v[n->nr].tgid = tgid;
	n->v[n->nr].start = 0;
	n->v[n->nr].name[0] = 0;
	return &n->v[n->nr++];
}

int name_cache_born(struct name_cache *n, __u32 tgid, __u64 start)
{
	struct cached_name *e = find(n, tgid);

	if (!e)
		e = add(n, tgid);
	if (!e)
		return -ENOMEM;
	if (e->start && start && e->start != start)
		e->name[0] = 0;
	if (start)
		e->start = start;
	return 0;
}

int name_cache_set(struct name_cache *n, __u32 tgid, const char *name)
{
	struct cached_name *e = find(n, tgid);

	if (!e)
		e = add(n, tgid);
	if (!e)
		return -ENOMEM;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return 0;
}

const char *name_cache_get(struct name_cache *n, __u32 tgid)
{
	static char buf[16];
	struct cached_name *e = find(n, tgid);

	if (e && e->name[0])
		return e->name;
	if (!e)
		e = add(n, tgid);
	if (e && n->args) {
		char args[PROC_ARGS_MAX];
		int len = n->args(n->args_ctx, tgid, args, sizeof(args));

		if (len > 0 && !guest_name_from_cmdline(args, len, e->name, sizeof(e->name)))
			return e->name;
	}
	if (e && n->resolve && guest_name_for_pid(tgid, e->name, sizeof(e->name)) == 0)
		return e->name;
	/* Gone before we saw it: the pid is all we know; keep it so we do not ask again. */
	if (e) {
		snprintf(e->name, sizeof(e->name), "%u", tgid);
		return e->name;
	}
	snprintf(buf, sizeof(buf), "%u", tgid);
	return buf;
}

void name_cache_free(struct name_cache *n)
{
	free(n->v);
	name_cache_index_free(&n->index);
	memset(n, 0, sizeof(*n));
}
