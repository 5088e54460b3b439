// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "event_rows.h"
#include "hist.h"

bool event_filter_match(const struct event_filter *f, const struct vmexit_event *ev)
{
	bool found = !f->nr_pids;

	for (int i = 0; i < f->nr_pids && !found; i++)
		found = f->pids[i] == ev->tgid;
	if (!found)
		return false;
	if (f->vcpu >= 0 && ev->vcpu != f->vcpu)
		return false;
	/* Not exits: the kernel applies neither the reason nor the latency filter to them. */
	if (VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_TSC_OFFSET ||
	    VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_KVM_EVENT)
		return true;
	if (ev->latency_ns < f->min_latency_ns)
		return false;
	found = !f->nr_reasons;
	for (int i = 0; i < f->nr_reasons && !found; i++)
		found = f->reasons[i].isa == ev->isa && f->reasons[i].reason == ev->reason;
	return found;
}

int event_rows_add(struct row_table *rt, enum group_by by, const struct vmexit_event *ev,
		   __u64 start)
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
