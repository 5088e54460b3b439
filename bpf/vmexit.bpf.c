// SPDX-License-Identifier: GPL-2.0
/* vmexit: in-kernel aggregation of KVM exits. The logic is in handlers.bpf.h. */
#include "handlers.bpf.h"
#include <bpf/bpf_tracing.h>

#define KVM_RUN_IOCTL	0xae80	/* _IO(KVMIO, 0x80) */

/*
 * Every program returns 1: for a tracepoint, perf_trace_run_bpf_submit() drops the event for
 * all perf users of that tracepoint (perf stat, perf record, kvm_stat) when an attached BPF
 * program returns 0.
 */
#define TP_PASS		1

/*
 * The x86 record (arch/x86/kvm/trace.h). exit_reason, guest_rip, isa, info1 and info2 are far
 * older than BTF; they are checked anyway, so that a layout missing one still loads.
 */
static __always_inline void kvm_exit_x86(struct trace_event_raw_kvm_exit *ctx, struct exit_info *x)
{
	/* isa, guest_rip, info1 and info2 are as old as BTF itself: no shim needed. */
	x->isa = ctx->isa;
	x->reason = ctx->exit_reason;
	x->rip = ctx->guest_rip;
	/* vcpu_id joined kvm_exit in Linux 5.4 ("KVM: X86: Trace vcpu_id for vmexit"). */
	if (bpf_core_field_exists(ctx->vcpu_id))
		x->vcpu = ctx->vcpu_id;
	if (stream_enabled) {
		x->info1 = ctx->info1;
		x->info2 = ctx->info2;
		/*
		 * intr_info and error_code joined kvm_exit with "KVM: x86: Add intr/vectoring
		 * info and error code to kvm_exit tracepoint" (Linux 5.10); before, they are 0.
		 */
		if (bpf_core_field_exists(ctx->intr_info))
			x->intr_info = ctx->intr_info;
		if (bpf_core_field_exists(ctx->error_code))
			x->error_code = ctx->error_code;
	}
}

/*
 * The arm64 record: int ret (ARM_EXCEPTION_CODE(), the SError-pending bit already cleared),
 * unsigned int esr_ec (0 unless ret is ARM_EXCEPTION_TRAP), unsigned long vcpu_pc. The layout
 * of virt/kvm/arm/trace.h, moved unchanged to arch/arm64/kvm/trace_arm.h by "KVM: arm64: Move
 * virt/kvm/arm to arch/arm64" (Linux 5.8). The reason encoding is in include/vmexit.h.
 */
static __always_inline void kvm_exit_arm64(struct trace_event_raw_kvm_exit___arm64 *ctx,
					   struct exit_info *x)
{
	x->isa = VMEXIT_ISA_ARM64;
	x->reason = arm64_exit_reason(ctx->ret, ctx->esr_ec);
	x->rip = ctx->vcpu_pc;
}

/*
 * One program for both layouts: the bpf_core_field_exists() checks are constants once libbpf
 * has relocated them against the running kernel, so the verifier drops the other layout's
 * branch (and the poisoned accesses libbpf left in it) and the hot path is what it was. x86 is
 * told by exit_reason: the arm64 record never had one in a kernel with BTF.
 */
SEC("tp/kvm/kvm_exit")
int kvm_exit(struct trace_event_raw_kvm_exit *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();
	struct exit_info x = { .vcpu = -1 };

	if (bpf_core_field_exists(ctx->exit_reason))
		kvm_exit_x86(ctx, &x);
	else if (bpf_core_field_exists(((struct trace_event_raw_kvm_exit___arm64 *)ctx)->esr_ec))
		kvm_exit_arm64((void *)ctx, &x);
	handle_kvm_exit(now, id >> 32, (__u32)id, &x);
	return TP_PASS;
}

SEC("tp/kvm/kvm_entry")
int kvm_entry(void *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();

	handle_kvm_entry(now, id >> 32, (__u32)id);
	return TP_PASS;
}

SEC("tp/kvm/kvm_userspace_exit")
int kvm_userspace_exit(struct trace_event_raw_kvm_userspace_exit *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();

	handle_user_exit(now, id >> 32, (__u32)id, ctx->reason, ctx->errno);
	return TP_PASS;
}

/*
 * The start of the thread's next KVM_RUN ends its userspace exit. Three hooks can tell it;
 * src/hooks.c loads exactly one, the first this kernel offers, and docs/design.md says where
 * each one starts the clock. None of them is autoloaded.
 */

/* A BPF trampoline on the arch run function: once per KVM_RUN, on every architecture. */
SEC("?fentry/kvm_arch_vcpu_ioctl_run")
int BPF_PROG(kvm_run_fentry)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();

	handle_kvm_run(now, id >> 32, (__u32)id);
	return 0;
}

/*
 * x86 loads the guest FPU state right after vcpu_load() at the start of every KVM_RUN
 * (kvm_load_guest_fpu() in kvm_arch_vcpu_ioctl_run()) and puts it back at the end: the load
 * ends the exit, the put (load == 0) is ignored. Only vCPU threads ever get here.
 */
SEC("?tp/kvm/kvm_fpu")
int kvm_run_fpu(struct trace_event_raw_kvm_fpu *ctx)
{
	__u64 now, id;

	if (!ctx->load)
		return TP_PASS;
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_run(now, id >> 32, (__u32)id);
	return TP_PASS;
}

/*
 * Last resort (arm64 without trampolines): the syscall tracepoint turns on syscall tracing
 * for every task on the host, so every syscall of every process pays for it.
 */
SEC("?tp/syscalls/sys_enter_ioctl")
int kvm_run_ioctl(struct syscall_trace_enter *ctx)
{
	__u64 now, id;

	/* Every ioctl on the host passes here: leave before any lookup unless it is KVM_RUN. */
	if (ctx->args[1] != KVM_RUN_IOCTL)
		return TP_PASS;
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_run(now, id >> 32, (__u32)id);
	return TP_PASS;
}

SEC("tp/kvm/kvm_write_tsc_offset")
int kvm_write_tsc_offset(struct trace_event_raw_kvm_write_tsc_offset *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	handle_tsc_offset(bpf_ktime_get_ns(), id >> 32, (__u32)id, ctx->vcpu_id,
			  ctx->previous_tsc_offset, ctx->next_tsc_offset);
	return TP_PASS;
}

/*
 * The other kvm tracepoints, one program each, loaded only for the events --kvm-events names
 * ("?": not autoloaded), so that a stream without them costs nothing and a kernel lacking one
 * of them loses only that one.
 */
#define KVM_EVENT_PROG(name)							\
SEC("?tp/kvm/kvm_" #name)							\
int kvm_##name(struct trace_event_raw_kvm_##name *ctx)				\
{										\
	struct kvm_ev k = { .vcpu = -1 };					\
	__u64 id = bpf_get_current_pid_tgid();					\
										\
	kvm_##name##_decode(ctx, &k);						\
	handle_kvm_event(bpf_ktime_get_ns(), id >> 32, (__u32)id, &k);		\
	return TP_PASS;								\
}

KVM_EVENT_PROG(pio)
KVM_EVENT_PROG(mmio)
KVM_EVENT_PROG(msr)
KVM_EVENT_PROG(cpuid)
KVM_EVENT_PROG(inj_virq)
KVM_EVENT_PROG(page_fault)

/*
 * The tracepoint's own pid fields are thread ids and it fires for new threads too: with the
 * task pointers, follow only new processes, from whichever thread of a traced one forked.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->pid == child->tgid)
		handle_fork(parent->tgid, child->tgid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
