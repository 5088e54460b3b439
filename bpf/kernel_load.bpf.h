/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A field of kvm_intel's or kvm_amd's vCPU read at its kernel address, two ways.
 *
 * bpf_probe_read_kernel() is a helper call: on the development host (6.18) a loop of them costs
 * 26 ns a read more than the loop alone, where a direct load costs 1. bpf_rdonly_cast() ("bpf:
 * Add a kfunc for generic type cast", Linux 6.2), which the verifier rewrites as a register
 * move, types an address so that a program may load from it; the load is a BPF_PROBE_MEM one,
 * which reads 0 where the address faults, as no live vCPU's field does. The kfunc types with
 * vmlinux's BTF only (its own), and vcpu_vmx and vcpu_svm are the modules': a vmlinux struct
 * whose first member has the field's size stands for the field (refcount_struct for 32 bits,
 * timespec64 for 64; src/kernel/hooks.c checks that this kernel has the kfunc and both).
 *
 * A program that may load on a kernel without the kfunc (6.1) must not reference it, even in
 * dead code (libbpf 1.1 leaves the call unresolved and the verifier refuses it): callers take a
 * direct flag that is a constant in each program, so the compiler drops the other branch
 * (kvm_exit_fast and kvm_exit_direct, bpf/vmexit.bpf.c).
 */
#ifndef VMEXIT_KERNEL_LOAD_BPF_H
#define VMEXIT_KERNEL_LOAD_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

static __always_inline __u32 kload_u32(const void *at)
{
	const struct refcount_struct *r =
		bpf_rdonly_cast(at, bpf_core_type_id_kernel(struct refcount_struct));

	return (__u32)r->refs.counter;
}

static __always_inline __u64 kload_u64(const void *at)
{
	const struct timespec64 *t =
		bpf_rdonly_cast(at, bpf_core_type_id_kernel(struct timespec64));

	return (__u64)t->tv_sec;
}

/* *out from at, by a direct load or a helper call; false: the helper could not read it. */
static __always_inline bool kread_u32(const void *at, __u32 *out, bool direct)
{
	if (direct) {
		*out = kload_u32(at);
		return true;
	}
	return !bpf_probe_read_kernel(out, sizeof(*out), at);
}

static __always_inline bool kread_u64(const void *at, __u64 *out, bool direct)
{
	if (direct) {
		*out = kload_u64(at);
		return true;
	}
	return !bpf_probe_read_kernel(out, sizeof(*out), at);
}

#endif /* VMEXIT_KERNEL_LOAD_BPF_H */
