// SPDX-License-Identifier: GPL-2.0
#include "proc_names.h"
#include "vcpu_cache.h"

__s32 vcpu_cache_resolve(struct vcpu_cache *c, struct vmexit_event *ev, __u64 start)
{
	struct thread_vcpu_key k = { .tgid = ev->tgid, .tid = ev->tid, .start = start };
	struct thread_vcpu *e;
	bool added;

	/* tid 0 is the idle task, never a vCPU */
	if (!ev->tid)
		return ev->vcpu;
	e = thread_vcpus_get(&c->by_thread, &k, &added);
	if (!e)
		return ev->vcpu;	/* no memory: the event keeps what the kernel said */
	if (added) {
		e->vcpu = ev->vcpu;
		e->from_kernel = ev->vcpu >= 0;
		/* Looked up once per thread: /proc reads are far too slow for every event. */
		if (e->vcpu < 0 && c->lookup)
			e->vcpu = c->lookup(c->lookup_ctx, ev);
		if (e->vcpu < 0 && c->use_proc)
			e->vcpu = vcpu_for_thread((int)ev->tgid, (int)ev->tid);
	} else if (ev->vcpu >= 0 && (!e->from_kernel || e->vcpu != ev->vcpu)) {
		e->vcpu = ev->vcpu;
		e->from_kernel = true;
	}
	if (ev->vcpu < 0)
		ev->vcpu = e->vcpu;
	return ev->vcpu;
}

void vcpu_cache_free(struct vcpu_cache *c)
{
	thread_vcpus_free(&c->by_thread);
}
