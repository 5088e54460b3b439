/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading a kvm_exit: from the classic tracepoint's record, or, on the fast path, from the raw
 * tracepoint's arguments and the vCPU they point to. Shared by the programs of vmexit.bpf.c and
 * by the start-up check of hook_check.bpf.c, which runs both on the same exits and compares.
 */
#ifndef VMEXIT_EXIT_READ_BPF_H
#define VMEXIT_EXIT_READ_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "vmexit.h"
#include "kernel_load.bpf.h"

/* enum vmexit_exit_shape: the raw prototype, which src/hooks.c reads from the kernel's BTF. */
const volatile __u32 raw_exit_shape = EXIT_SHAPE_NONE;

struct exit_info {
	__u32 isa;
	__u32 reason;
	__s32 vcpu;		/* -1 when the kernel does not say */
	__u32 intr_info;
	__u32 error_code;
	__u32 leaf;		/* a CPUID exit's leaf, when has_leaf (--by key, bpf/keys.bpf.h) */
	__u64 rip;
	__u64 info1;
	__u64 info2;
	bool has_leaf;
};

/*
 * The x86 record (arch/x86/kvm/trace.h). exit_reason, guest_rip, isa, info1 and info2 are far
 * older than BTF; they are checked anyway, so that a layout missing one still loads. info is
 * false when only the reason is wanted (no stream).
 */
static __always_inline void kvm_exit_x86(struct trace_event_raw_kvm_exit *ctx, struct exit_info *x,
					 bool info)
{
	/* isa, guest_rip, info1 and info2 are as old as BTF itself: no shim needed. */
	x->isa = ctx->isa;
	x->reason = ctx->exit_reason;
	x->rip = ctx->guest_rip;
	/* vcpu_id joined kvm_exit in Linux 5.4 ("KVM: X86: Trace vcpu_id for vmexit"). */
	if (bpf_core_field_exists(ctx->vcpu_id))
		x->vcpu = ctx->vcpu_id;
	if (info) {
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
	x->reason = vmexit_arm64_reason(ctx->ret, ctx->esr_ec);
	x->rip = ctx->vcpu_pc;
}

/*
 * One reader for both layouts: the bpf_core_field_exists() checks are constants once libbpf
 * has relocated them against the running kernel, so the verifier drops the other layout's
 * branch (and the poisoned accesses libbpf left in it). x86 is told by exit_reason: the arm64
 * record never had one in a kernel with BTF.
 */
static __always_inline void classic_exit_read(struct trace_event_raw_kvm_exit *ctx,
					      struct exit_info *x, bool info)
{
	if (bpf_core_field_exists(ctx->exit_reason))
		kvm_exit_x86(ctx, x, info);
	else if (bpf_core_field_exists(((struct trace_event_raw_kvm_exit___arm64 *)ctx)->esr_ec))
		kvm_exit_arm64((void *)ctx, x);
}

/*
 * The reason the classic record would hold, read where the kernel keeps it: what
 * get_exit_info() returns, vmx->exit_reason.full and svm->vmcb->control.exit_code. false when
 * this kernel's types have neither (the start-up check then refuses the fast path). direct: by
 * loads, not helper calls (bpf/kernel_load.bpf.h), a constant in each program.
 */
static __always_inline bool vcpu_exit_reason(struct kvm_vcpu *vcpu, __u32 isa, __u32 *reason,
					     bool direct)
{
	/* Each module's types exist only while it is loaded: test before any relocation. */
	if (isa == VMEXIT_ISA_VMX && bpf_core_type_exists(struct vcpu_vmx)) {
		struct vcpu_vmx *vmx = (void *)vcpu - bpf_core_field_offset(struct vcpu_vmx, vcpu);

		/*
		 * "KVM: VMX: Move common fields of struct vcpu_{vmx,tdx} to a struct" (the TDX
		 * preparation, Linux 6.16) moved exit_reason into vmx->vt.
		 */
		if (bpf_core_field_exists(vmx->vt))
			return kread_u32(__builtin_preserve_access_index(&vmx->vt.exit_reason.full),
					 reason, direct);
		if (bpf_core_field_exists(vmx->exit_reason))
			return kread_u32(__builtin_preserve_access_index(&vmx->exit_reason.full),
					 reason, direct);
		return false;
	}
	if (isa == VMEXIT_ISA_SVM && bpf_core_type_exists(struct vcpu_svm)) {
		struct vcpu_svm *svm = (void *)vcpu - bpf_core_field_offset(struct vcpu_svm, vcpu);
		struct vmcb *vmcb;
		__u64 at;

		if (!bpf_core_field_exists(svm->vmcb) ||
		    !kread_u64(__builtin_preserve_access_index(&svm->vmcb), &at, direct) || !at)
			return false;
		vmcb = (struct vmcb *)at;
		/*
		 * The low 32 bits, which is what get_exit_info() hands the record, are at the
		 * field's start on little-endian x86 whether exit_code is a u32 (with exit_code_hi
		 * after it) or one u64.
		 */
		return kread_u32(__builtin_preserve_access_index(&vmcb->control.exit_code), reason,
				 direct);
	}
	return false;
}

/*
 * The guest RIP the classic record holds (kvm_rip_read()), read where SVM keeps it: the VMCB's
 * save area, which svm_vcpu_run() copies into the vCPU's register cache before it traces
 * kvm_exit. VMX reads the RIP lazily, a VMREAD the record's kvm_rip_read() makes: a BPF
 * program cannot, and KVM has not cached it at kvm_exit for any exit reason (6.1 and 6.12:
 * vmx_register_cache_reset() clears VCPU_REGS_RIP's bit after the VM exit, and nothing before
 * trace_kvm_exit() reads the RIP; the first reader is the exit's handler, after kvm_exit), so
 * --by rip on VMX keeps the classic tracepoint (src/kernel/session.c).
 * An SEV-ES guest's save area is encrypted: the start-up check, which compares the RIPs
 * with --by rip, refuses the fast path there.
 */
static __always_inline bool vcpu_exit_rip(struct kvm_vcpu *vcpu, __u32 isa, __u64 *rip,
					  bool direct)
{
	if (isa == VMEXIT_ISA_SVM && bpf_core_type_exists(struct vcpu_svm)) {
		struct vcpu_svm *svm = (void *)vcpu - bpf_core_field_offset(struct vcpu_svm, vcpu);
		struct vmcb *vmcb;
		__u64 at;

		if (!bpf_core_field_exists(svm->vmcb) || !bpf_core_field_exists(struct vmcb, save) ||
		    !kread_u64(__builtin_preserve_access_index(&svm->vmcb), &at, direct) || !at)
			return false;
		vmcb = (struct vmcb *)at;
		return kread_u64(__builtin_preserve_access_index(&vmcb->save.rip), rip, direct);
	}
	return false;
}

/* The vCPU a raw kvm_exit's arguments point to; NULL where there is none (arm64). */
static __always_inline struct kvm_vcpu *raw_exit_vcpu(__u64 *ctx)
{
	switch (raw_exit_shape) {
	case EXIT_SHAPE_VCPU_ISA:
		return (struct kvm_vcpu *)ctx[0];
	case EXIT_SHAPE_REASON_VCPU_ISA:
		return (struct kvm_vcpu *)ctx[1];
	}
	return NULL;
}

/*
 * The raw tracepoint's arguments (the BPF context is the prototype's arguments after the
 * tracepoint's own data pointer, one u64 each). Each shape reads only its own slots: the
 * verifier checks context reads against the running kernel's prototype, and raw_exit_shape is
 * a constant by then, so the other shapes' reads are dead code. Some kernels (Debian's 6.12)
 * type pointer arguments of raw tracepoints as maybe-NULL ("bpf: Mark raw_tp arguments with
 * PTR_MAYBE_NULL"): the vCPU is tested first. false: no reason readable (never with direct
 * loads, which read 0 where a helper call would fail: bpf/kernel_load.bpf.h). The vCPU id is read
 * only when want_vcpu: a thread runs its vCPU for its life (each QEMU vCPU has its thread), so
 * the handlers read it once per thread (ts->vcpu) rather than once per exit. The RIP only when
 * want_rip (--by rip); arm64's is an argument. direct: vcpu_exit_reason()'s.
 */
static __always_inline bool raw_exit_read(__u64 *ctx, struct exit_info *x, bool want_vcpu,
					 bool want_rip, bool direct)
{
	struct kvm_vcpu *vcpu;

	switch (raw_exit_shape) {
	case EXIT_SHAPE_VCPU_ISA:
		/*
		 * "KVM: x86: Get exit_reason as part of kvm_x86_ops.get_exit_info" (Linux 5.16)
		 * dropped exit_reason from the arguments: the tracepoint reads it from the vCPU.
		 */
		vcpu = (struct kvm_vcpu *)ctx[0];
		x->isa = (__u32)ctx[1];
		if (!vcpu)
			return false;
		if (want_vcpu)
			x->vcpu = vcpu->vcpu_id;
		if (want_rip && !vcpu_exit_rip(vcpu, x->isa, &x->rip, direct))
			return false;
		return vcpu_exit_reason(vcpu, x->isa, &x->reason, direct);
	case EXIT_SHAPE_REASON_VCPU_ISA:
		vcpu = (struct kvm_vcpu *)ctx[1];
		x->reason = (__u32)ctx[0];
		x->isa = (__u32)ctx[2];
		if (!vcpu)
			return false;
		if (want_vcpu)
			x->vcpu = vcpu->vcpu_id;
		return !want_rip || vcpu_exit_rip(vcpu, x->isa, &x->rip, direct);
	case EXIT_SHAPE_ARM64:
		/* The record keeps ARM_EXCEPTION_CODE(ret): the SError-pending bit 31 cleared. */
		x->isa = VMEXIT_ISA_ARM64;
		x->reason = vmexit_arm64_reason((__u32)ctx[0] & ~(1u << 31), (__u32)ctx[1]);
		x->rip = ctx[2];
		return true;
	}
	return false;
}

#endif /* VMEXIT_EXIT_READ_BPF_H */
