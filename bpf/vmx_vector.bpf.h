/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interruption information of a VMX exit on the kvm_exit fast path (--by key's interrupt
 * vectors). The classic record has it because its get_exit_info() VMREADs it; a BPF program
 * cannot VMREAD, so it takes the copy KVM keeps: vmx_get_intr_info() stores the field in
 * vcpu_vmx.exit_intr_info and marks VCPU_EXREG_EXIT_INFO_2 available in vcpu->arch.regs_avail,
 * a bit vmx_register_cache_reset() clears at every exit, before kvm_exit.
 *
 * When KVM itself reads it (the bed kernels' kvm_intel, Debian's 6.1.192 and 6.12.117, read
 * in their sources and in their disassembly):
 * - EXCEPTION_NMI from 6.3 on: in vmx_vcpu_enter_exit(), before kvm_exit fires ("KVM: VMX:
 *   Handle NMI VM-Exits in noinstr region", Linux 6.3);
 * - EXCEPTION_NMI before 6.3, EXTERNAL_INTERRUPT always: in vmx_handle_exit_irqoff(), which
 *   vcpu_enter_guest() calls once kvm_x86_vcpu_run() (and kvm_exit with it) has returned, and
 *   before the vCPU enters again or returns to the VMM.
 * So the fast path reads it at kvm_exit when it is cached already, else when the exit ends
 * (kvm_entry, or the exit to the VMM it led to) from the vCPU kvm_exit pointed to. Its only
 * check is the one the fast path's exit reason has: the start-up check compares it with the
 * classic record's (bpf/hook_check.bpf.c).
 */
#ifndef VMEXIT_VMX_VECTOR_BPF_H
#define VMEXIT_VMX_VECTOR_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "vmexit.h"
#include "key_rules.h"
#include "kernel_load.bpf.h"

/* The exits whose key may be a vector (key_exit_vector(), include/key_rules.h). */
static __always_inline bool vmx_vector_exit(__u32 isa, __u32 reason)
{
	return isa == VMEXIT_ISA_VMX &&
	       (reason == KEY_VMX_EXTERNAL_INTERRUPT || reason == KEY_VMX_EXCEPTION_NMI);
}

/*
 * The exit's interruption information if KVM has read it since the exit: the cache bit set,
 * and vmx->exit_reason still this exit's reason (a later exit, or an emulated invalid-state
 * one, would have replaced it). false: not read yet, or no such fields in this kernel.
 * A nested VMCS switch (vmx_switch_vmcs()) marks the bit unavailable too: never a stale value.
 * direct: by loads, not helper calls (bpf/kernel_load.bpf.h), a constant in each program.
 */
static __always_inline bool vmx_cached_intr_info(struct kvm_vcpu *vcpu, __u32 reason, __u32 *info,
						 bool direct)
{
	struct vcpu_vmx *vmx;
	__u32 avail, cur;
	int bit;

	/* kvm_intel's types exist only while it is loaded: test before any relocation. */
	if (!vcpu || !bpf_core_type_exists(struct vcpu_vmx) ||
	    !bpf_core_field_exists(vcpu->arch.regs_avail) ||
	    !bpf_core_enum_value_exists(enum kvm_reg, VCPU_EXREG_EXIT_INFO_2))
		return false;
	bit = bpf_core_enum_value(enum kvm_reg, VCPU_EXREG_EXIT_INFO_2);
	/* regs_avail is a u32 (a bitmap of unsigned long in some trees): bit 24 is in its first
	 * four bytes on little-endian x86 either way. */
	if (bit < 0 || bit > 31 ||
	    !kread_u32(__builtin_preserve_access_index(&vcpu->arch.regs_avail), &avail, direct) ||
	    !(avail & (1u << bit)))
		return false;
	vmx = (void *)vcpu - bpf_core_field_offset(struct vcpu_vmx, vcpu);
	/*
	 * "KVM: VMX: Move common fields of struct vcpu_{vmx,tdx} to a struct" (Linux 6.16) moved
	 * exit_reason and exit_intr_info into vmx->vt.
	 */
	if (bpf_core_field_exists(vmx->vt.exit_intr_info)) {
		if (!kread_u32(__builtin_preserve_access_index(&vmx->vt.exit_reason.full), &cur,
			       direct) ||
		    !kread_u32(__builtin_preserve_access_index(&vmx->vt.exit_intr_info), info,
			       direct))
			return false;
	} else if (bpf_core_field_exists(vmx->exit_intr_info)) {
		if (!kread_u32(__builtin_preserve_access_index(&vmx->exit_reason.full), &cur,
			       direct) ||
		    !kread_u32(__builtin_preserve_access_index(&vmx->exit_intr_info), info, direct))
			return false;
	} else {
		return false;
	}
	return cur == reason;
}

#endif /* VMEXIT_VMX_VECTOR_BPF_H */
