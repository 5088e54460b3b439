// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "key_groups.h"
#include "key_names.h"
#include "qmp_names.h"

void key_group_span(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
		    __u64 *lo, __u64 *hi)
{
	const __u64 page = (1ull << KEY_MMIO_PAGE_SHIFT) - 1;
	char name[64];
	int rc = -1;

	*lo = *hi = k->key;
	if (k->kind != KEY_PORT && k->kind != KEY_MMIO)
		return;
	rc = qmp_key_region(q, tgid, start, k, lo, hi, name, sizeof(name));
	if (rc > 0 || k->kind == KEY_PORT)
		return;
	if (rc < 0 && key_builtin_mmio_range(k->key, lo, hi))
		return;
	*lo = k->key & ~page;
	*hi = k->key | page;
}

int key_groups_build(const struct row_table *in, struct qmp_names *q, struct row_table *out)
{
	for (__u32 i = 0; i < in->nr; i++) {
		const struct row *r = &in->rows[i];
		struct row_key k = r->key;
		struct row *g;
		__u64 lo, hi;

		key_group_span(q, k.tgid, k.start, &k.key, &lo, &hi);
		k.key.key = lo;
		k.key_end = hi > lo ? hi : 0;
		g = row_table_get(out, &k);
		if (!g)
			return -ENOMEM;
		row_add(g, r);
	}
	return 0;
}
