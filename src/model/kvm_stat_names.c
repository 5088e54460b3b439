// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "kvm_stat_names.h"
#include "vmexit.h"

/*
 * Where the kernel counts them (arch/x86/kvm): exits per VM exit in vcpu_enter_guest (the
 * fastpath's re-entries too), as kvm_exit fires; io_exits in the IO intercepts (in-kernel
 * devices' ports too); halt_exits in __kvm_emulate_halt; mmio_exits when an emulated access
 * goes to the VMM; signal_exits when KVM_RUN returns for a pending signal (KVM_EXIT_INTR);
 * irq_exits on host interrupts that exit the guest.
 */
static const struct kvm_stat_alias aliases[] = {
	{ "exits", "exits", KVM_MATCH_HW_ALL, 0, 0, 0, false,
	  "KVM counts every VM exit; vmexit's rows need kvm:kvm_exit, which this host's KVM "
	  "does not fire (only exits to the VMM are seen)" },
	{ "io_exits", "IO", KVM_MATCH_HW, 30, 0x07b, 2, true,
	  "io_exits counts port IO handled in the kernel too (in-kernel PIT, PIC, serial), "
	  "KVM_EXIT_IO only what reaches the VMM" },
	{ "halt_exits", "HLT", KVM_MATCH_HW, 12, 0x078, 5, true,
	  "halt_exits counts HLTs KVM emulates (an in-kernel irqchip halts in the kernel: no "
	  "KVM_EXIT_HLT)" },
	{ "mmio_exits", "MMIO", KVM_MATCH_USER, 0, 0, 6, false,
	  "mmio_exits counts emulated accesses sent to the VMM; MMIO handled in the kernel "
	  "(ioeventfd, in-kernel devices) is in neither" },
	{ "signal_exits", "INTR", KVM_MATCH_USER, 0, 0, 10, false,
	  "signal_exits counts KVM_RUN calls ended by a signal before or after entering the "
	  "guest" },
	{ "irq_exits", "irq_exits", KVM_MATCH_HW, 1, 0x060, 0, false,
	  "host interrupts: KVM may count an interrupt handled in its fastpath" },
};

const struct kvm_stat_alias *kvm_stat_aliases(int *n)
{
	*n = sizeof(aliases) / sizeof(aliases[0]);
	return aliases;
}

const struct kvm_stat_alias *kvm_stat_alias_of(const char *kvm)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].kvm, kvm))
			return &aliases[i];
	return NULL;
}

const char *kvm_stat_shown(const char *kvm)
{
	const struct kvm_stat_alias *a = kvm_stat_alias_of(kvm);

	return a ? a->name : kvm;
}

static bool hw_isa(__u32 isa)
{
	return isa == VMEXIT_ISA_VMX || isa == VMEXIT_ISA_SVM || isa == VMEXIT_ISA_ARM64;
}

__u64 kvm_stat_bpf_count(const struct kvm_stat_alias *a, const struct row_table *rows,
			 __u32 tgid, bool *hw)
{
	__u64 n_hw = 0, n_user = 0;

	*hw = false;
	for (__u32 i = 0; i < rows->nr; i++) {
		const struct row *r = &rows->rows[i];
		const struct row_key *k = &r->key;

		if (tgid && k->tgid != tgid)
			continue;
		if (hw_isa(k->isa)) {
			*hw = true;
			if (a->match == KVM_MATCH_HW_ALL ||
			    (a->match == KVM_MATCH_HW &&
			     ((k->isa == VMEXIT_ISA_VMX && k->reason == a->vmx) ||
			      (k->isa == VMEXIT_ISA_SVM && k->reason == a->svm))))
				n_hw += r->count;
		} else if (k->isa == VMEXIT_ISA_USER && k->reason == a->user &&
			   (a->match == KVM_MATCH_USER || a->user_too)) {
			n_user += r->count;
		}
	}
	if (a->match == KVM_MATCH_USER)
		return n_user;
	return *hw || !a->user_too ? n_hw : n_user;
}
