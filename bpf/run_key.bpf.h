/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by key where KVM traces no kvm_exit (run_keys, src/kernel/session.c says when): an exit to
 * the VMM takes its key from what KVM handed the VMM in kvm_run, read at the KVM_RUN that ends
 * it, with no program on kvm_pio, kvm_mmio or kvm_hypercall. Elsewhere an IO exit's key is
 * its kvm_pio; where no kvm_exit fires, an IN's port comes only with its completion, in the
 * next KVM_RUN, so every such exit waited for that event through the thread's state (key_pio
 * and the waits cost --by key 1.6x plain stat's BPF time a user exit on such a host;
 * docs/design.md, "User exits (the development host)").
 *
 * The vCPU: vcpu_load(), before kvm_fpu's load at the start of every KVM_RUN, registers the
 * vCPU's preempt notifier at the head of its task's list (preempt_notifier_register()), and
 * only KVM registers one on a vCPU thread; checked by the vCPU's pid all the same.
 * bpf_rdonly_cast() ("bpf: Add a kfunc for generic type cast", Linux 6.2) types it from the
 * list's node, which needs struct kvm_vcpu in vmlinux's BTF (Debian's 6.12 has it, KVM modular
 * or not); every load after it but the rare MSR's is a direct one, which faults to zero on a
 * bad address. Only the
 * program that calls it references the kfunc (kvm_run_fpu_keyed): 6.1, which has none, loads
 * the others. kvm_run's exit_reason is checked against the exit's reason (a failed KVM_RUN
 * leaves an older one there): another is charged to none. The VMM may write the page between
 * the exit and its KVM_RUN, as it may write anything of its own; no VMM rewrites an exit's
 * reason or port.
 */
#ifndef VMEXIT_RUN_KEY_BPF_H
#define VMEXIT_RUN_KEY_BPF_H

#include <bpf/bpf_core_read.h>
#include "kernel_load.bpf.h"

/* include/uapi/linux/kvm.h */
#define RUN_KEY_EXIT_IO		2
#define RUN_KEY_EXIT_HYPERCALL	3
#define RUN_KEY_EXIT_MMIO	6
#define RUN_KEY_EXIT_RDMSR	29
#define RUN_KEY_EXIT_WRMSR	30
#define RUN_KEY_IO_OUT		1

/* No vCPU found for the thread (run_key_read()): not any exit's reason. */
#define RUN_KEY_UNREAD		(~0u)

/* The exits to the VMM kvm_run has a key for: one read as none is counted (LOST_KEY_RUN). */
static __always_inline bool run_key_reason_keyed(__u32 reason)
{
	return reason == RUN_KEY_EXIT_IO || reason == RUN_KEY_EXIT_MMIO ||
	       reason == RUN_KEY_EXIT_HYPERCALL || reason == RUN_KEY_EXIT_RDMSR ||
	       reason == RUN_KEY_EXIT_WRMSR;
}

/* The test object names the key of its choosing (bpf/vmexit_test.bpf.c). */
#ifndef RUN_KEY_READ
/*
 * The last exit to the VMM of the current thread's vCPU, as kvm_run has it: its KVM_EXIT_*
 * reason, returned, and its key in k (none for a reason with no key); RUN_KEY_UNREAD, k left
 * as it was, when the thread's vCPU is not found.
 */
static __always_inline __u32 run_key_read(struct key_note *k)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct kvm_vcpu *v;
	struct kvm_run *run;
	__u32 reason;

	v = bpf_rdonly_cast((void *)t->preempt_notifiers.first -
			    bpf_core_field_offset(struct kvm_vcpu, preempt_notifier),
			    bpf_core_type_id_kernel(struct kvm_vcpu));
	if (v->pid != t->thread_pid)
		return RUN_KEY_UNREAD;
	run = v->run;
	reason = run->exit_reason;
	switch (reason) {
	case RUN_KEY_EXIT_IO:
		*k = (struct key_note){ .kind = KEY_PORT, .key = run->io.port,
					.dir = run->io.direction == RUN_KEY_IO_OUT ?
					       KEY_DIR_OUT : KEY_DIR_IN };
		break;
	case RUN_KEY_EXIT_MMIO:
		*k = (struct key_note){ .kind = KEY_MMIO, .key = run->mmio.phys_addr,
					.dir = run->mmio.is_write ? KEY_DIR_WRITE : KEY_DIR_READ };
		break;
	case RUN_KEY_EXIT_HYPERCALL:
		*k = (struct key_note){ .kind = KEY_HYPERCALL, .key = run->hypercall.nr };
		break;
	case RUN_KEY_EXIT_RDMSR:
	case RUN_KEY_EXIT_WRMSR:
		/* A helper's read, not a load: the verifier walks a union into its first member
		 * that spans the offset (fail_entry here), where msr.index is padding. */
		*k = (struct key_note){ .kind = KEY_MSR, .key = BPF_CORE_READ(run, msr.index),
					.dir = reason == RUN_KEY_EXIT_WRMSR ?
					       KEY_DIR_WRITE : KEY_DIR_READ };
		break;
	default:
		*k = (struct key_note){};
	}
	return reason;
}
#else
#define run_key_read RUN_KEY_READ
#endif

#endif /* VMEXIT_RUN_KEY_BPF_H */
