// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "array_grow.h"
#include "cells.h"
#include "key_rows.h"
#include "tracker.h"

void key_rows_init(struct key_rows *kr, int map_fd, enum group_by by, __s32 vcpu_filter)
{
	memset(kr, 0, sizeof(*kr));
	kr->map_fd = map_fd;
	kr->slots_fd = -1;
	kr->free_fd = -1;
	kr->by = by;
	kr->vcpu_filter = vcpu_filter;
	row_table_init(&kr->cum);
}

void key_rows_free(struct key_rows *kr)
{
	key_prev_index_free(&kr->index);
	free(kr->prev);
	row_table_free(&kr->cum);
	memset(kr, 0, sizeof(*kr));
}

void key_row_key(const struct key_id *id, const struct key_stats *st, enum group_by by,
		 struct row_key *k)
{
	memset(k, 0, sizeof(*k));
	k->tgid = by == BY_REASON ? 0 : st->id.tgid;
	k->start = by == BY_REASON ? 0 : st->id.proc_start;
	k->vcpu = by == BY_VCPU ? cell_key_vcpu(&st->id) : -1;
	k->isa = st->id.isa;
	k->reason = st->id.reason;
	k->key = id->k;
}

void key_delta_row(struct row *d, const struct key_stats *now, const struct key_stats *prev)
{
	memset(d, 0, sizeof(*d));
	/* As a cell's row: the exits left in flight are counted, not completed. */
	d->count = now->count + now->left - prev->count - prev->left;
	d->completed = now->count - prev->count;
	d->total_ns = now->total_ns - prev->total_ns;
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		d->hist[b] = (__u32)(now->hist[b] - prev->hist[b]);	/* modulo 2^32 */
	if (!d->completed) {
		d->min_ns = ~0ULL;
		d->max_ns = 0;
	} else if (!prev->count) {
		d->min_ns = now->min_ns;
		d->max_ns = now->max_ns;
	} else {
		row_minmax_from_hist(d, now->min_ns, now->max_ns);
	}
}

/* One entry read at this sample: its growth into out and cum. */
static int key_take(struct key_rows *kr, const struct key_id *id, const struct key_stats *now,
		    struct row_table *out)
{
	static const struct key_stats zero;
	const struct key_stats *prev = &zero;
	struct row_key k;
	struct row d, *r;
	bool added;
	__u32 *slot;

	slot = key_prev_index_get(&kr->index, id, &added);
	if (!slot)
		return -ENOMEM;
	if (added) {
		if (array_reserve(kr->prev, kr->nr_prev, kr->cap_prev, 64))
			return -ENOMEM;
		*slot = kr->nr_prev++;
	} else {
		prev = &kr->prev[*slot];
	}
	/* A copy is not taken at once: never fewer exits than the last one saw. */
	if (now->count + now->left > prev->count + prev->left) {
		key_row_key(id, now, kr->by, &k);
		if (kr->vcpu_filter < 0 || k.vcpu < 0 || cell_key_vcpu(&now->id) == kr->vcpu_filter) {
			key_delta_row(&d, now, prev);
			r = out ? row_table_get(out, &k) : NULL;
			if (out && !r)
				return -ENOMEM;
			if (r)
				row_add(r, &d);
			r = row_table_get(&kr->cum, &k);
			if (!r)
				return -ENOMEM;
			row_add(r, &d);
		}
		kr->prev[*slot] = *now;
	} else if (added) {
		kr->prev[*slot] = *now;
	}
	return 0;
}

/* Entry id's statistics, through its slot. 0, or -1 when it is gone (deleted meanwhile). */
static int key_read(const struct key_rows *kr, const struct key_id *id, __u32 *slot,
		    struct key_stats *st)
{
	if (bpf_map_lookup_elem(kr->map_fd, id, slot))
		return -1;
	return bpf_map_lookup_elem(kr->slots_fd, slot, st);
}

int key_rows_sample(struct key_rows *kr, struct row_table *out)
{
	__u32 slot;
	struct key_id id, next;
	struct key_stats st;
	bool first = true;
	int err;

	if (out)
		row_table_reset(out);
	while (!bpf_map_get_next_key(kr->map_fd, first ? NULL : &id, &next)) {
		first = false;
		id = next;
		if (key_read(kr, &id, &slot, &st))
			continue;	/* deleted meanwhile */
		err = key_take(kr, &id, &st, out);
		if (err)
			return err;
	}
	return errno == ENOENT || first ? 0 : -errno;
}

/* The kernel's entries of gone guests, deleted after the walk (a deleted key restarts it). */
static void forget_kernel(struct key_rows *kr, const struct row_forget *f)
{
	static const struct key_stats zero;
	struct key_id id, next, *del = NULL;
	__u32 nr = 0, cap = 0, slot, *slots = NULL, cap_slots = 0;
	struct key_stats st;
	bool first = true;

	while (!bpf_map_get_next_key(kr->map_fd, first ? NULL : &id, &next)) {
		first = false;
		id = next;
		if (key_read(kr, &id, &slot, &st) || !f->gone(f->ctx, st.id.tgid, st.id.proc_start))
			continue;
		if (array_reserve(del, nr, cap, 64) || array_reserve(slots, nr, cap_slots, 64))
			break;		/* out of memory: the rest at the next call */
		slots[nr] = slot;
		del[nr++] = id;
	}
	for (__u32 i = 0; i < nr; i++) {
		bool real = del[i].k.kind != KEY_NONE && del[i].k.kind != KEY_OTHER;

		if (bpf_map_delete_elem(kr->map_fd, &del[i]))
			continue;
		/*
		 * Its threads are gone, so no writer is left: the slot goes back zeroed (a new
		 * entry's histogram starts from it), after the hash no longer leads to it. A slot
		 * that cannot be zeroed or queued stays out of use: a smaller table, never two
		 * entries in one slot.
		 */
		if (!bpf_map_update_elem(kr->slots_fd, &slots[i], &zero, BPF_ANY))
			bpf_map_update_elem(kr->free_fd, NULL, &slots[i], BPF_ANY);
		/* Room for a new key once its entry is gone (only this thread lowers it). */
		if (real && kr->used && __atomic_load_n(kr->used, __ATOMIC_RELAXED))
			__atomic_fetch_sub(kr->used, 1, __ATOMIC_RELAXED);
	}
	free(slots);
	free(del);
}

int key_rows_forget(struct key_rows *kr, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		    void *ctx, bool drop_rows)
{
	struct row_forget f = { gone, ctx };
	struct key_prev_index index = {};
	struct key_prev_index_slot *slot;
	struct key_stats *prev = NULL;
	__u32 nr = 0, cap = 0;
	bool any = false;

	if (kr->map_fd >= 0 && kr->used)
		forget_kernel(kr, &f);
	for (__u32 i = 0; i < kr->nr_prev && !any; i++)
		any = gone(ctx, kr->prev[i].id.tgid, kr->prev[i].id.proc_start);
	/* The index has no removal: the entries kept move to a new one, with their copies. */
	if (any) {
		hashmap_for_each(slot, &kr->index) {
			const struct key_stats *st = &kr->prev[slot->val];
			__u32 *to;
			bool added;

			if (gone(ctx, st->id.tgid, st->id.proc_start))
				continue;
			to = key_prev_index_get(&index, &slot->key, &added);
			if (!to || array_reserve(prev, nr, cap, 64)) {
				key_prev_index_free(&index);
				free(prev);
				return -ENOMEM;
			}
			*to = nr;
			prev[nr++] = *st;
		}
		key_prev_index_free(&kr->index);
		free(kr->prev);
		kr->index = index;
		kr->prev = prev;
		kr->nr_prev = nr;
		kr->cap_prev = cap;
	}
	return drop_rows ? row_table_retain(&kr->cum, row_forget_kept, &f) : 0;
}
