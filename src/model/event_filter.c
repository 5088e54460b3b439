// SPDX-License-Identifier: GPL-2.0
#include "event_filter.h"

bool event_filter_match(const struct event_filter *f, const struct vmexit_event *ev)
{
	bool found = !f->nr_pids;

	for (int i = 0; i < f->nr_pids && !found; i++)
		found = (__u32)f->pids[i] == ev->tgid;
	if (!found)
		return false;
	if (f->vcpu >= 0 && ev->vcpu != f->vcpu)
		return false;
	/* Not exits: the kernel applies neither the reason nor the latency filter to them. */
	if (VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_TSC_OFFSET ||
	    VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_KVM_EVENT ||
	    VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_WAKE ||
	    VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_WAKE_POSTED ||
	    VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_WAKE_UNTIMED ||
	    VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_HALT || VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_HLT)
		return true;
	if (ev->latency_ns < f->min_latency_ns)
		return false;
	found = !f->nr_reasons;
	for (int i = 0; i < f->nr_reasons && !found; i++)
		found = f->reasons[i].isa == ev->isa && f->reasons[i].reason == ev->reason;
	return found;
}
