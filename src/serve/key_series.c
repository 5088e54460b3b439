// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "key_groups.h"
#include "key_series.h"

void key_series_init(struct key_series *ks, __u32 top, struct qmp_names *qmp)
{
	memset(ks, 0, sizeof(*ks));
	ks->top = top;
	ks->qmp = qmp;
	row_table_init(&ks->grouped);
}

void key_series_free(struct key_series *ks)
{
	row_table_free(&ks->grouped);
	key_series_chosen_free(&ks->chosen);
	key_series_chosen_free(&ks->places);
	free(ks->out);
	free(ks->sorted);
	memset(ks, 0, sizeof(*ks));
}

static struct row_key group_of(const struct row_key *k)
{
	struct row_key g = *k;

	memset(&g.key, 0, sizeof(g.key));
	g.key_end = 0;
	return g;
}

/* By guest x reason, each one's busiest keys first. */
static int by_group_count(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
	struct row_key gx = group_of(&x->key), gy = group_of(&y->key);
	int c = memcmp(&gx, &gy, sizeof(gx));

	if (c)
		return c;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return row_key_cmp(&x->key, &y->key);
}

/* A new exported series (the group's "other" when k is its group key with kind other). */
static struct expo_key *put(struct key_series *ks, const struct row_key *k)
{
	struct expo_key *e;

	if (array_reserve(ks->out, ks->nr_out, ks->cap_out, 64))
		return NULL;
	e = &ks->out[ks->nr_out++];
	memset(e, 0, sizeof(*e));
	e->key = *k;
	return e;
}

/* Whether r is exported under its own key: chosen before, or now while places are left. */
static int choose(struct key_series *ks, const struct row *r, bool *own)
{
	struct row_key g = group_of(&r->key);
	__u32 *c, *n;
	bool added;

	*own = false;
	if (r->key.key.kind == KEY_OTHER)	/* the kernel's table was full: no key to show */
		return 0;
	if (key_series_chosen_find(&ks->chosen, &r->key)) {
		*own = true;
		return 0;
	}
	n = key_series_chosen_get(&ks->places, &g, &added);
	if (!n)
		return -ENOMEM;
	if (*n >= ks->top)
		return 0;
	c = key_series_chosen_get(&ks->chosen, &r->key, &added);
	if (!c)
		return -ENOMEM;
	*c = 1;
	(*n)++;
	*own = true;
	return 0;
}

/* m without the keys of gone guests (the map has no removal: a new one). 0 or -ENOMEM. */
static int chosen_forget(struct key_series_chosen *m,
			 bool (*gone)(void *ctx, __u32 tgid, __u64 start), void *ctx)
{
	struct key_series_chosen kept = {};
	struct key_series_chosen_slot *slot;

	hashmap_for_each(slot, m) {
		__u32 *v;
		bool added;

		if (gone(ctx, slot->key.tgid, slot->key.start))
			continue;
		v = key_series_chosen_get(&kept, &slot->key, &added);
		if (!v) {
			key_series_chosen_free(&kept);
			return -ENOMEM;
		}
		*v = slot->val;
	}
	key_series_chosen_free(m);
	*m = kept;
	return 0;
}

int key_series_forget(struct key_series *ks, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		      void *ctx)
{
	int err = chosen_forget(&ks->chosen, gone, ctx);

	if (!err)
		err = chosen_forget(&ks->places, gone, ctx);
	return err;
}

int key_series_take(struct key_series *ks, const struct row_table *cum,
		    key_series_guest_fn *guest, void *ctx)
{
	struct row_key other_g = {};
	__s64 other = -1;		/* the group's "other" in ks->out (which may move) */
	int err;

	ks->nr_out = 0;
	/* Ports and addresses per device, as stat's table (key_groups.h). */
	if (!ks->per_address) {
		row_table_reset(&ks->grouped);
		err = key_groups_build(cum, ks->qmp, &ks->grouped);
		if (err)
			return err;
		cum = &ks->grouped;
	}
	if (cum->nr > ks->cap_sorted) {
		const struct row **s = reallocarray(ks->sorted, cum->nr, sizeof(*s));

		if (!s)
			return -ENOMEM;
		ks->sorted = s;
		ks->cap_sorted = cum->nr;
	}
	for (__u32 i = 0; i < cum->nr; i++)
		ks->sorted[i] = &cum->rows[i];
	if (cum->nr)
		qsort(ks->sorted, cum->nr, sizeof(*ks->sorted), by_group_count);
	for (__u32 i = 0; i < cum->nr; i++) {
		const struct row *r = ks->sorted[i];
		struct row_key g = group_of(&r->key);
		struct expo_key *e;
		const char *name;
		__u64 created;
		bool own;

		err = choose(ks, r, &own);
		if (err)
			return err;
		if (!guest(ctx, r->key.tgid, r->key.start, &name, &created))
			continue;
		if (own) {
			e = put(ks, &r->key);
			if (!e)
				return -ENOMEM;
			qmp_key_name(ks->qmp, r->key.tgid, r->key.start, &r->key.key, e->name,
				     sizeof(e->name));
		} else {
			/* A group's rows are together: one "other" each. */
			if (other < 0 || memcmp(&other_g, &g, sizeof(g))) {
				other_g = g;
				g.key.kind = KEY_OTHER;
				if (!put(ks, &g))
					return -ENOMEM;
				other = ks->nr_out - 1;
			}
			e = &ks->out[other];
		}
		e->guest = name;
		e->created_ms = created;
		e->count += r->count;
		e->total_ns += r->total_ns;
	}
	return 0;
}
