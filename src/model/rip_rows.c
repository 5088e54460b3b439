// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include "rip_rows.h"

const char *rip_guest_mode(__u64 rip)
{
	return rip >> 63 ? "kernel" : "user";
}

void rip_event_key(const struct vmexit_event *ev, struct key_note *k)
{
	__u16 type = VMEXIT_EV_TYPE(ev->type);

	memset(k, 0, sizeof(*k));
	if (type == VMEXIT_EV_EXIT ||
	    (type == VMEXIT_EV_USER_EXIT && (ev->error_code & VMEXIT_UEXIT_RIP))) {
		k->kind = KEY_RIP;
		k->key = ev->rip;
	}
}

int rip_rows_top(const struct row_table *in, __u32 top, struct row_table *out)
{
	struct row_table seen;	/* per guest x reason: how many RIP rows kept so far (count) */
	int err = 0;

	row_table_reset(out);
	row_table_init(&seen);
	for (__u32 i = 0; i < in->nr && !err; i++) {
		const struct row *r = &in->rows[i];
		struct row_key k = r->key;
		struct row *g, *o;

		memset(&k.key, 0, sizeof(k.key));
		g = row_table_get(&seen, &k);
		if (!g) {
			err = -ENOMEM;
			break;
		}
		if (r->key.key.kind == KEY_RIP && g->count++ < top) {
			o = row_table_get(out, &r->key);
		} else if (r->key.key.kind == KEY_RIP || r->key.key.kind == KEY_OTHER) {
			k.key.kind = KEY_OTHER;
			o = row_table_get(out, &k);
		} else {
			o = row_table_get(out, &r->key);
		}
		if (!o) {
			err = -ENOMEM;
			break;
		}
		row_add(o, r);
	}
	row_table_free(&seen);
	return err;
}
