// SPDX-License-Identifier: GPL-2.0
/*
 * The floor vmexit's cost is measured against: empty programs on the hooks vmexit attaches,
 * which every BPF tool on those hooks pays for (dispatch, a cold program). bench/floor_progs.c
 * loads the ones asked for; none is autoloaded. Each returns what vmexit's program on the same
 * hook returns (tracepoints 1: perf users keep their events).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("?tp_btf/kvm_exit")
int floor_exit_fast(void *ctx)
{
	return 1;
}

SEC("?tp_btf/kvm_entry")
int floor_entry_fast(void *ctx)
{
	return 1;
}

SEC("?tp/kvm/kvm_exit")
int floor_exit(void *ctx)
{
	return 1;
}

SEC("?tp/kvm/kvm_entry")
int floor_entry(void *ctx)
{
	return 1;
}

SEC("?tp/kvm/kvm_userspace_exit")
int floor_user_exit(void *ctx)
{
	return 1;
}

/* The KVM_RUN hooks, as src/hooks.c chooses one: a trampoline, kvm_fpu, the ioctl syscall. */
SEC("?fentry/kvm_arch_vcpu_ioctl_run")
int floor_run_fentry(void *ctx)
{
	return 0;
}

SEC("?tp/kvm/kvm_fpu")
int floor_run_fpu(void *ctx)
{
	return 1;
}

SEC("?tp/syscalls/sys_enter_ioctl")
int floor_run_ioctl(void *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
