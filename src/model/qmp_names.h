/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --qmp: names of ports and addresses from each QEMU's own memory map, asked over QMP (`info
 * mtree -f` through human-monitor-command; nothing but that query is ever sent). A guest is
 * asked when first seen, and again when a key falls outside the map it gave (a device mapped
 * since, such as PCI BARs the firmware assigns), at most every QMP_REASK_S, longer while asks
 * bring nothing new or fail. A QMP that cannot be reached is a one-line note per guest; its
 * keys keep their built-in names.
 *
 * Threads: the owner calls qmp_names_tick() (live/qmp_ask.h: the asking is I/O, not model);
 * qmp_key_name() may be called from any thread.
 */
#ifndef VMEXIT_QMP_NAMES_H
#define VMEXIT_QMP_NAMES_H

#include <pthread.h>
#include <stdbool.h>
#include "hashmap.h"
#include "mtree_map.h"
#include "name_cache.h"
#include "qmp_cmdline.h"
#include "rows.h"

#define QMP_TIMEOUT_MS	500	/* a whole ask: connect, handshake, the answer */
#define QMP_REASK_S	2.0	/* the first re-ask; doubled while they bring nothing new */
#define QMP_REASK_MAX_S	300.0
#define QMP_PATHS	4	/* QMP sockets tried per guest (--qmp auto) */
#define QMP_PRUNE_SLACK	64	/* guests kept past the name cache's before they are pruned */

struct qmp_guest {
	__u32 tgid;
	__u64 start;
	char paths[QMP_PATHS][QMP_PATH_MAX];
	int nr_paths;		/* -1: not looked for yet */
	struct mtree_map map;
	bool asked, answered;	/* asked at least once; answered with a map */
	bool missed;		/* a key fell outside the map since the last ask */
	bool noted;		/* its note is said */
	__u64 said;		/* the hash of the last failure said (socket and why) */
	bool not_ours;		/* --qmp PATH is another process's */
	double next_ask;	/* sampler_now() seconds */
	double backoff;
	__u64 text_hash;	/* of the last answer: the same again doubles backoff */
};

DEFINE_HASHMAP(qmp_guest_index, struct guest_key, __u32)

struct qmp_names {
	const char *path;	/* --qmp PATH; NULL: auto */
	struct qmp_guest *g;
	__u32 nr, cap;
	struct qmp_guest_index index;
	pthread_mutex_t lock;	/* g's maps and flags against qmp_key_name() */
	int timeout_ms;
	bool verbose;		/* -v: say each map a guest's QEMU gives that differs from its last */
};

/* spec: "auto" or a socket path. */
void qmp_names_init(struct qmp_names *q, const char *spec);
void qmp_names_free(struct qmp_names *q);
/* The entry of guest (tgid, start), added when new; NULL on ENOMEM. Under q->lock. */
struct qmp_guest *qmp_guest_get(struct qmp_names *q, __u32 tgid, __u64 start);
/*
 * Guest (tgid, 0), asked before its start time was known, is (tgid, start): its entry (state,
 * notes said, map) takes the start, unless start already has one. For the owner once the name
 * cache merged the two (name_cache_born). Under q->lock; 0 or -ENOMEM.
 */
int qmp_guest_started(struct qmp_names *q, __u32 tgid, __u64 start);
/*
 * A region of guest (tgid, start)'s map as a recording kept it (report): the guest counts as
 * answered, and is never asked. 0 or -ENOMEM.
 */
int qmp_names_add_region(struct qmp_names *q, __u32 tgid, __u64 start, bool io, __u64 lo,
			 __u64 hi, const char *name);
/*
 * record --qmp: every answered guest is asked again when due (backoff doubling while the map
 * stays the same), as if a key had left its map: the firmware maps devices (PCI BARs) after
 * the first ask, and no lookup tells a recorder so.
 */
void qmp_names_watch(struct qmp_names *q);
/* fn for every region of every answered guest's map (record --qmp, at its end); stops at and
 * returns fn's first non-zero. */
int qmp_names_each_region(struct qmp_names *q,
			  int (*fn)(void *ctx, __u32 tgid, __u64 start, bool io, __u64 lo, __u64 hi,
				    const char *name), void *ctx);

/* The name of a port or address its guest's QEMU maps to nothing (no built-in name then). */
#define QMP_UNMAPPED	"unmapped"

/*
 * The name of key k of guest (tgid, start): its QEMU's region (ports and addresses, when q has
 * its map; QMP_UNMAPPED where that map has none), else the built-in one (key_names.h), else "".
 * Copied to buf. q may be NULL. tgid 0 (any guest) or start 0 (any process of pid tgid): the
 * name the guests that map k agree on.
 */
const char *qmp_key_name(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
			 char *buf, size_t len);

/*
 * The region of port or address k in its guest's QEMU map, as qmp_key_name() finds it: 1 with
 * its flat range [*lo, *hi] and name (in buf); 0 when the map has none there; -1 when there is
 * no map (q NULL, not answered, not a port or address, guests that disagree).
 */
int qmp_key_region(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
		   __u64 *lo, __u64 *hi, char *buf, size_t len);

#endif /* VMEXIT_QMP_NAMES_H */
