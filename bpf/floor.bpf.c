// SPDX-License-Identifier: GPL-2.0
/*
 * The floor vmexit's cost is measured against: empty programs on the hooks vmexit attaches,
 * which every BPF tool on those hooks pays for (dispatch, a cold program). bench/floor_progs.c
 * loads the ones asked for; none is autoloaded. Each returns what vmexit's program on the same
 * hook returns (tracepoints 1: perf users keep their events).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define EMPTY_PROG(sec, name, ret)	SEC("?" sec) int name(void *ctx) { return ret; }

/* kvm_exit and kvm_entry: the fast path's raw tracepoints and the classic ones. */
EMPTY_PROG("tp_btf/kvm_exit", floor_exit_fast, 1)
EMPTY_PROG("tp_btf/kvm_entry", floor_entry_fast, 1)
EMPTY_PROG("tp/kvm/kvm_exit", floor_exit, 1)
EMPTY_PROG("tp/kvm/kvm_entry", floor_entry, 1)
/* kvm_userspace_exit: the BTF-enabled tracepoint, or the classic one (as src/kernel/hooks.c). */
EMPTY_PROG("tp_btf/kvm_userspace_exit", floor_user_exit_btf, 1)
EMPTY_PROG("tp/kvm/kvm_userspace_exit", floor_user_exit, 1)
/* The KVM_RUN hooks, as src/hooks.c chooses one: a trampoline, kvm_fpu (BTF-enabled or
 * classic), the ioctl syscall. */
EMPTY_PROG("fentry/kvm_arch_vcpu_ioctl_run", floor_run_fentry, 0)
EMPTY_PROG("tp_btf/kvm_fpu", floor_run_fpu_btf, 1)
EMPTY_PROG("tp/kvm/kvm_fpu", floor_run_fpu, 1)
EMPTY_PROG("tp/syscalls/sys_enter_ioctl", floor_run_ioctl, 1)
/*
 * --wake's hooks, one each as bpf/wake.bpf.c attaches them (its own kvm_entry and kvm_exit
 * beside the exit programs'): what per-delivery tracking costs before it does anything.
 */
EMPTY_PROG("tp_btf/kvm_entry", floor_wake_entry, 0)
EMPTY_PROG("tp_btf/kvm_exit", floor_wake_exit, 0)
EMPTY_PROG("tp_btf/kvm_vcpu_wakeup", floor_wake_halt_end, 0)
EMPTY_PROG("tp_btf/kvm_apic_ipi", floor_wake_ipi, 0)
EMPTY_PROG("tp_btf/kvm_msi_set_irq", floor_wake_msi, 0)
EMPTY_PROG("tp_btf/kvm_ioapic_set_irq", floor_wake_ioapic, 0)
EMPTY_PROG("tp_btf/kvm_set_irq", floor_wake_set_irq, 0)
EMPTY_PROG("tp_btf/kvm_apic_accept_irq", floor_wake_accept, 0)
EMPTY_PROG("tp_btf/hrtimer_expire_entry", floor_wake_timer, 0)
EMPTY_PROG("tp_btf/sched_switch", floor_wake_switch, 0)
EMPTY_PROG("tp_btf/sched_wakeup", floor_wake_wakeup, 0)
EMPTY_PROG("tp_btf/sched_process_exit", floor_wake_thread_end, 0)

char LICENSE[] SEC("license") = "GPL";
