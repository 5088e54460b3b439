/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guests (VMM processes) an exporter has shown: when their series started counting, and
 * whether the process still runs. A guest's series stay exported for --keep after its process
 * exits, so that the last scrape still sees its final counts, then go.
 */
#ifndef VMEXIT_SERVE_GUESTS_H
#define VMEXIT_SERVE_GUESTS_H

#include <stdbool.h>
#include "hashmap.h"
#include "rows.h"

struct serve_guest {
	__u32 tgid;
	__u64 start;		/* the process's start (row_key.start): tells a reused pid */
	__u64 created_ms;	/* Unix ms: the later of the process's and vmexit's start */
	__u64 ended_ms;		/* Unix ms when the process was found gone; 0: runs */
};

DEFINE_HASHMAP(serve_guest_map, struct guest_key, struct serve_guest)

struct serve_guests {
	struct serve_guest_map map;	/* by process */
	__u64 start_ms;		/* vmexit's start */
	__u64 keep_ms;
	/* Is the process tgid that started at start (CLOCK_MONOTONIC ns; 0: unknown) still
	 * running? Its start in Unix ms in *ms. Tests replace it; NULL reads /proc. */
	bool (*alive)(void *ctx, __u32 tgid, __u64 start, __u64 *ms);
	void *ctx;
};

/* Adds the guests of rows not known yet; 0 or -ENOMEM. */
int serve_guests_learn(struct serve_guests *g, const struct row_table *rows, __u64 now_ms);
/* Adds the guest tgid that started at start if not known yet; 0 or -ENOMEM. */
int serve_guests_learn_one(struct serve_guests *g, __u32 tgid, __u64 start, __u64 now_ms);
/* Marks the guests whose process has exited (or whose pid now names another process). */
void serve_guests_check(struct serve_guests *g, __u64 now_ms);
const struct serve_guest *serve_guests_find(const struct serve_guests *g, __u32 tgid,
					    __u64 start);
/* Whether a guest's series are exported at now_ms. */
bool serve_guest_exported(const struct serve_guests *g, const struct serve_guest *x,
			  __u64 now_ms);
/* A known guest whose series are no longer exported at now_ms (its rows can go). */
bool serve_guests_expired(const struct serve_guests *g, __u32 tgid, __u64 start, __u64 now_ms);
/* Forgets the expired guests: a server that runs for months keeps only what it exports.
 * 0 or -ENOMEM (then nothing is forgotten). */
int serve_guests_prune(struct serve_guests *g, __u64 now_ms);
/* Guests whose process runs. */
__u32 serve_guests_running(const struct serve_guests *g);
void serve_guests_free(struct serve_guests *g);

#endif /* VMEXIT_SERVE_GUESTS_H */
