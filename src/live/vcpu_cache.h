/* SPDX-License-Identifier: GPL-2.0 */
/* Which vCPU a thread runs, for the events whose vCPU the kernel could not tell. */
#ifndef VMEXIT_VCPU_CACHE_H
#define VMEXIT_VCPU_CACHE_H

#include <stdbool.h>
#include "hashmap.h"
#include "vmexit.h"

/*
 * Thread -> vCPU. Userspace exits before a thread's first kvm_exit carry vcpu -1 (and on hosts
 * where kvm_exit never fires, all of them do); the thread's vCPU is learnt from its other
 * events, else from lookup(), else (use_proc) from its name in /proc, as `vmexit stat` does.
 * A thread is its tid in its process (pid and start time, as rows key a guest): a tid reused
 * by another VMM's vCPU thread is another thread, with a vCPU of its own.
 */
struct thread_vcpu_key {
	__u32 tgid;
	__u32 tid;
	__u64 start;		/* the process's start time */
};

struct thread_vcpu {
	__s32 vcpu;
	bool from_kernel;	/* the kernel said so: never overridden by a thread name */
};

DEFINE_HASHMAP(thread_vcpus, struct thread_vcpu_key, struct thread_vcpu)

struct vcpu_cache {
	struct thread_vcpus by_thread;
	bool use_proc;
	/* Optional, asked before /proc: the vCPU of ev's thread from elsewhere (the kernel's
	 * cells keep the thread name after the thread is gone), or -1. Once per thread. */
	__s32 (*lookup)(void *ctx, const struct vmexit_event *ev);
	void *lookup_ctx;
};

/* Fills in ev->vcpu when it is -1 and the vCPU of ev's thread (of the process that started
 * at start) is known; returns ev->vcpu. */
__s32 vcpu_cache_resolve(struct vcpu_cache *c, struct vmexit_event *ev, __u64 start);
void vcpu_cache_free(struct vcpu_cache *c);

#endif /* VMEXIT_VCPU_CACHE_H */
