// SPDX-License-Identifier: GPL-2.0
/*
 * The named fields of each kvm event and their decoder: one table says where include/vmexit.h
 * packs each field of a VMEXIT_EV_KVM_EVENT record and how it reads; JSON, perfetto and the
 * --format templates print from it.
 */
#include <string.h>

#include "kvm_event_fields.h"

/* Where a field sits in the packed event (include/vmexit.h has the layout). */
enum kvm_slot {
	KS_INFO1, KS_INFO2, KS_RIP, KS_INTR_INFO, KS_ERROR_CODE,
	KS_INFO2_LO, KS_INFO2_HI, KS_RIP_LO, KS_RIP_HI,	/* cpuid's 32-bit registers */
	KS_BIT0, KS_BIT1,				/* cpuid's flags in error_code */
	KS_ACCESS,
};

#define KF(ev, fmt, slot, name)	{ VMEXIT_KVM_##ev, fmt, slot, name }

/* Grouped by event, in id order. */
static const struct kvm_event_field kvm_fields[] = {
	KF(PIO, KF_STR, KS_ACCESS, "access"),
	KF(PIO, KF_HEX, KS_INFO1, "port"),
	KF(PIO, KF_DEC, KS_ERROR_CODE, "size"),
	KF(PIO, KF_DEC, KS_RIP, "count"),
	KF(PIO, KF_HEX, KS_INFO2, "val"),
	KF(MMIO, KF_STR, KS_ACCESS, "access"),
	KF(MMIO, KF_HEX, KS_INFO1, "gpa"),
	KF(MMIO, KF_DEC, KS_ERROR_CODE, "size"),
	KF(MMIO, KF_HEX, KS_INFO2, "val"),
	KF(MSR, KF_STR, KS_ACCESS, "access"),
	KF(MSR, KF_HEX, KS_INFO1, "msr"),
	KF(MSR, KF_HEX, KS_INFO2, "val"),
	KF(MSR, KF_DEC, KS_ERROR_CODE, "exception"),
	KF(CPUID, KF_HEX, KS_INFO1, "function"),
	KF(CPUID, KF_HEX, KS_INTR_INFO, "index"),
	KF(CPUID, KF_HEX, KS_INFO2_LO, "eax"),
	KF(CPUID, KF_HEX, KS_INFO2_HI, "ebx"),
	KF(CPUID, KF_HEX, KS_RIP_LO, "ecx"),
	KF(CPUID, KF_HEX, KS_RIP_HI, "edx"),
	KF(CPUID, KF_DEC, KS_BIT0, "found"),
	KF(CPUID, KF_DEC, KS_BIT1, "used_max_basic"),
	KF(INJ_VIRQ, KF_HEX, KS_INFO1, "vector"),
	KF(INJ_VIRQ, KF_DEC, KS_INTR_INFO, "soft"),
	KF(INJ_VIRQ, KF_DEC, KS_ERROR_CODE, "reinjected"),
	KF(PAGE_FAULT, KF_HEX, KS_INFO1, "fault_address"),
	KF(PAGE_FAULT, KF_HEX, KS_INFO2, "error_code"),
	KF(PAGE_FAULT, KF_HEX, KS_RIP, "rip"),
	KF(MSI_SET_IRQ, KF_HEX, KS_INFO1, "address"),
	KF(MSI_SET_IRQ, KF_HEX, KS_INFO2, "data"),
	KF(APIC_ACCEPT_IRQ, KF_HEX, KS_INFO1, "apicid"),
	KF(APIC_ACCEPT_IRQ, KF_HEX, KS_INFO2, "vector"),
	KF(APIC_ACCEPT_IRQ, KF_HEX, KS_INTR_INFO, "dm"),
	KF(APIC_ACCEPT_IRQ, KF_DEC, KS_ERROR_CODE, "tm"),
	KF(HALT_POLL_NS, KF_DEC, KS_INFO1, "new"),
	KF(HALT_POLL_NS, KF_DEC, KS_INFO2, "old"),
	KF(HALT_POLL_NS, KF_DEC, KS_INTR_INFO, "grow"),
};

#define NR_KVM_FIELDS	(sizeof(kvm_fields) / sizeof(kvm_fields[0]))

const struct kvm_event_field *kvm_event_fields(__u32 id, size_t *n)
{
	size_t i = 0, j;

	while (i < NR_KVM_FIELDS && kvm_fields[i].event != id)
		i++;
	for (j = i; j < NR_KVM_FIELDS && kvm_fields[j].event == id; j++)
		;
	*n = j - i;
	return *n ? &kvm_fields[i] : NULL;
}

const struct kvm_event_field *kvm_event_field_find(__u32 id, const char *name)
{
	size_t n;
	const struct kvm_event_field *f = kvm_event_fields(id, &n);

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(f[i].name, name))
			return &f[i];
	}
	return NULL;
}

__u64 kvm_event_field_value(const struct kvm_event_field *f, const struct vmexit_event *ev)
{
	switch (f->slot) {
	case KS_INFO1:		return ev->info1;
	case KS_INFO2:		return ev->info2;
	case KS_RIP:		return ev->rip;
	case KS_INTR_INFO:	return ev->intr_info;
	case KS_ERROR_CODE:	return ev->error_code;
	case KS_INFO2_LO:	return (__u32)ev->info2;
	case KS_INFO2_HI:	return ev->info2 >> 32;
	case KS_RIP_LO:		return (__u32)ev->rip;
	case KS_RIP_HI:		return ev->rip >> 32;
	case KS_BIT0:		return ev->error_code & 1;
	case KS_BIT1:		return (ev->error_code >> 1) & 1;
	default:		return 0;
	}
}

const char *kvm_event_access(const struct vmexit_event *ev)
{
	if (ev->type != VMEXIT_EV_KVM_EVENT)
		return "";
	switch (ev->reason) {
	case VMEXIT_KVM_PIO:
	case VMEXIT_KVM_MSR:
		return ev->intr_info ? "write" : "read";
	case VMEXIT_KVM_MMIO:
		/* KVM_TRACE_MMIO_UNSATISFIED_READ, _READ, _WRITE */
		return ev->intr_info == 0 ? "unsatisfied-read" : ev->intr_info == 1 ? "read" :
		       ev->intr_info == 2 ? "write" : "?";
	default:
		return "";
	}
}
