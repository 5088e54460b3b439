// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: stat --wake's bookkeeping (bpf/wake_common.bpf.h, the very inline code of
 * wake.bpf.c and wake_arm64.bpf.c) driven with hand-made exits, entries, halt ends and thread
 * ends through BPF_PROG_TEST_RUN; tests/bpf/test_bpf_wake.c loads this object (its tp_btf
 * programs not autoloaded: they need the kvm module's BTF) and checks the cells.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "wake.h"
#include "hist.h"
#include "../tests/bpf/wake_test.h"

/* Never dereferenced here: the vCPU's number is the pointer's offset (WAKE_TEST_VCPU_PTR). */
struct kvm_vcpu___wake {
	int vcpu_id;
};

struct hrtimer___wake {
	void *function;
} __attribute__((preserve_access_index));

#define PEND_SRC_SHIFT		8
#define PEND_STATE_SHIFT	12
#define PEND_VECTOR		0xff

static __always_inline __s32 wake_vcpu_index(struct kvm_vcpu___wake *vcpu)
{
	return (__s32)((__u64)vcpu - WAKE_TEST_VCPU_PTR(0));
}

/* The vCPU's thread as the architectures keep it; no guest timer to watch. */
#define WAKE_VCPU_TRACK(t, tid, vk, vcpu)						\
	bpf_map_update_elem(&wake_vcpus, &(vk), &(tid), BPF_ANY)

#include "wake_common.bpf.h"

SEC("syscall")
int run_wake(struct wake_test_ctx *c)
{
	__u64 id = c->tgid << 32 | (__u32)c->tid;
	struct kvm_vcpu___wake *vcpu = (void *)WAKE_TEST_VCPU_PTR(c->vcpu);

	switch (c->op) {
	case WT_EXIT:
		return wake_vcpu_exit(id, vcpu);
	case WT_ENTRY:
		return wake_vcpu_entry(id, vcpu);
	case WT_HALT_END:
		return halt_end((__u32)c->tid, bpf_ktime_get_ns(), c->ns, c->waited, c->valid);
	case WT_THREAD_END:
		return thread_end((__u32)c->tid);
	}
	return -1;	/* an unknown op is a bug in the test */
}

char LICENSE[] SEC("license") = "GPL";
