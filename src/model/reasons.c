// SPDX-License-Identifier: GPL-2.0
/*
 * Exit-reason tables and the -r/--reason selector parser.
 *
 * Codes come from the uapi headers (asm/vmx.h, asm/svm.h, linux/kvm.h), the kernel's arm64
 * asm/esr.h and asm/kvm_asm.h, and the vendor manuals; names are the strings the kernel's
 * tracepoints print, extended in the same style for codes the kernel has no name for yet. The
 * tables are written out rather than taken from the system's headers because those lag the
 * running kernel (and the BPF side sees codes from any kernel).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "out_write.h"
#include "reasons.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Intel SDM Vol. 3C appendix C, "VMX Basic Exit Reasons". */
static const struct reason_entry vmx_reasons[] = {
	{ 0, "EXCEPTION_NMI" },
	{ 1, "EXTERNAL_INTERRUPT" },
	{ 2, "TRIPLE_FAULT" },
	{ 3, "INIT_SIGNAL" },
	{ 4, "SIPI_SIGNAL" },
	{ 5, "IO_SMI" },
	{ 6, "OTHER_SMI" },
	{ 7, "INTERRUPT_WINDOW" },
	{ 8, "NMI_WINDOW" },
	{ 9, "TASK_SWITCH" },
	{ 10, "CPUID" },
	{ 11, "GETSEC" },
	{ 12, "HLT" },
	{ 13, "INVD" },
	{ 14, "INVLPG" },
	{ 15, "RDPMC" },
	{ 16, "RDTSC" },
	{ 17, "RSM" },
	{ 18, "VMCALL" },
	{ 19, "VMCLEAR" },
	{ 20, "VMLAUNCH" },
	{ 21, "VMPTRLD" },
	{ 22, "VMPTRST" },
	{ 23, "VMREAD" },
	{ 24, "VMRESUME" },
	{ 25, "VMWRITE" },
	{ 26, "VMOFF" },
	{ 27, "VMON" },
	{ 28, "CR_ACCESS" },
	{ 29, "DR_ACCESS" },
	{ 30, "IO_INSTRUCTION" },
	{ 31, "MSR_READ" },
	{ 32, "MSR_WRITE" },
	{ 33, "INVALID_STATE" },
	{ 34, "MSR_LOAD_FAIL" },
	{ 36, "MWAIT_INSTRUCTION" },
	{ 37, "MONITOR_TRAP_FLAG" },
	{ 39, "MONITOR_INSTRUCTION" },
	{ 40, "PAUSE_INSTRUCTION" },
	{ 41, "MCE_DURING_VMENTRY" },
	{ 43, "TPR_BELOW_THRESHOLD" },
	{ 44, "APIC_ACCESS" },
	{ 45, "EOI_INDUCED" },
	{ 46, "GDTR_IDTR" },
	{ 47, "LDTR_TR" },
	{ 48, "EPT_VIOLATION" },
	{ 49, "EPT_MISCONFIG" },
	{ 50, "INVEPT" },
	{ 51, "RDTSCP" },
	{ 52, "PREEMPTION_TIMER" },
	{ 53, "INVVPID" },
	{ 54, "WBINVD" },
	{ 55, "XSETBV" },
	{ 56, "APIC_WRITE" },
	{ 57, "RDRAND" },
	{ 58, "INVPCID" },
	{ 59, "VMFUNC" },
	{ 60, "ENCLS" },
	{ 61, "RDSEED" },
	{ 62, "PML_FULL" },
	{ 63, "XSAVES" },
	{ 64, "XRSTORS" },
	{ 65, "PCONFIG" },
	{ 66, "SPP" },
	{ 67, "UMWAIT" },
	{ 68, "TPAUSE" },
	{ 69, "LOADIWKEY" },
	{ 70, "ENCLV" },
	{ 71, "SGX_CONFLICT" },
	{ 72, "ENQCMD_PASID_FAIL" },
	{ 73, "ENQCMDS_PASID_FAIL" },
	{ 74, "BUS_LOCK" },
	{ 75, "NOTIFY" },
	{ 76, "SEAMCALL" },
	{ 77, "TDCALL" },
	{ 78, "RDMSRLIST" },
	{ 79, "WRMSRLIST" },
	{ 84, "MSR_READ_IMM" },
	{ 85, "MSR_WRITE_IMM" },
};

/* AMD APM Vol. 2 appendix C, "SVM Intercept Exit Codes", and the GHCB spec for 0x8000xxxx. */
static const struct reason_entry svm_reasons[] = {
	{ 0x000, "read_cr0" },
	{ 0x002, "read_cr2" },
	{ 0x003, "read_cr3" },
	{ 0x004, "read_cr4" },
	{ 0x008, "read_cr8" },
	{ 0x010, "write_cr0" },
	{ 0x012, "write_cr2" },
	{ 0x013, "write_cr3" },
	{ 0x014, "write_cr4" },
	{ 0x018, "write_cr8" },
	{ 0x020, "read_dr0" },
	{ 0x021, "read_dr1" },
	{ 0x022, "read_dr2" },
	{ 0x023, "read_dr3" },
	{ 0x024, "read_dr4" },
	{ 0x025, "read_dr5" },
	{ 0x026, "read_dr6" },
	{ 0x027, "read_dr7" },
	{ 0x030, "write_dr0" },
	{ 0x031, "write_dr1" },
	{ 0x032, "write_dr2" },
	{ 0x033, "write_dr3" },
	{ 0x034, "write_dr4" },
	{ 0x035, "write_dr5" },
	{ 0x036, "write_dr6" },
	{ 0x037, "write_dr7" },
	/* 0x40 + exception vector; the kernel's spelling, space included. */
	{ 0x040, "DE excp" },
	{ 0x041, "DB excp" },
	{ 0x043, "BP excp" },
	{ 0x044, "OF excp" },
	{ 0x045, "BR excp" },
	{ 0x046, "UD excp" },
	{ 0x047, "NM excp" },
	{ 0x048, "DF excp" },
	{ 0x04a, "TS excp" },
	{ 0x04b, "NP excp" },
	{ 0x04c, "SS excp" },
	{ 0x04d, "GP excp" },
	{ 0x04e, "PF excp" },
	{ 0x050, "MF excp" },
	{ 0x051, "AC excp" },
	{ 0x052, "MC excp" },
	{ 0x053, "XF excp" },
	{ 0x054, "VE excp" },
	{ 0x055, "CP excp" },
	{ 0x05c, "HV excp" },
	{ 0x05d, "VC excp" },
	{ 0x05e, "SX excp" },
	{ 0x060, "interrupt" },
	{ 0x061, "nmi" },
	{ 0x062, "smi" },
	{ 0x063, "init" },
	{ 0x064, "vintr" },
	{ 0x065, "cr0_sel_write" },
	{ 0x066, "read_idtr" },
	{ 0x067, "read_gdtr" },
	{ 0x068, "read_ldtr" },
	{ 0x069, "read_rt" },		/* sic: the kernel's name for the TR read */
	{ 0x06a, "write_idtr" },
	{ 0x06b, "write_gdtr" },
	{ 0x06c, "write_ldtr" },
	{ 0x06d, "write_rt" },
	{ 0x06e, "rdtsc" },
	{ 0x06f, "rdpmc" },
	{ 0x070, "pushf" },
	{ 0x071, "popf" },
	{ 0x072, "cpuid" },
	{ 0x073, "rsm" },
	{ 0x074, "iret" },
	{ 0x075, "swint" },
	{ 0x076, "invd" },
	{ 0x077, "pause" },
	{ 0x078, "hlt" },
	{ 0x079, "invlpg" },
	{ 0x07a, "invlpga" },
	{ 0x07b, "io" },
	{ 0x07c, "msr" },
	{ 0x07d, "task_switch" },
	{ 0x07e, "ferr_freeze" },
	{ 0x07f, "shutdown" },
	{ 0x080, "vmrun" },
	{ 0x081, "hypercall" },
	{ 0x082, "vmload" },
	{ 0x083, "vmsave" },
	{ 0x084, "stgi" },
	{ 0x085, "clgi" },
	{ 0x086, "skinit" },
	{ 0x087, "rdtscp" },
	{ 0x088, "icebp" },
	{ 0x089, "wbinvd" },
	{ 0x08a, "monitor" },
	{ 0x08b, "mwait" },
	{ 0x08c, "mwait_cond" },
	{ 0x08d, "xsetbv" },
	{ 0x08e, "rdpru" },
	{ 0x08f, "write_efer_trap" },
	{ 0x090, "write_cr0_trap" },
	{ 0x094, "write_cr4_trap" },
	{ 0x098, "write_cr8_trap" },
	{ 0x0a0, "invlpgb" },
	{ 0x0a1, "invlpgb_illegal" },
	{ 0x0a2, "invpcid" },
	{ 0x0a3, "mcommit" },
	{ 0x0a4, "tlbsync" },
	{ 0x0a5, "buslock" },
	{ 0x0a6, "idle-halt" },
	{ 0x400, "npf" },
	{ 0x401, "avic_incomplete_ipi" },
	{ 0x402, "avic_unaccelerated_access" },
	{ 0x403, "vmgexit" },
	/* SEV-ES guests: KVM reports the GHCB software exit code instead of 0x403. */
	{ 0x80000001, "vmgexit_mmio_read" },
	{ 0x80000002, "vmgexit_mmio_write" },
	{ 0x80000003, "vmgexit_nmi_complete" },
	{ 0x80000004, "vmgexit_ap_hlt_loop" },
	{ 0x80000005, "vmgexit_ap_jump_table" },
	{ 0x80000010, "vmgexit_page_state_change" },
	{ 0x80000011, "vmgexit_guest_request" },
	{ 0x80000012, "vmgexit_ext_guest_request" },
	{ 0x80000013, "vmgexit_ap_creation" },
	{ 0x80000018, "vmgexit_snp_run_vmpl" },
	{ 0x8000001a, "vmgexit_secure_avic" },
	{ 0x8000fffd, "vmgexit_hypervisor_feature" },
	{ 0x8000fffe, "vmgexit_term_request" },
	{ 0x8000ffff, "vmgexit_unsupported_event" },
	{ 0xffffffff, "invalid_guest_state" },	/* SVM_EXIT_ERR, -1 */
};

/*
 * KVM_EXIT_* without the prefix, then the errno-carrying runs (VMEXIT_UREASON_ERRNO | errno).
 * EINTR is "restart" as in the kvm_userspace_exit tracepoint; the others are the errnos
 * KVM_RUN is known to fail with.
 */
static const struct reason_entry user_reasons[] = {
	{ 0, "UNKNOWN" },
	{ 1, "EXCEPTION" },
	{ 2, "IO" },
	{ 3, "HYPERCALL" },
	{ 4, "DEBUG" },
	{ 5, "HLT" },
	{ 6, "MMIO" },
	{ 7, "IRQ_WINDOW_OPEN" },
	{ 8, "SHUTDOWN" },
	{ 9, "FAIL_ENTRY" },
	{ 10, "INTR" },
	{ 11, "SET_TPR" },
	{ 12, "TPR_ACCESS" },
	{ 13, "S390_SIEIC" },
	{ 14, "S390_RESET" },
	{ 15, "DCR" },
	{ 16, "NMI" },
	{ 17, "INTERNAL_ERROR" },
	{ 18, "OSI" },
	{ 19, "PAPR_HCALL" },
	{ 20, "S390_UCONTROL" },
	{ 21, "WATCHDOG" },
	{ 22, "S390_TSCH" },
	{ 23, "EPR" },
	{ 24, "SYSTEM_EVENT" },
	{ 25, "S390_STSI" },
	{ 26, "IOAPIC_EOI" },
	{ 27, "HYPERV" },
	{ 28, "ARM_NISV" },
	{ 29, "X86_RDMSR" },
	{ 30, "X86_WRMSR" },
	{ 31, "DIRTY_RING_FULL" },
	{ 32, "AP_RESET_HOLD" },
	{ 33, "X86_BUS_LOCK" },
	{ 34, "XEN" },
	{ 35, "RISCV_SBI" },
	{ 36, "RISCV_CSR" },
	{ 37, "NOTIFY" },
	{ 38, "LOONGARCH_IOCSR" },
	{ 39, "MEMORY_FAULT" },
	{ 40, "TDX" },
	{ 41, "ARM_SEA" },
	{ VMEXIT_UREASON_ERRNO | EPERM, "error(EPERM)" },
	{ VMEXIT_UREASON_ERRNO | ENOENT, "error(ENOENT)" },
	{ VMEXIT_UREASON_ERRNO | EINTR, "restart" },
	{ VMEXIT_UREASON_ERRNO | EIO, "error(EIO)" },
	{ VMEXIT_UREASON_ERRNO | ENXIO, "error(ENXIO)" },
	{ VMEXIT_UREASON_ERRNO | E2BIG, "error(E2BIG)" },
	{ VMEXIT_UREASON_ERRNO | ENOEXEC, "error(ENOEXEC)" },
	{ VMEXIT_UREASON_ERRNO | EAGAIN, "error(EAGAIN)" },
	{ VMEXIT_UREASON_ERRNO | ENOMEM, "error(ENOMEM)" },
	{ VMEXIT_UREASON_ERRNO | EFAULT, "error(EFAULT)" },
	{ VMEXIT_UREASON_ERRNO | EBUSY, "error(EBUSY)" },
	{ VMEXIT_UREASON_ERRNO | EEXIST, "error(EEXIST)" },
	{ VMEXIT_UREASON_ERRNO | EINVAL, "error(EINVAL)" },
	{ VMEXIT_UREASON_ERRNO | ENOSPC, "error(ENOSPC)" },
	{ VMEXIT_UREASON_ERRNO | ENOSYS, "error(ENOSYS)" },
	{ VMEXIT_UREASON_ERRNO | EOPNOTSUPP, "error(EOPNOTSUPP)" },
	{ VMEXIT_UREASON_ERRNO | EHWPOISON, "error(EHWPOISON)" },
};

/*
 * AArch64 (VMEXIT_ISA_ARM64). Traps are named by their exception class, the EC field of ESR_EL2
 * in the Arm ARM, spelled as the kernel's ESR_ELx_EC_* macros (asm/esr.h) without the prefix:
 * the names the arm64 kvm_exit tracepoint prints. Unallocated classes are left out. Then the
 * exits that are not traps, VMEXIT_ARM64_EXC | ARM_EXCEPTION_*, named by that macro's suffix.
 */
static const struct reason_entry arm64_reasons[] = {
	{ 0x00, "UNKNOWN" },
	{ 0x01, "WFx" },		/* WFI, WFE (and WFIT, WFET) */
	{ 0x03, "CP15_32" },		/* AArch32 guests: MCR/MRC to CP15 */
	{ 0x04, "CP15_64" },
	{ 0x05, "CP14_MR" },
	{ 0x06, "CP14_LS" },
	{ 0x07, "FP_ASIMD" },
	{ 0x08, "CP10_ID" },
	{ 0x09, "PAC" },
	{ 0x0a, "OTHER" },		/* LS64, PSB/TSB CSYNC */
	{ 0x0c, "CP14_64" },
	{ 0x0d, "BTI" },
	{ 0x0e, "ILL" },
	{ 0x11, "SVC32" },
	{ 0x12, "HVC32" },
	{ 0x13, "SMC32" },
	{ 0x15, "SVC64" },
	{ 0x16, "HVC64" },		/* hypercalls: PSCI, SMCCC */
	{ 0x17, "SMC64" },
	{ 0x18, "SYS64" },		/* MSR/MRS/SYS: trapped system registers */
	{ 0x19, "SVE" },
	{ 0x1a, "ERET" },
	{ 0x1c, "FPAC" },
	{ 0x1d, "SME" },
	{ 0x1f, "IMP_DEF" },
	{ 0x20, "IABT_LOW" },
	{ 0x21, "IABT_CUR" },
	{ 0x22, "PC_ALIGN" },
	{ 0x24, "DABT_LOW" },		/* stage-2 faults: MMIO and guest page faults */
	{ 0x25, "DABT_CUR" },
	{ 0x26, "SP_ALIGN" },
	{ 0x27, "MOPS" },
	{ 0x28, "FP_EXC32" },
	{ 0x2c, "FP_EXC64" },
	{ 0x2d, "GCS" },
	{ 0x2f, "SERROR" },
	{ 0x30, "BREAKPT_LOW" },
	{ 0x31, "BREAKPT_CUR" },
	{ 0x32, "SOFTSTP_LOW" },
	{ 0x33, "SOFTSTP_CUR" },
	{ 0x34, "WATCHPT_LOW" },
	{ 0x35, "WATCHPT_CUR" },
	{ 0x38, "BKPT32" },
	{ 0x3a, "VECTOR32" },
	{ 0x3c, "BRK64" },
	{ VMEXIT_ARM64_EXC | 0, "IRQ" },		/* a host interrupt */
	{ VMEXIT_ARM64_EXC | 1, "EL1_SERROR" },
	{ VMEXIT_ARM64_EXC | 3, "IL" },			/* illegal exception return */
	{ VMEXIT_ARM64_EXC | 0xbadca11, "HYP_GONE" },	/* HVC_STUB_ERR: no KVM at EL2 */
};

static const __u32 all_isas[] = {
	VMEXIT_ISA_VMX, VMEXIT_ISA_SVM, VMEXIT_ISA_USER, VMEXIT_ISA_ARM64
};

const char *isa_name(__u32 isa)
{
	switch (isa) {
	case VMEXIT_ISA_VMX:
		return "vmx";
	case VMEXIT_ISA_SVM:
		return "svm";
	case VMEXIT_ISA_USER:
		return "user";
	case VMEXIT_ISA_ARM64:
		return "arm64";
	default:
		return "?";
	}
}

int isa_parse(const char *s, __u32 *isa)
{
	if (!strcasecmp(s, "vmx") || !strcasecmp(s, "intel"))
		*isa = VMEXIT_ISA_VMX;
	else if (!strcasecmp(s, "svm") || !strcasecmp(s, "amd"))
		*isa = VMEXIT_ISA_SVM;
	else if (!strcasecmp(s, "user"))
		*isa = VMEXIT_ISA_USER;
	else if (!strcasecmp(s, "arm64") || !strcasecmp(s, "aarch64"))
		*isa = VMEXIT_ISA_ARM64;
	else
		return -EINVAL;
	return 0;
}

const struct reason_entry *reason_table(__u32 isa, size_t *n)
{
	switch (isa) {
	case VMEXIT_ISA_VMX:
		*n = ARRAY_SIZE(vmx_reasons);
		return vmx_reasons;
	case VMEXIT_ISA_SVM:
		*n = ARRAY_SIZE(svm_reasons);
		return svm_reasons;
	case VMEXIT_ISA_USER:
		*n = ARRAY_SIZE(user_reasons);
		return user_reasons;
	case VMEXIT_ISA_ARM64:
		*n = ARRAY_SIZE(arm64_reasons);
		return arm64_reasons;
	default:
		*n = 0;
		return NULL;
	}
}

static const char *(*fallback_fn)(void *ctx, __u32 isa, __u32 reason);
static void *fallback_ctx;

void reason_names_fallback(const char *(*fn)(void *ctx, __u32 isa, __u32 reason), void *ctx)
{
	fallback_fn = fn;
	fallback_ctx = ctx;
}

const char *reason_name(__u32 isa, __u32 reason)
{
	const struct reason_entry *t;
	size_t lo = 0, hi;

	t = reason_table(isa, &hi);
	/* Tables are sorted by code (the unit test checks): binary search, this runs per row. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].code == reason)
			return t[mid].name;
		if (t[mid].code < reason)
			lo = mid + 1;
		else
			hi = mid;
	}
	return fallback_fn ? fallback_fn(fallback_ctx, isa, reason) : NULL;
}

const char *reason_str(__u32 isa, __u32 reason, char *buf, size_t len)
{
	const char *name = reason_name(isa, reason);
	char tmp[REASON_STR_MAX];

	if (!len)
		return buf;
	if (name) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	switch (isa) {
	case VMEXIT_ISA_VMX: {
		__u32 flags = reason & ~VMX_BASIC_MASK;
		const char *basic = reason_name(isa, reason & VMX_BASIC_MASK);
		int n = 0;

		/* Same shape as the tracepoint ("FAILED_VMENTRY" flag next to the basic reason). */
		if (flags & VMX_FAILED_VMENTRY) {
			n += snprintf(tmp + n, sizeof(tmp) - n, "FAILED_VMENTRY|");
			flags &= ~VMX_FAILED_VMENTRY;
		}
		if (flags)
			n += snprintf(tmp + n, sizeof(tmp) - n, "0x%x|", flags);
		if (basic)
			snprintf(tmp + n, sizeof(tmp) - n, "%s", basic);
		else
			snprintf(tmp + n, sizeof(tmp) - n, "UNKNOWN_0x%x", reason & VMX_BASIC_MASK);
		break;
	}
	case VMEXIT_ISA_USER:
		if ((reason & VMEXIT_UREASON_ERRNO) && (reason & ~VMEXIT_UREASON_ERRNO)) {
			snprintf(tmp, sizeof(tmp), "error(-%u)", reason & ~VMEXIT_UREASON_ERRNO);
			break;
		}
		/* fall through */
	case VMEXIT_ISA_SVM:
	case VMEXIT_ISA_ARM64:
		snprintf(tmp, sizeof(tmp), "UNKNOWN_0x%x", reason);
		break;
	default:
		snprintf(tmp, sizeof(tmp), "0x%x", reason);
		break;
	}
	snprintf(buf, len, "%s", tmp);
	return buf;
}

/* Case-insensitive, with ' ', '-' and '_' equal: "DE_excp", "idle_halt", "ept-violation". */
static int fold(int c)
{
	if (c == ' ' || c == '-')
		return '_';
	return tolower((unsigned char)c);
}

static bool name_eq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (fold(*a) != fold(*b))
			return false;
	return !*a && !*b;
}

static bool prefix_eq(const char *s, const char *prefix)
{
	for (; *prefix; s++, prefix++)
		if (!*s || fold(*s) != fold(*prefix))
			return false;
	return true;
}

/* Decimal, 0x hex, or -1 (SVM_EXIT_ERR); the whole string must be the number. */
static int parse_u32(const char *s, __u32 *val)
{
	unsigned long long v;
	bool neg = false;
	char *end;
	int base = 10;

	if (*s == '-') {
		neg = true;
		s++;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	/* strtoull() would also take blanks, a sign or a second "0x": allow digits only. */
	if (!*s || strspn(s, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") != strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, base);
	if (*end || errno || v > 0xffffffffull || (neg && v > 0x80000000ull))
		return -EINVAL;
	*val = neg ? (__u32)-(__s64)v : (__u32)v;
	return 0;
}

static int table_lookup(__u32 isa, const char *name, __u32 *reason)
{
	const struct reason_entry *t;
	size_t i, n;

	t = reason_table(isa, &n);
	for (i = 0; i < n; i++) {
		if (name_eq(t[i].name, name)) {
			*reason = t[i].code;
			return 0;
		}
	}
	return -ENOENT;
}

/* "FAILED_VMENTRY|INVALID_STATE", "0x8000000|EPT_VIOLATION": flags, then the basic reason. */
static int vmx_flags_lookup(const char *name, __u32 *reason)
{
	char buf[REASON_STR_MAX], *tok, *next;
	__u32 flags = 0, v;

	if (strlen(name) >= sizeof(buf))
		return -ENOENT;
	strcpy(buf, name);
	for (tok = buf; (next = strchr(tok, '|')); tok = next) {
		*next++ = '\0';
		if (name_eq(tok, "FAILED_VMENTRY"))
			flags |= VMX_FAILED_VMENTRY;
		else if (!parse_u32(tok, &v) && v && !(v & VMX_BASIC_MASK))
			flags |= v;
		else
			return -ENOENT;
	}
	if (table_lookup(VMEXIT_ISA_VMX, tok, &v)) {
		if (!prefix_eq(tok, "UNKNOWN_") || parse_u32(tok + 8, &v) || v > VMX_BASIC_MASK)
			return -ENOENT;
	}
	*reason = flags | v;
	return 0;
}

int reason_lookup(__u32 isa, const char *name, __u32 *reason)
{
	__u32 v;

	if (!table_lookup(isa, name, reason))
		return 0;
	/* The fallback spellings of reason_str(), so its output always parses back. */
	if (prefix_eq(name, "UNKNOWN_") && !parse_u32(name + 8, &v) && name[8] != '-') {
		if (isa == VMEXIT_ISA_VMX && v > VMX_BASIC_MASK)
			return -ENOENT;
		*reason = v;
		return 0;
	}
	switch (isa) {
	case VMEXIT_ISA_VMX:
		if (strchr(name, '|'))
			return vmx_flags_lookup(name, reason);
		break;
	case VMEXIT_ISA_USER:
		if (prefix_eq(name, "KVM_EXIT_") && !table_lookup(isa, name + 9, reason))
			return 0;
		if (name_eq(name, "EINTR")) {
			*reason = VMEXIT_UREASON_ERRNO | EINTR;
			return 0;
		}
		if (prefix_eq(name, "error(")) {
			size_t l = strlen(name);
			char num[16];

			if (l < 8 || l - 7 >= sizeof(num) || name[l - 1] != ')')
				break;
			memcpy(num, name + 6, l - 7);
			num[l - 7] = '\0';
			/* error(-14) and error(14) are the same run result. */
			if (!parse_u32(num[0] == '-' ? num + 1 : num, &v) && v &&
			    !(v & VMEXIT_UREASON_ERRNO)) {
				*reason = VMEXIT_UREASON_ERRNO | v;
				return 0;
			}
		}
		break;
	}
	return -ENOENT;
}

static int add_sel(struct reason_sel *out, int *n, int max, __u32 isa, __u32 reason)
{
	int i;

	for (i = 0; i < *n; i++)
		if (out[i].isa == isa && out[i].reason == reason)
			return 0;
	if (*n >= max)
		return -E2BIG;
	out[*n].isa = isa;
	out[*n].reason = reason;
	(*n)++;
	return 0;
}

/* One selector, already trimmed; appends its pairs. 0, -ENOENT (unknown) or -E2BIG. */
/* NAME of fn(NAME), top's (kvm_stat's) spelling, or NULL. */
static char *unwrap_call(char *item, const char *fn)
{
	size_t l = strlen(fn), n = strlen(item);

	if (n < l + 3 || strncasecmp(item, fn, l) || item[l] != '(' || item[n - 1] != ')')
		return NULL;
	item[n - 1] = '\0';
	return item + l + 1;
}

static int parse_item(char *item, struct reason_sel *out, int *n, int max)
{
	char *colon = strchr(item, ':'), *inner;
	const char *what = item;
	bool found = false, kernel_only = false;
	__u32 isa = 0, v;
	size_t i;
	int err;

	if ((inner = unwrap_call(item, "kvm_userspace_exit"))) {
		isa = VMEXIT_ISA_USER;
		what = inner;
	} else if ((inner = unwrap_call(item, "kvm_exit"))) {
		kernel_only = true;
		what = inner;
	} else if (colon) {
		*colon = '\0';
		err = isa_parse(item, &isa);
		*colon = ':';
		if (err)
			return -ENOENT;
		what = colon + 1;
		while (isspace((unsigned char)*what))
			what++;
	}
	if (!*what)
		return -ENOENT;

	if (!parse_u32(what, &v)) {
		for (i = 0; i < ARRAY_SIZE(all_isas); i++) {
			if ((isa && isa != all_isas[i]) ||
			    (kernel_only && all_isas[i] == VMEXIT_ISA_USER))
				continue;
			err = add_sel(out, n, max, all_isas[i], v);
			if (err)
				return err;
		}
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(all_isas); i++) {
		if ((isa && isa != all_isas[i]) || (kernel_only && all_isas[i] == VMEXIT_ISA_USER))
			continue;
		if (reason_lookup(all_isas[i], what, &v))
			continue;
		err = add_sel(out, n, max, all_isas[i], v);
		if (err)
			return err;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

int reason_parse_list(const char *list, struct reason_sel *out, int max, char *err,
		      size_t errlen)
{
	char *copy, *item, *next;
	int n = 0, ret;

	if (!list || !*list) {
		snprintf(err, errlen, "empty exit reason list (see 'vmexit list' for names)");
		return -1;
	}
	copy = strdup(list);
	if (!copy) {
		snprintf(err, errlen, "out of memory parsing exit reasons");
		return -1;
	}
	for (item = copy; item; item = next) {
		char *end;

		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		while (isspace((unsigned char)*item))
			item++;
		end = item + strlen(item);
		while (end > item && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (!*item) {
			snprintf(err, errlen, "empty item in exit reason list '%s'", list);
			n = -1;
			break;
		}
		ret = parse_item(item, out, &n, max);
		if (ret == -E2BIG) {
			snprintf(err, errlen, "too many exit reasons at '%s' (at most %d)", item,
				 max);
			n = -1;
			break;
		}
		if (ret) {
			snprintf(err, errlen,
				 "unknown exit reason '%s' (run 'vmexit list' for valid names, "
				 "or give [vmx:|svm:|user:|arm64:]NUMBER)", item);
			n = -1;
			break;
		}
	}
	free(copy);
	return n;
}

const char *reason_label(__u32 isa, __u32 reason, char *buf, size_t len)
{
	char r[REASON_STR_MAX];

	reason_str(isa, reason, r, sizeof(r));
	/* A failed KVM_RUN (EINTR, error(EIO)) is no KVM_EXIT_* reason. */
	snprintf(buf, len, "%s%s",
		 isa == VMEXIT_ISA_USER && !(reason & VMEXIT_UREASON_ERRNO) ? "KVM_EXIT_" : "", r);
	return buf;
}

int reason_list_print(FILE *f)
{
	static const char *const titles[] = {
		[VMEXIT_ISA_VMX] = "Intel VMX basic exit reasons",
		[VMEXIT_ISA_SVM] = "AMD SVM exit codes",
		[VMEXIT_ISA_USER] = "exits to the VMM (KVM_EXIT_*) and failed KVM_RUN",
		[VMEXIT_ISA_ARM64] = "AArch64 trap exception classes (ESR_ELx.EC), then "
				     "0x100 | ARM_EXCEPTION_* for exits that are not traps",
	};
	size_t i, j, n;

	for (i = 0; i < ARRAY_SIZE(all_isas); i++) {
		__u32 isa = all_isas[i];
		const struct reason_entry *t = reason_table(isa, &n);

		fprintf(f, "%s%s: %s\n", i ? "\n" : "", isa_name(isa), titles[isa]);
		for (j = 0; j < n; j++) {
			char code[16];

			/* SVM codes and ECs are read in hex (APM, GHCB spec, Arm ARM), the others
			 * in decimal. */
			if (isa == VMEXIT_ISA_SVM || isa == VMEXIT_ISA_ARM64 ||
			    t[j].code & VMEXIT_UREASON_ERRNO)
				snprintf(code, sizeof(code), "0x%x", t[j].code);
			else
				snprintf(code, sizeof(code), "%u", t[j].code);
			fprintf(f, "  %10s  %s%s\n", code, isa == VMEXIT_ISA_USER &&
				!(t[j].code & VMEXIT_UREASON_ERRNO) ? "KVM_EXIT_" : "", t[j].name);
			if (out_error(f))
				return out_error(f);
		}
	}
	fprintf(f, "\nSelect with NAME, NUMBER or ISA:NAME (ISA: vmx, svm, user, arm64), "
		"comma-separated;\nnames match case-insensitively, and a bare NUMBER selects "
		"that code in every ISA.\nKVM_EXIT_ is optional (IO, user:IO), and top's "
		"kvm_exit(NAME) and kvm_userspace_exit(NAME) are taken too.\n");
	return out_error(f);
}

static const char *const kvm_event_names[VMEXIT_KVM_NR] = {
#define NAME(ID, id, name) [VMEXIT_KVM_##ID] = #name,
	VMEXIT_KVM_EVENTS(NAME)
#undef NAME
};
#define COUNT_ONE(ID, id, name) +1
_Static_assert(0 VMEXIT_KVM_EVENTS(COUNT_ONE) == VMEXIT_KVM_NR - 1,
	       "kvm event ids run from 1 without gaps: the names table is indexed by them");
#undef COUNT_ONE

const char *kvm_event_name(__u32 id)
{
	return id < VMEXIT_KVM_NR ? kvm_event_names[id] : NULL;
}

int kvm_event_lookup(const char *name)
{
	if (!strncasecmp(name, "kvm_", 4))
		name += 4;
	for (int i = 1; i < VMEXIT_KVM_NR; i++) {
		if (!strcasecmp(name, kvm_event_names[i]))
			return i;
	}
	return -ENOENT;
}

const char *kvm_event_list(const char *prefix, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int id = 1; id < VMEXIT_KVM_NR && n < len; id++) {
		int w = snprintf(buf + n, len - n, "%s%s%s",
				 id == 1 ? "" : id == VMEXIT_KVM_NR - 1 ? " or " : ", ", prefix,
				 kvm_event_names[id]);

		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}

int kvm_event_parse_list(const char *list, __u32 *mask, char *err, size_t errlen)
{
	char item[32];
	const char *s = list, *c;
	int id, n;

	*mask = 0;
	for (;;) {
		for (c = s; *c && *c != ','; c++)
			;
		if ((size_t)(c - s) >= sizeof(item) || c == s)
			goto bad;
		memcpy(item, s, c - s);
		item[c - s] = '\0';
		if (!strcasecmp(item, "all")) {
			*mask |= KVM_EVENTS_ALL;
		} else {
			id = kvm_event_lookup(item);
			if (id < 0)
				goto bad;
			*mask |= 1u << id;
		}
		if (!*c)
			return 0;
		s = c + 1;
	}
bad:
	n = snprintf(err, errlen, "unknown kvm event '%.*s' (valid: all", (int)(c - s > 32 ? 32 :
		     c - s), s);
	for (id = 1; id < VMEXIT_KVM_NR && n >= 0 && (size_t)n < errlen; id++)
		n += snprintf(err + n, errlen - n, ", %s", kvm_event_names[id]);
	if (n >= 0 && (size_t)n < errlen)
		snprintf(err + n, errlen - n, ")");
	return -1;
}
