/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's memory of guest names by VMM process: each asked once (the kernel's copy of the
 * command line, else /proc through proc_names.h) while the process lives, kept after it
 * exits, or learnt from a record file. proc_names.h is the stateless /proc side.
 *
 * A process is its pid and its start time (cell_key.proc_start): a pid reused by a new VMM is
 * another guest with a name of its own, and the old one keeps its name for the rows it made.
 * Lookups by pid alone find the pid's latest process (record files know pids only).
 */
#ifndef VMEXIT_NAME_CACHE_H
#define VMEXIT_NAME_CACHE_H

#include <stdbool.h>
#include "hashmap.h"
#include "rows.h"
#include "vmexit.h"

struct cached_name {
	__u32 tgid;
	__u64 start;		/* the process's start time (cell_key.proc_start); 0: unknown */
	__u32 prev;		/* the pid's process that started before it, or NAME_CACHE_NONE */
	char name[64];
};

#define NAME_CACHE_NONE		((__u32)-1)
#define NAME_CACHE_MEMO		64	/* pids remembered by name_cache_*_at_time(): a power of 2 */

/* v[idx] is tgid's process for every ts in [from, until), while gen is the cache's. */
struct name_memo {
	__u32 tgid;
	__u32 idx;
	__u64 gen;
	__u64 from;
	__u64 until;
};

DEFINE_HASHMAP(name_cache_index, struct guest_key, __u32)
DEFINE_HASHMAP(name_cache_latest, __u32, __u32)

struct name_cache {
	struct cached_name *v;		/* in the order first seen */
	__u32 nr;
	__u32 cap;
	struct name_cache_index index;	/* (tgid, start) -> its place in v */
	struct name_cache_latest latest; /* tgid -> the place of its latest process (cached_name.prev:
					  * then the one before, and so on) */
	/* Each event's process at report's speed: one look here, not a hash lookup and a walk. */
	struct name_memo memo[NAME_CACHE_MEMO];
	__u64 gen;		/* bumped whenever processes are added or moved: memos before expire */
	bool resolve;		/* read /proc; off when names come from a file or a test */
	/* The command line the kernel kept for tgid (NUL-separated); its length, or < 0. */
	int (*args)(void *ctx, __u32 tgid, char *buf, size_t len);
	void *args_ctx;
};

/* The name of tgid's latest process; the pid as text when nothing better is known. */
const char *name_cache_get(struct name_cache *n, __u32 tgid);
/*
 * The name of the process tgid that started at start (0: its latest). A process that is not
 * the pid's latest is never asked about (the pid names another process now): it has the name
 * it was given while it ran, else its pid.
 */
const char *name_cache_get_at(struct name_cache *n, __u32 tgid, __u64 start);
/*
 * The process of tgid that made an event at ts (CLOCK_MONOTONIC, as proc_start): the latest that
 * started at or before ts, since a process starts before its first event and a pid is only
 * reused once its process is gone. Its start, 0 when no process known started by ts (unknown).
 */
__u64 name_cache_start_at_time(struct name_cache *n, __u32 tgid, __u64 ts);
/* Its name; when no process known started by ts, that of tgid's latest. */
const char *name_cache_get_at_time(struct name_cache *n, __u32 tgid, __u64 ts);
/*
 * The process tgid that started at start makes exits: it becomes the pid's latest. A start
 * other than the latest's is a new VMM on a reused pid: it is asked its name at the next
 * lookup. Unknown start times (0) tell nothing: the latest stays. A latest known only by pid
 * (start 0) was this process: its entry takes the start.
 */
int name_cache_born(struct name_cache *n, __u32 tgid, __u64 start);
/*
 * Does any later process of tgid have the same name as the one that started at start, as same()
 * sees names (serve: the same label value once escaped, where two ill-formed names can meet)?
 */
bool name_cache_shadowed(struct name_cache *n, __u32 tgid, __u64 start,
			 bool (*same)(const char *a, const char *b));
/* Records a name learnt elsewhere for tgid's latest process (a record file). */
int name_cache_set(struct name_cache *n, __u32 tgid, const char *name);
/* Records the name of the process tgid that started at start (a copy of another cache). */
int name_cache_set_at(struct name_cache *n, __u32 tgid, __u64 start, const char *name);
/* Forgets the processes keep() says no to (guests long gone); 0 or -ENOMEM. */
int name_cache_prune(struct name_cache *n, bool (*keep)(void *ctx, __u32 tgid, __u64 start),
		     void *ctx);
/* Forgets every name, keeps the memory. */
void name_cache_clear(struct name_cache *n);
void name_cache_free(struct name_cache *n);

#endif /* VMEXIT_NAME_CACHE_H */
