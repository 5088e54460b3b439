// SPDX-License-Identifier: GPL-2.0
/* kvmtrace event ids: the table, and which id and words describe one of our events. */
#include <stddef.h>

#include "kvmtrace_ids.h"
#include "reasons.h"

/* The per-cause ids (0x0002xxxx), in kvmtrace's numbering. */
#define KT_PAGE_FAULT	0x00020001u
#define KT_IO_READ	0x00020004u
#define KT_IO_WRITE	0x00020005u
#define KT_CR_READ	0x00020006u
#define KT_CR_WRITE	0x00020007u
#define KT_DR_READ	0x00020008u
#define KT_DR_WRITE	0x00020009u
#define KT_MSR_READ	0x0002000au
#define KT_MSR_WRITE	0x0002000bu
#define KT_CPUID	0x0002000cu
#define KT_INTR		0x0002000du
#define KT_NMI		0x0002000eu
#define KT_VMMCALL	0x0002000fu
#define KT_HLT		0x00020010u
#define KT_CLTS		0x00020011u
#define KT_LMSW		0x00020012u
#define KT_APIC		0x00020013u

const __u8 kvmtrace_generic_words[5] = { W_REASON, W_RIP, W_INFO1, W_INFO2, W_INTR_INFO };

static const struct kvmtrace_id ids[] = {
	{ KVMTRACE_VMENTRY, "VMENTRY",     true,  { 0 } },
	{ KVMTRACE_VMEXIT,  "VMEXIT",      false,
	  { W_REASON, W_RIP, W_INFO1, W_INFO2, W_INTR_INFO } },
	{ KT_PAGE_FAULT,    "PAGE_FAULT",  false, { W_PF_ERR, W_PF_ADDR } },
	{ 0x00020002,       "INJ_VIRQ",    true,  { 0 } },
	{ 0x00020003,       "PEND_INTR",   true,  { 0 } },
	{ KT_IO_READ,       "IO_READ",     false, { W_IO_PORT, W_IO_SIZE } },
	{ KT_IO_WRITE,      "IO_WRITE",    false, { W_IO_PORT, W_IO_SIZE } },
	{ KT_CR_READ,       "CR_READ",     false, { W_CR_NUM } },
	{ KT_CR_WRITE,      "CR_WRITE",    false, { W_CR_NUM } },
	{ KT_DR_READ,       "DR_READ",     false, { W_DR_NUM } },
	{ KT_DR_WRITE,      "DR_WRITE",    false, { W_DR_NUM } },
	{ KT_MSR_READ,      "MSR_READ",    false, { 0 } },
	{ KT_MSR_WRITE,     "MSR_WRITE",   false, { 0 } },
	{ KT_CPUID,         "CPUID",       false, { 0 } },
	{ KT_INTR,          "INTR",        false, { W_VECTOR } },
	{ KT_NMI,           "NMI",         false, { 0 } },
	{ KT_VMMCALL,       "VMMCALL",     false, { 0 } },
	{ KT_HLT,           "HLT",         false, { 0 } },
	{ KT_CLTS,          "CLTS",        false, { 0 } },
	{ KT_LMSW,          "LMSW",        false, { W_LMSW } },
	{ KT_APIC,          "APIC_ACCESS", false, { W_APIC_OFF } },
};

_Static_assert(sizeof(ids) / sizeof(ids[0]) == KVMTRACE_NR_IDS, "KVMTRACE_NR_IDS");

const struct kvmtrace_id *kvmtrace_id_find(__u32 id)
{
	for (int i = 0; i < KVMTRACE_NR_IDS; i++)
		if (ids[i].id == id)
			return &ids[i];
	return NULL;
}

int kvmtrace_id_index(const struct kvmtrace_id *k)
{
	return k - ids;
}

/* VMX basic exit reasons and SVM exit codes the classifier needs (SDM / APM numbering). */
#define VMX_EXCEPTION_NMI	0
#define VMX_EXTINT		1
#define VMX_CPUID		10
#define VMX_HLT			12
#define VMX_VMCALL		18
#define VMX_CR_ACCESS		28
#define VMX_DR_ACCESS		29
#define VMX_IO			30
#define VMX_MSR_READ		31
#define VMX_MSR_WRITE		32
#define VMX_APIC_ACCESS		44
#define VMX_EPT_VIOLATION	48
#define SVM_PF_EXCP		0x4e
#define SVM_INTR		0x60
#define SVM_NMI			0x61
#define SVM_CPUID		0x72
#define SVM_HLT			0x78
#define SVM_IO			0x7b
#define SVM_MSR			0x7c
#define SVM_VMMCALL		0x81
#define SVM_NPF			0x400
#define SVM_AVIC_NOACCEL	0x402

#define INTR_INFO_VALID		0x80000000u
#define INTR_TYPE(ii)		(((ii) >> 8) & 7)
#define INTR_TYPE_NMI		2
#define INTR_TYPE_HW_EXC	3

__u32 kvmtrace_classify(const struct vmexit_event *ev)
{
	__u32 r = ev->reason;
	__u64 q = ev->info1;

	if (VMEXIT_EV_TYPE(ev->type) != VMEXIT_EV_EXIT)
		return 0;
	if (ev->isa == VMEXIT_ISA_VMX && !(r & VMX_FAILED_VMENTRY)) {
		switch (r & VMX_BASIC_MASK) {
		case VMX_EXCEPTION_NMI:
			if (!(ev->intr_info & INTR_INFO_VALID))
				break;
			if (INTR_TYPE(ev->intr_info) == INTR_TYPE_NMI)
				return KT_NMI;
			if (INTR_TYPE(ev->intr_info) == INTR_TYPE_HW_EXC &&
			    (ev->intr_info & 0xff) == 14)
				return KT_PAGE_FAULT;
			break;
		case VMX_EXTINT:	return KT_INTR;
		case VMX_CPUID:		return KT_CPUID;
		case VMX_HLT:		return KT_HLT;
		case VMX_VMCALL:	return KT_VMMCALL;
		case VMX_CR_ACCESS:
			/* Exit qualification bits 5:4: mov to CR, mov from CR, CLTS, LMSW. */
			switch ((q >> 4) & 3) {
			case 0:	return KT_CR_WRITE;
			case 1:	return KT_CR_READ;
			case 2:	return KT_CLTS;
			default: return KT_LMSW;
			}
		case VMX_DR_ACCESS:	return (q & 0x10) ? KT_DR_READ : KT_DR_WRITE;
		case VMX_IO:		return (q & 0x8) ? KT_IO_READ : KT_IO_WRITE;
		case VMX_MSR_READ:	return KT_MSR_READ;
		case VMX_MSR_WRITE:	return KT_MSR_WRITE;
		case VMX_APIC_ACCESS:	return KT_APIC;
		case VMX_EPT_VIOLATION:	return KT_PAGE_FAULT;
		}
	} else if (ev->isa == VMEXIT_ISA_SVM) {
		if (r < 0x10)
			return KT_CR_READ;
		if (r < 0x20)
			return KT_CR_WRITE;
		if (r < 0x30)
			return KT_DR_READ;
		if (r < 0x40)
			return KT_DR_WRITE;
		switch (r) {
		case SVM_PF_EXCP:
		case SVM_NPF:		return KT_PAGE_FAULT;
		case SVM_INTR:		return KT_INTR;
		case SVM_NMI:		return KT_NMI;
		case SVM_CPUID:		return KT_CPUID;
		case SVM_HLT:		return KT_HLT;
		case SVM_IO:		return (q & 1) ? KT_IO_READ : KT_IO_WRITE;
		case SVM_MSR:		return q ? KT_MSR_WRITE : KT_MSR_READ;
		case SVM_VMMCALL:	return KT_VMMCALL;
		case SVM_AVIC_NOACCEL:	return KT_APIC;
		}
	}
	return KVMTRACE_VMEXIT;
}

__u64 kvmtrace_word_value(__u8 src, const struct vmexit_event *ev)
{
	bool vmx = ev->isa == VMEXIT_ISA_VMX;

	switch (src) {
	case W_REASON:		return ev->reason;
	case W_RIP:		return ev->rip;
	case W_INFO1:		return ev->info1;
	case W_INFO2:		return ev->info2;
	case W_INTR_INFO:	return ev->intr_info;
	case W_PF_ERR:
		/* A VMX #PF exception exit keeps the error code apart; the others in info1. */
		if (vmx && (ev->reason & VMX_BASIC_MASK) == VMX_EXCEPTION_NMI)
			return ev->error_code;
		return ev->info1;
	case W_PF_ADDR:
		if (vmx)	/* CR2 is the #PF exit qualification; EPT's GPA is not recorded */
			return (ev->reason & VMX_BASIC_MASK) == VMX_EXCEPTION_NMI ? ev->info1 : 0;
		return ev->info2;
	case W_IO_PORT:		return (ev->info1 >> 16) & 0xffff;
	case W_IO_SIZE:
		/* VMX: size - 1 in bits 2:0; SVM: one-hot SZ8/SZ16/SZ32 in bits 6:4. */
		return vmx ? (ev->info1 & 7) + 1 : (ev->info1 >> 4) & 7;
	case W_CR_NUM:		return vmx ? ev->info1 & 0xf : ev->reason & 0xf;
	case W_DR_NUM:		return vmx ? ev->info1 & 7 : ev->reason & 0xf;
	case W_VECTOR:
		return vmx && (ev->intr_info & INTR_INFO_VALID) ? ev->intr_info & 0xff : 0;
	case W_LMSW:		return (ev->info1 >> 16) & 0xffff;
	case W_APIC_OFF:	return ev->info1 & 0xfff;
	default:		return 0;
	}
}
