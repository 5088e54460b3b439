// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "event_rows.h"
#include "hist.h"

int event_rows_add(struct row_table *rt, enum group_by by, const struct vmexit_event *ev,
		   __u64 start, bool keys)
{
	static const struct key_note none;

	return event_rows_add_key(rt, by, ev, start, keys ? &ev->key : &none);
}

int event_rows_add_key(struct row_table *rt, enum group_by by, const struct vmexit_event *ev,
		       __u64 start, const struct key_note *key)
{
	struct row_key k = {};
	struct row *r;

	if (VMEXIT_EV_TYPE(ev->type) != VMEXIT_EV_EXIT &&
	    VMEXIT_EV_TYPE(ev->type) != VMEXIT_EV_USER_EXIT)
		return 0;
	k.tgid = by == BY_REASON ? 0 : ev->tgid;
	k.start = by == BY_REASON ? 0 : start;
	k.vcpu = by == BY_VCPU ? ev->vcpu : -1;
	k.isa = ev->isa;
	k.reason = ev->reason;
	k.key = *key;
	r = row_table_get(rt, &k);
	if (!r)
		return -ENOMEM;
	/* Seen, as stat counts it; an exit still in flight has no latency yet (its age is not). */
	r->count++;
	if (ev->type & VMEXIT_EV_IN_FLIGHT)
		return 0;
	r->completed++;
	r->total_ns += ev->latency_ns;
	r->oncpu_ns += ev->oncpu_ns;
	r->blocked_ns += ev->blocked_ns;
	r->runq_ns += ev->runq_ns;
	if (ev->latency_ns < r->min_ns)
		r->min_ns = ev->latency_ns;
	if (ev->latency_ns > r->max_ns)
		r->max_ns = ev->latency_ns;
	r->hist[hist_bucket(ev->latency_ns)]++;
	return 0;
}
