// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up probe (src/hooks.c): can this kernel run a BPF trampoline at the start of KVM_RUN?
 * Some kernels refuse fentry programs (lockdown, no DYNAMIC_FTRACE_WITH_DIRECT_CALLS, a
 * sandboxed host); only loading and attaching one tells.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("fentry/kvm_arch_vcpu_ioctl_run")
int BPF_PROG(probe_kvm_run_fentry)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
