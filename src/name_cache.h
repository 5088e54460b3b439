/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's memory of guest names by VMM pid: each asked once (the kernel's copy of the
 * command line, else /proc through proc_names.h) while the process lives, kept after it
 * exits, or learnt from a record file. proc_names.h is the stateless /proc side.
 */
#ifndef VMEXIT_NAME_CACHE_H
#define VMEXIT_NAME_CACHE_H

#include <stdbool.h>
#include "hashmap.h"
#include "vmexit.h"

struct cached_name {
	__u32 tgid;
	__u64 start;		/* the process's start time (cell_key.proc_start); 0: unknown */
	char name[64];
};

DEFINE_HASHMAP(name_cache_index, __u32, __u32)

struct name_cache {
	struct cached_name *v;		/* in the order first seen */
	__u32 nr;
	__u32 cap;
	struct name_cache_index index;	/* tgid -> its place in v */
	bool resolve;		/* read /proc; off when names come from a file or a test */
	/* The command line the kernel kept for tgid (NUL-separated); its length, or < 0. */
	int (*args)(void *ctx, __u32 tgid, char *buf, size_t len);
	void *args_ctx;
};

/* The guest's name; the pid as text when nothing better is known. */
const char *name_cache_get(struct name_cache *n, __u32 tgid);
/*
 * The process tgid that started at start (cell_key.proc_start) makes exits. When that is not
 * the process the name was learnt from, the pid has been reused by a new VMM: its name is
 * asked again, at the next name_cache_get().
 */
int name_cache_born(struct name_cache *n, __u32 tgid, __u64 start);
/* Records a name learnt elsewhere (a record file). */
int name_cache_set(struct name_cache *n, __u32 tgid, const char *name);
void name_cache_free(struct name_cache *n);

#endif /* VMEXIT_NAME_CACHE_H */
