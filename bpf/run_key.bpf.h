/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by key: the key of an IO, MMIO or MSR exit to the VMM, read from the vCPU's kvm_run at the
 * KVM_RUN that ends it (issue 33). KVM writes kvm_run when it exits to the VMM and reads it
 * back only once the next KVM_RUN is under way: at that KVM_RUN's hook its exit_reason and its
 * io / mmio / msr members are still the ones the VMM was handed. They name the exit as the key
 * events do: the port and direction that emulator_pio_in_out() traces as kvm_pio and puts in
 * kvm_run.io, the address of the access that kvm_mmio traces (READ_UNSATISFIED or WRITE) and
 * that KVM puts in kvm_run.mmio when no device in the kernel took it, the MSR's index (which
 * kvm_msr never traces for an MSR handed to the VMM: its key event could only be an older
 * access's). Read here:
 *  - an IN is named at once, where kvm_pio names it only at its completion, after this
 *    KVM_RUN began: no exit waits for its key (keys.bpf.h key_settle());
 *  - the key programs but kvm_hypercall's skip their thread-state lookup (with create) while
 *    no kvm_exit has been seen: then no guest exit is in flight for them to key, and the exits
 *    to the VMM they would have keyed take their key from here (key_events_needed());
 *  - the CPU's user half ends a keyed exit to the VMM without the thread's state
 *    (cpu_exit_slot.bpf.h cpu_slot_run_keyed()).
 * Which vCPU: fentry's argument, or, on kvm_fpu's BTF-enabled tracepoint, the one whose preempt
 * notifier is on the current task (run_vcpu_running()); its kvm_run is read afresh at each
 * KVM_RUN (a vCPU freed and another allocated at its address has another kvm_run).
 * src/kernel/session.c turns this on for --by key where the KVM_RUN hook has it; a KVM_RUN that
 * ends an exit and finds no vCPU sets run_key_lost, and the key events name exits again.
 *
 * A VMM can write kvm_run, which is mapped into it: one that rewrote exit_reason leaves its
 * exit keyless (checked against the exit's own reason), one that rewrote the port names its
 * own exits wrongly, as it could by asking KVM for other ports. A hypercall exit to the VMM
 * keeps its key event, which KVM traces right before it (kvm_hypercall, kvm_hvc_arm64).
 */
#ifndef VMEXIT_RUN_KEY_BPF_H
#define VMEXIT_RUN_KEY_BPF_H

#include "key_rules.h"

const volatile bool run_key_enabled = false;

/* Set by the first kvm_exit of a keyed session (exit_start()): from then on guest exits are in
 * flight for the key events to describe. */
bool kvm_exit_seen;
/* Set when a KVM_RUN that ends an exit did not find its vCPU (handle_kvm_run()): the key
 * events name exits again (key_events_needed()), an exit whose kvm_run is not known takes the
 * thread's key (uexit_key_of()), and exits to the VMM begin through the thread's state, which
 * sets that key (cpu_slot_user_exit()). */
bool run_key_lost;

#define KVM_EXIT_IO_OUT		1	/* kvm_run.io.direction */

/*
 * The head of struct kvm_run, the same on every architecture and fixed by the UAPI (offsets
 * are ABI: a VMM compiled against any kernel's header reads them there): the exit's reason at
 * 8, the exit's union from 32, whose io, mmio and msr members are laid out below. One read of
 * 56 bytes, where CO-RE would cost one per member: the read at each KVM_RUN is most of what
 * this costs.
 */
struct run_head {
	__u8 request_interrupt_window;
	__u8 immediate_exit;
	__u8 padding1[6];
	__u32 exit_reason;
	__u8 ready_for_interrupt_injection;
	__u8 if_flag;
	__u16 flags;
	__u64 cr8;
	__u64 apic_base;
	union {
		struct {
			__u8 direction;
			__u8 size;
			__u16 port;
			__u32 count;
			__u64 data_offset;
		} io;
		struct {
			__u64 phys_addr;
			__u8 data[8];
			__u32 len;
			__u8 is_write;
		} mmio;
		struct {
			__u8 error;
			__u8 pad[7];
			__u32 reason;
			__u32 index;
			__u64 data;
		} msr;	/* "KVM: x86: Allow deflecting unknown MSR accesses to user space" (5.10) */
	};
};
_Static_assert(sizeof(struct run_head) == 56, "struct run_head: kvm_run's first 56 bytes");

/* The exits to the VMM whose key kvm_run gives. */
static __always_inline bool run_key_reason(__u32 reason)
{
	return reason == KEY_KVM_EXIT_IO || reason == KEY_KVM_EXIT_MMIO ||
	       reason == KEY_KVM_EXIT_X86_RDMSR || reason == KEY_KVM_EXIT_X86_WRMSR;
}

/* Whether a key event of this kind can describe any exit (see above); kind is a constant in
 * each key program, so the test folds. */
static __always_inline bool key_events_needed(__u16 kind)
{
	return !run_key_enabled || kvm_exit_seen || run_key_lost || kind == KEY_HYPERCALL;
}

/*
 * The vCPU of the KVM_RUN whose kvm_fpu load runs now, as a candidate; 0 where there is none.
 * KVM's per-CPU kvm_running_vcpu would say it, but a kernel without CONFIG_KALLSYMS_ALL (this
 * project's development host) cannot resolve a variable for BPF. kvm_arch_vcpu_ioctl_run()
 * calls vcpu_load(), which registers the vCPU's preempt notifier at the head of the task's
 * list (preempt_notifier_register(), hlist_add_head()), right before kvm_load_guest_fpu().
 * Only KVM registers preempt notifiers in the kernel, but run_vcpu_valid() makes sure before
 * the thread's state keeps it; the CPU's user half takes only the vCPU kept there.
 */
static __always_inline __u64 run_vcpu_running(void)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct hlist_node *first;

	if (!run_key_enabled)
		return 0;
	first = t->preempt_notifiers.first;
	if (!first)
		return 0;
	return (__u64)first - bpf_core_field_offset(struct kvm_vcpu, preempt_notifier) -
	       bpf_core_field_offset(struct preempt_notifier, link);
}

#ifndef RUN_VCPU_VALID
/* Whether run_vcpu_running()'s candidate is the KVM_RUN's vCPU: kvm_vcpu_ioctl() made its pid
 * the task's for KVM_RUN, before kvm_arch_vcpu_ioctl_run(). */
static __always_inline bool run_vcpu_valid(__u64 vcpu)
{
	return BPF_CORE_READ((struct kvm_vcpu *)vcpu, pid) ==
	       bpf_get_current_task_btf()->thread_pid;
}

/* vcpu's kvm_run, which is vcpu's for its life. */
static __always_inline __u64 run_of_vcpu(__u64 vcpu)
{
	return vcpu ? (__u64)BPF_CORE_READ((struct kvm_vcpu *)vcpu, run) : 0;
}
#else
#define run_vcpu_valid RUN_VCPU_VALID
#define run_of_vcpu(vcpu) (vcpu)
#endif

#ifndef RUN_KEY_READ
/* The key of the exit to the VMM of this reason that kvm_run (run) holds; false when kvm_run
 * says another reason or cannot be read. */
static __always_inline bool run_key_read(__u64 run, __u32 reason, struct key_note *k)
{
	struct run_head h;

	if (!run || bpf_probe_read_kernel(&h, sizeof(h), (void *)run) || h.exit_reason != reason)
		return false;
	*k = (struct key_note){};
	if (reason == KEY_KVM_EXIT_IO) {
		k->kind = KEY_PORT;
		k->dir = h.io.direction == KVM_EXIT_IO_OUT ? KEY_DIR_OUT : KEY_DIR_IN;
		k->key = h.io.port;
	} else if (reason == KEY_KVM_EXIT_MMIO) {
		k->kind = KEY_MMIO;
		k->dir = h.mmio.is_write ? KEY_DIR_WRITE : KEY_DIR_READ;
		k->key = h.mmio.phys_addr;
	} else {
		k->kind = KEY_MSR;
		k->dir = reason == KEY_KVM_EXIT_X86_WRMSR ? KEY_DIR_WRITE : KEY_DIR_READ;
		k->key = h.msr.index;
	}
	return true;
}
#else
#define run_key_read RUN_KEY_READ
#endif

#endif /* VMEXIT_RUN_KEY_BPF_H */
