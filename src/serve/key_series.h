/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve --keys N: per guest x reason, its N busiest keys as series of their own and the rest
 * summed in one series "other". A key once exported stays so, and only keys first seen after
 * the guest x reason had its N go to "other": every series is a counter that only grows (a
 * key moving between its own series and "other" would make both jump). Keys seen in the same
 * scrape compete by count for the places left.
 */
#ifndef VMEXIT_KEY_SERIES_H
#define VMEXIT_KEY_SERIES_H

#include <pthread.h>
#include "hashmap.h"
#include "rows.h"
#include "prom_exposition.h"
#include "qmp_names.h"

DEFINE_HASHMAP(key_series_chosen, struct row_key, __u32)

struct key_series {
	__u32 top;			/* --keys */
	struct qmp_names *qmp;		/* --qmp, or NULL */
	bool per_address;		/* --per-address: a series per port / address */
	struct row_table grouped;	/* kr.cum per device (key_groups.h) */
	struct key_series_chosen chosen;	/* key rows exported by their key: 1 */
	struct key_series_chosen places;	/* guest x reason (key zeroed): keys chosen */
	struct expo_key *out;		/* the last key_series_take()'s */
	__u32 nr_out, cap_out;
	const struct row **sorted;
	__u32 cap_sorted;
};

/*
 * The guests a scrape exports: false for one that is not, else its label and _created time
 * (Unix ms).
 */
typedef bool key_series_guest_fn(void *ctx, __u32 tgid, __u64 start, const char **guest,
				 __u64 *created_ms);

void key_series_init(struct key_series *ks, __u32 top, struct qmp_names *qmp);
void key_series_free(struct key_series *ks);
/*
 * Forgets the chosen keys of the guests gone() says are no longer exported (their kernel
 * entries and rows are the sampler's: sampler_forget()). 0 or -ENOMEM.
 */
int key_series_forget(struct key_series *ks, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		      void *ctx);
/* The key rows since the start (guest x reason x key, the sampler's: sampler_with_key_rows())
 * into ks->out, the exported guests' series. 0, or -ENOMEM. */
int key_series_take(struct key_series *ks, const struct row_table *cum,
		    key_series_guest_fn *guest, void *ctx);

#endif /* VMEXIT_KEY_SERIES_H */
