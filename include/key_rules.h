/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules that tie a key to an exit, shared by the kernel side (bpf/keys.bpf.h, live) and by
 * report's imports of other tools' captures (src/output/capture_import.c), so that a capture's
 * keys are the ones vmexit record --keys would have written. Plain C on fixed-size types: it
 * compiles as BPF and as userspace.
 */
#ifndef VMEXIT_KEY_RULES_H
#define VMEXIT_KEY_RULES_H

#include "vmexit.h"

#define KEY_VMX_EXCEPTION_NMI	0
#define KEY_VMX_EXTERNAL_INTERRUPT 1
#define KEY_SVM_EXIT_NMI	0x61
#define KEY_NMI_VECTOR		2
/* VMX interruption information: bits 7:0 the vector, 10:8 the type (2: NMI), 31 valid. */
#define KEY_INTR_VALID		(1u << 31)
#define KEY_INTR_TYPE_NMI	2

#define KEY_KVM_EXIT_IO		2
#define KEY_KVM_EXIT_HYPERCALL	3
#define KEY_KVM_EXIT_MMIO	6

/*
 * The vector of an external interrupt or NMI exit, from the exit itself; false for any other.
 * VMX gives it in the interruption information, which only the classic record has (the live
 * session uses the classic tracepoint for keys on VMX: see src/kernel/session.c). SVM's NMI
 * exit is always vector 2; its INTR exit carries no vector (the host takes the interrupt once
 * it re-enables them, after the exit): it stays keyless.
 */
static inline __attribute__((always_inline)) int key_exit_vector(__u32 isa, __u32 reason,
								 __u32 intr_info, __u64 *vector)
{
	if (isa == VMEXIT_ISA_SVM && reason == KEY_SVM_EXIT_NMI) {
		*vector = KEY_NMI_VECTOR;
		return 1;
	}
	if (isa != VMEXIT_ISA_VMX || !(intr_info & KEY_INTR_VALID))
		return 0;
	if (reason != KEY_VMX_EXTERNAL_INTERRUPT &&
	    !(reason == KEY_VMX_EXCEPTION_NMI && ((intr_info >> 8) & 7) == KEY_INTR_TYPE_NMI))
		return 0;
	*vector = intr_info & 0xff;
	return 1;
}

/*
 * arm64's stage-2 fault (kvm:kvm_guest_fault, traced by kvm_handle_guest_abort() for every
 * DABT_LOW / IABT_LOW exit, to RAM and to MMIO alike): its hsr field is the exit's ESR_EL2.
 * A data abort (EC 0x24) says write or read in WnR (bit 6, ISS of asm/esr.h); an instruction
 * abort is a fetch: a read.
 */
#define KEY_ESR_EC_SHIFT	26
#define KEY_ESR_EC_DABT_LOW	0x24
#define KEY_ESR_WNR		(1u << 6)

static inline __attribute__((always_inline)) __u16 key_arm64_fault_dir(__u64 esr)
{
	return ((esr >> KEY_ESR_EC_SHIFT) & 0x3f) == KEY_ESR_EC_DABT_LOW && (esr & KEY_ESR_WNR) ?
	       KEY_DIR_WRITE : KEY_DIR_READ;
}

/*
 * Whether a key of this kind can describe an exit to the VMM of this KVM_EXIT_* reason. Not an
 * MSR's (KVM_EXIT_X86_RDMSR/WRMSR): KVM hands an MSR to the VMM without tracing kvm_msr
 * (kvm_emulate_rdmsr()/wrmsr() and the emulator's MSR ops return once kvm_msr_user_space() has
 * filled kvm_run, before any trace_kvm_msr_*; 6.1 to 6.18), so a kvm_msr of the same KVM_RUN is
 * an older access the kernel handled, never this one: such an exit keeps the guest exit's key,
 * else none.
 */
static inline __attribute__((always_inline)) int key_fits_user_exit(__u32 kind, __u32 reason)
{
	switch (reason) {
	case KEY_KVM_EXIT_IO:
		return kind == KEY_PORT;
	case KEY_KVM_EXIT_MMIO:
		return kind == KEY_MMIO;
	case KEY_KVM_EXIT_HYPERCALL:
		return kind == KEY_HYPERCALL;
	}
	return 0;
}

/*
 * The CPUID exit: SVM's exit code and VMX's basic exit reason (bits 15:0). An SEV-ES guest's
 * CPUID exits as VMGEXIT (its GHCB or the GHCB MSR protocol, which calls the CPUID handler):
 * its guest state is encrypted, so KVM's emulator never runs for it, and a kvm_cpuid in its
 * VMGEXIT is the guest's own CPUID.
 */
#define KEY_SVM_EXIT_CPUID	0x72
#define KEY_SVM_EXIT_VMGEXIT	0x403
#define KEY_VMX_EXIT_CPUID	10

static inline __attribute__((always_inline)) int key_exit_is_cpuid(__u32 isa, __u32 reason)
{
	return (isa == VMEXIT_ISA_SVM &&
		(reason == KEY_SVM_EXIT_CPUID || reason == KEY_SVM_EXIT_VMGEXIT)) ||
	       (isa == VMEXIT_ISA_VMX && (reason & 0xffff) == KEY_VMX_EXIT_CPUID);
}

/*
 * Whether the kvm_exit fast path keys a CPUID exit (not an SEV-ES VMGEXIT, whose registers are
 * encrypted) with the guest's RAX at kvm_exit, where KVM emulates the CPUID and traces kvm_cpuid
 * with that very leaf (kvm_emulate_cpuid(): kvm_rax_read(), then kvm_cpuid()): only where
 * kvm_cpuid would have fired, so that the key is the one kvm_cpuid's program gave.
 * guest_mode: the vCPU runs a nested guest (L2), whose RAX is the one in KVM's registers then.
 * VMX hands every L2 CPUID exit to L1 (nested_vmx_l1_wants_exit()), so L0 traces no kvm_cpuid;
 * SVM does when L1 intercepts CPUID (l1_cpuid, its VMCB's intercept) and emulates it itself
 * otherwise. faulting: the guest turned CPUID faulting on (MSR_MISC_FEATURES_ENABLES bit 0);
 * KVM then injects #GP for a CPUID at CPL > 0 and traces nothing, and the CPL is not at hand at
 * kvm_exit on VMX: no key then (a CPL 0 CPUID while faulting is on goes keyless, where the
 * kvm_cpuid program would have keyed it; Linux turns faulting on only while a task that asked
 * for it with arch_prctl(ARCH_SET_CPUID) runs).
 */
#define KEY_HF_GUEST_MASK	(1u << 0)	/* HF_GUEST_MASK, vcpu->arch.hflags */
#define KEY_CPUID_FAULT		(1ull << 0)	/* MSR_MISC_FEATURES_ENABLES_CPUID_FAULT */
/* The CPUID intercept: bit 18 of the VMCB's fourth intercept vector (AMD APM vol. 2, VMCB
 * layout, offset 0Ch), INTERCEPT_CPUID = 3 * 32 + 18 in KVM's svm.h. */
#define KEY_SVM_INTERCEPT_CPUID_WORD	3
#define KEY_SVM_INTERCEPT_CPUID_BIT	18

static inline __attribute__((always_inline)) int key_leaf_at_exit(__u32 isa, __u32 reason,
								  int guest_mode, int l1_cpuid,
								  int faulting)
{
	if (faulting)
		return 0;
	if (isa == VMEXIT_ISA_VMX)
		return (reason & 0xffff) == KEY_VMX_EXIT_CPUID && !guest_mode;
	if (isa == VMEXIT_ISA_SVM)
		return reason == KEY_SVM_EXIT_CPUID && !(guest_mode && l1_cpuid);
	return 0;
}

/*
 * Whether a key event's key k replaces the key the guest exit in flight has (cur); cpuid_exit:
 * that exit is a CPUID exit (key_exit_is_cpuid). The first key does, and an MMIO access
 * replaces the stage-2 fault that led to it. A CPUID leaf keys only a CPUID exit: kvm_cpuid()
 * traces every call, and KVM's instruction emulator calls it too (its get_cpuid op) in exits
 * that are no CPUID. In the SVM bed every SeaBIOS boot had ~21 IO exits keyed by leaf 0
 * ("vendor"): `rep insb`, `rep insw` and `rep outsw` with ECX 0, which SVM's io_interception()
 * hands to the emulator (string IO); x86_emulate_insn() ends a REP string instruction with a
 * count of 0 in string_registers_quirk(), which asks leaf 0 for the vendor (Intel's register
 * masking) and reads no port: kvm_exit, kvm_emulate_insn, kvm_cpuid (func 0), kvm_entry, and no
 * kvm_pio. Such an exit keeps no key.
 */
static inline __attribute__((always_inline)) int key_final(__u16 cur);

static inline __attribute__((always_inline)) int key_replaces(int cpuid_exit, __u16 cur, __u16 k)
{
	if (k == KEY_CPUID && !cpuid_exit)
		return 0;
	if (key_final(cur))
		return 0;
	return cur == KEY_NONE || k == KEY_MMIO;
}

/*
 * Whether no key event can replace an exit's key cur any more (key_replaces() says no to
 * every one): any but none and a stage-2 fault's page. The live session's per-CPU exit slot
 * charges such a key at kvm_entry without the thread's state (bpf/keys.bpf.h key_slot_final).
 */
static inline __attribute__((always_inline)) int key_final(__u16 cur)
{
	return cur != KEY_NONE && cur != KEY_GPA;
}

#endif /* VMEXIT_KEY_RULES_H */
