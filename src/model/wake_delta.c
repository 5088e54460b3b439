// SPDX-License-Identifier: GPL-2.0
/*
 * top --wake: what the kernel's wake cells gained between two snapshots (an interval, or the
 * time since top's reset). The kernel's cells only grow, so the difference is exact; a cell
 * that shrank was forgotten and made again in between, and counts whole.
 */
#include <errno.h>
#include <string.h>
#include "wake_delta.h"

/* a -= b, field by field, for n __u64s. */
static void sub_u64s(__u64 *a, const __u64 *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] -= b[i];
}

static void wake_sub(struct wake_cell *c, const struct wake_cell *b)
{
	if (b->count > c->count || b->sum_ns > c->sum_ns || b->posted > c->posted)
		return;
	c->count -= b->count;
	c->posted -= b->posted;
	c->sum_ns -= b->sum_ns;
	/* max_ns stays the cell's since start: percentiles are clamped to it, never above. */
	sub_u64s(c->parts, b->parts, NR_WAKE_PARTS);
	sub_u64s(c->hist, b->hist, NR_BUCKETS);
}

_Static_assert(sizeof(struct hlt_cell) % sizeof(__u64) == 0, "hlt_cell: __u64s only");

static void hlt_sub(struct hlt_cell *c, const struct hlt_cell *b)
{
	if (b->halts > c->halts || b->exits > c->exits || b->sum_ns > c->sum_ns)
		return;
	/* Every field of struct hlt_cell is a __u64 that only grows. */
	sub_u64s((__u64 *)c, (const __u64 *)b, sizeof(*c) / sizeof(__u64));
}

int wake_snapshot_delta(struct wake_snapshot *out, const struct wake_snapshot *cur,
			const struct wake_snapshot *base)
{
	size_t j = 0;
	int err = wake_snapshot_copy(out, cur);

	if (err)
		return err;
	/* Both sorted the same way (wake_snapshot_sort): one walk through each. */
	for (size_t i = 0; base && i < out->nr_wake; i++) {
		while (j < base->nr_wake && wake_key_cmp(&base->wkeys[j], &out->wkeys[i]) < 0)
			j++;
		if (j < base->nr_wake && !wake_key_cmp(&base->wkeys[j], &out->wkeys[i]))
			wake_sub(&out->wcells[i], &base->wcells[j]);
	}
	j = 0;
	for (size_t i = 0; base && i < out->nr_hlt; i++) {
		while (j < base->nr_hlt && hlt_key_cmp(&base->hkeys[j], &out->hkeys[i]) < 0)
			j++;
		if (j < base->nr_hlt && !hlt_key_cmp(&base->hkeys[j], &out->hkeys[i]))
			hlt_sub(&out->hcells[i], &base->hcells[j]);
	}
	for (int l = 0; base && l < NR_WAKE_LOST; l++)
		out->lost[l] -= base->lost[l] <= out->lost[l] ? base->lost[l] : 0;
	if (base && base->untimed <= out->untimed)
		out->untimed -= base->untimed;
	return 0;
}
