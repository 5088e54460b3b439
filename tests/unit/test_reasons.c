// SPDX-License-Identifier: GPL-2.0
/*
 * Exit-reason tables checked against independent sources: the uapi headers' constants and
 * name tables (VMX_EXIT_REASONS, SVM_EXIT_REASONS), and, when tracefs is readable, the symbol
 * tables the running kernel's kvm_exit / kvm_userspace_exit tracepoints print.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/kvm.h>		/* also asm/kvm.h: the DE_VECTOR... SVM_EXIT_REASONS uses */
#include <asm/vmx.h>
#include <asm/svm.h>

#include "check.h"
#include "kvm_event_fields.h"
#include "reasons.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const __u32 isas[] = {
	VMEXIT_ISA_VMX, VMEXIT_ISA_SVM, VMEXIT_ISA_USER, VMEXIT_ISA_ARM64
};

static void test_isa(void)
{
	__u32 isa = 0;

	CHECK_STR(isa_name(VMEXIT_ISA_VMX), "vmx");
	CHECK_STR(isa_name(VMEXIT_ISA_SVM), "svm");
	CHECK_STR(isa_name(VMEXIT_ISA_USER), "user");
	CHECK_STR(isa_name(VMEXIT_ISA_ARM64), "arm64");
	CHECK_STR(isa_name(0), "?");
	CHECK_STR(isa_name(42), "?");
	CHECK(!isa_parse("vmx", &isa) && isa == VMEXIT_ISA_VMX);
	CHECK(!isa_parse("Intel", &isa) && isa == VMEXIT_ISA_VMX);
	CHECK(!isa_parse("SVM", &isa) && isa == VMEXIT_ISA_SVM);
	CHECK(!isa_parse("amd", &isa) && isa == VMEXIT_ISA_SVM);
	CHECK(!isa_parse("user", &isa) && isa == VMEXIT_ISA_USER);
	CHECK(!isa_parse("arm64", &isa) && isa == VMEXIT_ISA_ARM64);
	CHECK(!isa_parse("AArch64", &isa) && isa == VMEXIT_ISA_ARM64);
	CHECK_EQ_U64(VMEXIT_ISA_ARM64, 4);
	CHECK_EQ_U64(isa_parse("arm", &isa), (__u64)-EINVAL);
	CHECK_EQ_U64(isa_parse("", &isa), (__u64)-EINVAL);
}

/* The uapi headers' own (code, name) tables must agree with ours name for name. */
static void test_uapi_tables(void)
{
	static const struct { __u32 code; const char *name; } vmx[] = { VMX_EXIT_REASONS };
	static const struct { __u32 code; const char *name; } svm[] = { SVM_EXIT_REASONS };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vmx); i++)
		CHECK_STR(reason_name(VMEXIT_ISA_VMX, vmx[i].code), vmx[i].name);
	for (i = 0; i < ARRAY_SIZE(svm); i++)
		CHECK_STR(reason_name(VMEXIT_ISA_SVM, svm[i].code), svm[i].name);

	/* A few by constant, including the ones operators see most. */
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_EPT_VIOLATION), "EPT_VIOLATION");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_EPT_MISCONFIG), "EPT_MISCONFIG");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_IO_INSTRUCTION), "IO_INSTRUCTION");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_HLT), "HLT");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_MSR_WRITE), "MSR_WRITE");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_NOTIFY), "NOTIFY");
	CHECK_EQ_U64(EXIT_REASON_EPT_VIOLATION, 48);
#ifdef EXIT_REASON_TDCALL
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_TDCALL), "TDCALL");
#endif
#ifdef EXIT_REASON_MSR_READ_IMM
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_MSR_READ_IMM), "MSR_READ_IMM");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, EXIT_REASON_MSR_WRITE_IMM), "MSR_WRITE_IMM");
#endif
	/* Newer than the build host's headers may be: numbers from the kernel's kvm_exit format. */
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, 77), "TDCALL");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, 84), "MSR_READ_IMM");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, 85), "MSR_WRITE_IMM");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, 0xa5), "buslock");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, 0xa6), "idle-halt");

	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_NPF), "npf");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_IOIO), "io");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_MSR), "msr");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_VMGEXIT), "vmgexit");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_AVIC_INCOMPLETE_IPI), "avic_incomplete_ipi");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, (__u32)SVM_EXIT_ERR), "invalid_guest_state");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_EXCP_BASE + PF_VECTOR), "PF excp");
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_VMGEXIT_PSC), "vmgexit_page_state_change");
#ifdef SVM_VMGEXIT_TERM_REQUEST
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_VMGEXIT_TERM_REQUEST), "vmgexit_term_request");
#endif
#ifdef SVM_EXIT_RDPRU
	CHECK_STR(reason_name(VMEXIT_ISA_SVM, SVM_EXIT_RDPRU), "rdpru");
#endif
}

/* KVM_EXIT_<X> must be named <X>: the name is derived from the header's macro name. */
#define U(x) { KVM_EXIT_##x, #x }
static void test_uapi_user(void)
{
	static const struct { __u32 code; const char *name; } user[] = {
		U(UNKNOWN), U(EXCEPTION), U(IO), U(HYPERCALL), U(DEBUG), U(HLT), U(MMIO),
		U(IRQ_WINDOW_OPEN), U(SHUTDOWN), U(FAIL_ENTRY), U(INTR), U(SET_TPR), U(TPR_ACCESS),
		U(S390_SIEIC), U(S390_RESET), U(DCR), U(NMI), U(INTERNAL_ERROR), U(OSI),
		U(PAPR_HCALL), U(S390_UCONTROL), U(WATCHDOG), U(S390_TSCH), U(EPR), U(SYSTEM_EVENT),
		U(S390_STSI), U(IOAPIC_EOI), U(HYPERV), U(ARM_NISV), U(X86_RDMSR), U(X86_WRMSR),
#ifdef KVM_EXIT_DIRTY_RING_FULL
		U(DIRTY_RING_FULL), U(AP_RESET_HOLD), U(X86_BUS_LOCK),
#endif
#ifdef KVM_EXIT_XEN
		U(XEN),
#endif
#ifdef KVM_EXIT_RISCV_SBI
		U(RISCV_SBI),
#endif
#ifdef KVM_EXIT_RISCV_CSR
		U(RISCV_CSR),
#endif
#ifdef KVM_EXIT_NOTIFY
		U(NOTIFY),
#endif
#ifdef KVM_EXIT_LOONGARCH_IOCSR
		U(LOONGARCH_IOCSR),
#endif
#ifdef KVM_EXIT_MEMORY_FAULT
		U(MEMORY_FAULT),
#endif
#ifdef KVM_EXIT_TDX
		U(TDX),
#endif
#ifdef KVM_EXIT_ARM_SEA
		U(ARM_SEA),
#endif
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(user); i++)
		CHECK_STR(reason_name(VMEXIT_ISA_USER, user[i].code), user[i].name);
	/* Values from include/uapi/linux/kvm.h of 6.16+, which the build host may predate. */
	CHECK_STR(reason_name(VMEXIT_ISA_USER, 38), "LOONGARCH_IOCSR");
	CHECK_STR(reason_name(VMEXIT_ISA_USER, 39), "MEMORY_FAULT");
	CHECK_STR(reason_name(VMEXIT_ISA_USER, 40), "TDX");
	CHECK_STR(reason_name(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EINTR), "restart");
	CHECK_STR(reason_name(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EFAULT), "error(EFAULT)");
}
#undef U

/*
 * AArch64: exception classes checked by hand against ESR_ELx_EC_* in the kernel's
 * arch/arm64/include/asm/esr.h (no uapi header has them), the non-trap kinds against
 * ARM_EXCEPTION_* in asm/kvm_asm.h and HVC_STUB_ERR in asm/virt.h.
 */
static void test_arm64(void)
{
	static const struct reason_entry want[] = {
		{ 0x00, "UNKNOWN" }, { 0x01, "WFx" }, { 0x03, "CP15_32" }, { 0x07, "FP_ASIMD" },
		{ 0x0e, "ILL" }, { 0x12, "HVC32" }, { 0x16, "HVC64" }, { 0x17, "SMC64" },
		{ 0x18, "SYS64" }, { 0x19, "SVE" }, { 0x1a, "ERET" }, { 0x20, "IABT_LOW" },
		{ 0x21, "IABT_CUR" }, { 0x24, "DABT_LOW" }, { 0x25, "DABT_CUR" },
		{ 0x2f, "SERROR" }, { 0x30, "BREAKPT_LOW" }, { 0x32, "SOFTSTP_LOW" },
		{ 0x34, "WATCHPT_LOW" }, { 0x3a, "VECTOR32" }, { 0x3c, "BRK64" },
		{ 0x100, "IRQ" }, { 0x101, "EL1_SERROR" }, { 0x103, "IL" },
		{ 0x100 | 0xbadca11, "HYP_GONE" },
	};
	/* Unallocated classes (esr.h's "Unallocated EC" comments) and TRAP, which has an EC. */
	static const __u32 none[] = { 0x02, 0x0b, 0x0f, 0x10, 0x1b, 0x1e, 0x23, 0x29, 0x2e,
				      0x36, 0x39, 0x3b, 0x3d, 0x3f, 0x40, 0x102, 0x104 };
	struct reason_sel sel[8];
	const struct reason_entry *t;
	char err[256];
	size_t i, n;
	__u32 v;

	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK_STR(reason_name(VMEXIT_ISA_ARM64, want[i].code), want[i].name);
	for (i = 0; i < ARRAY_SIZE(none); i++)
		CHECK(!reason_name(VMEXIT_ISA_ARM64, none[i]));
	/* Every EC fits ESR_ELx.EC (6 bits); every other code is in the non-trap space. */
	t = reason_table(VMEXIT_ISA_ARM64, &n);
	for (i = 0; t && i < n; i++)
		CHECK(t[i].code <= 0x3f || (t[i].code & VMEXIT_ARM64_EXC));
	CHECK_EQ_U64(VMEXIT_ARM64_EXC, 0x100);
	CHECK_EQ_U64(VMEXIT_ARM64_TRAP, 2);

	CHECK(!reason_lookup(VMEXIT_ISA_ARM64, "dabt-low", &v) && v == 0x24);
	CHECK(!reason_lookup(VMEXIT_ISA_ARM64, "wfx", &v) && v == 0x01);
	CHECK(!reason_lookup(VMEXIT_ISA_ARM64, "UNKNOWN_0x2", &v) && v == 0x02);
	CHECK(reason_lookup(VMEXIT_ISA_ARM64, "ESR_ELx_EC_DABT_LOW", &v) == -ENOENT);
	CHECK(reason_lookup(VMEXIT_ISA_VMX, "DABT_LOW", &v) == -ENOENT);

	CHECK_EQ_U64(reason_parse_list("arm64:DABT_LOW", sel, 8, err, sizeof(err)), 1);
	CHECK(sel[0].isa == VMEXIT_ISA_ARM64 && sel[0].reason == 0x24);
	CHECK_EQ_U64(reason_parse_list("aarch64:0x16,arm64:IRQ", sel, 8, err, sizeof(err)), 2);
	CHECK(sel[0].isa == VMEXIT_ISA_ARM64 && sel[0].reason == 0x16);
	CHECK(sel[1].isa == VMEXIT_ISA_ARM64 && sel[1].reason == 0x100);
	/* Bare names unique to arm64 need no prefix; x86 names stay x86 only. */
	CHECK_EQ_U64(reason_parse_list("SYS64,HVC64", sel, 8, err, sizeof(err)), 2);
	CHECK(sel[0].isa == VMEXIT_ISA_ARM64 && sel[0].reason == 0x18);
	CHECK_EQ_U64(reason_parse_list("EPT_VIOLATION", sel, 8, err, sizeof(err)), 1);
	CHECK_EQ_U64(sel[0].isa, VMEXIT_ISA_VMX);
	/* "UNKNOWN" is a name in user and arm64 (KVM_EXIT_UNKNOWN, EC 0). */
	CHECK_EQ_U64(reason_parse_list("UNKNOWN", sel, 8, err, sizeof(err)), 2);
	CHECK_EQ_U64(reason_parse_list("arm64:EPT_VIOLATION", sel, 8, err, sizeof(err)),
		     (__u64)-1);
	CHECK(strstr(err, "arm64:]NUMBER") != NULL);
}

/* Sorted (reason_name() bisects), unique, and every name parses back to its own code. */
static void test_round_trip(void)
{
	char buf[REASON_STR_MAX], err[256], item[REASON_STR_MAX + 8];
	struct reason_sel sel[4];
	size_t i, j, n;
	__u32 code;

	for (i = 0; i < ARRAY_SIZE(isas); i++) {
		const struct reason_entry *t = reason_table(isas[i], &n);

		CHECK(t && n > 20);
		for (j = 0; t && j < n; j++) {
			if (j)
				CHECK(t[j - 1].code < t[j].code);
			CHECK(strlen(t[j].name) < REASON_STR_MAX);
			CHECK(!strchr(t[j].name, ',') && !strchr(t[j].name, ':'));
			CHECK_STR(reason_name(isas[i], t[j].code), t[j].name);
			CHECK_STR(reason_str(isas[i], t[j].code, buf, sizeof(buf)), t[j].name);
			code = ~t[j].code;
			CHECK(!reason_lookup(isas[i], t[j].name, &code));
			CHECK_EQ_U64(code, t[j].code);

			snprintf(item, sizeof(item), "%s:%s", isa_name(isas[i]), t[j].name);
			CHECK_EQ_U64(reason_parse_list(item, sel, 4, err, sizeof(err)), 1);
			CHECK_EQ_U64(sel[0].isa, isas[i]);
			CHECK_EQ_U64(sel[0].reason, t[j].code);
		}
	}
	CHECK(!reason_table(0, &n) && n == 0);
	CHECK(!reason_table(5, &n) && n == 0);
}

static void check_fallback(__u32 isa, __u32 reason, const char *want)
{
	char buf[REASON_STR_MAX];
	__u32 back = ~reason;

	CHECK_STR(reason_str(isa, reason, buf, sizeof(buf)), want);
	if (isa < VMEXIT_ISA_VMX || isa > VMEXIT_ISA_ARM64)
		return;
	/* Whatever reason_str() prints must select the same code again. */
	if (reason_lookup(isa, buf, &back)) {
		fprintf(stderr, "reason_lookup(%s, \"%s\") failed\n", isa_name(isa), buf);
		check_failures++;
		return;
	}
	CHECK_EQ_U64(back, reason);
}

static void test_fallbacks(void)
{
	char small[4];

	CHECK(!reason_name(VMEXIT_ISA_VMX, 35));
	CHECK(!reason_name(VMEXIT_ISA_VMX, 0x80000000u | 33));
	CHECK(!reason_name(VMEXIT_ISA_SVM, 0x99));
	CHECK(!reason_name(VMEXIT_ISA_USER, 1000));
	CHECK(!reason_name(0, 1));

	check_fallback(VMEXIT_ISA_VMX, 35, "UNKNOWN_0x23");
	check_fallback(VMEXIT_ISA_VMX, 0xffff, "UNKNOWN_0xffff");
	check_fallback(VMEXIT_ISA_VMX, 0x80000000u | 33, "FAILED_VMENTRY|INVALID_STATE");
	check_fallback(VMEXIT_ISA_VMX, 0x80000000u | 34, "FAILED_VMENTRY|MSR_LOAD_FAIL");
	check_fallback(VMEXIT_ISA_VMX, 0x80000000u | 35, "FAILED_VMENTRY|UNKNOWN_0x23");
	check_fallback(VMEXIT_ISA_VMX, 0x08000000u | 48, "0x8000000|EPT_VIOLATION");
	check_fallback(VMEXIT_ISA_VMX, 0x88000000u | 48, "FAILED_VMENTRY|0x8000000|EPT_VIOLATION");
	check_fallback(VMEXIT_ISA_SVM, 0x99, "UNKNOWN_0x99");
	check_fallback(VMEXIT_ISA_SVM, 0x80001234, "UNKNOWN_0x80001234");
	check_fallback(VMEXIT_ISA_USER, 200, "UNKNOWN_0xc8");
	check_fallback(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EINTR, "restart");
	check_fallback(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EFAULT, "error(EFAULT)");
	check_fallback(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | 200, "error(-200)");
	check_fallback(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO, "UNKNOWN_0x80000000");
	check_fallback(VMEXIT_ISA_ARM64, 0x02, "UNKNOWN_0x2");	/* unallocated EC */
	check_fallback(VMEXIT_ISA_ARM64, 0x3f, "UNKNOWN_0x3f");
	check_fallback(VMEXIT_ISA_ARM64, VMEXIT_ARM64_EXC | 2, "UNKNOWN_0x102");
	check_fallback(VMEXIT_ISA_ARM64, VMEXIT_ARM64_EXC | 7, "UNKNOWN_0x107");
	check_fallback(0, 7, "0x7");
	check_fallback(9, 0xdeadbeef, "0xdeadbeef");

	/* Truncated but terminated, and the buffer is what comes back. */
	CHECK(reason_str(VMEXIT_ISA_VMX, 48, small, sizeof(small)) == small);
	CHECK_STR(small, "EPT");
	CHECK_STR(reason_str(VMEXIT_ISA_SVM, 0x99, small, sizeof(small)), "UNK");
}

static int has(const struct reason_sel *s, int n, __u32 isa, __u32 reason)
{
	int i;

	for (i = 0; i < n; i++)
		if (s[i].isa == isa && s[i].reason == reason)
			return 1;
	return 0;
}

#define PARSE_OK(list, want)						\
	do {								\
		err[0] = '\0';						\
		n = reason_parse_list(list, sel, 16, err, sizeof(err));	\
		if (n != (want))					\
			fprintf(stderr, "parse \"%s\": %d (%s)\n", list, n, err); \
		CHECK_EQ_U64(n, want);					\
	} while (0)

#define PARSE_BAD(list, needle)						\
	do {								\
		err[0] = '\0';						\
		n = reason_parse_list(list, sel, 16, err, sizeof(err));	\
		CHECK_EQ_U64(n, (unsigned long long)-1);		\
		if (!strstr(err, needle)) {				\
			fprintf(stderr, "parse \"%s\": err \"%s\" lacks \"%s\"\n", \
				list, err, needle);			\
			check_failures++;				\
		}							\
		CHECK(!strchr(err, '\n'));				\
	} while (0)

static void test_parse(void)
{
	struct reason_sel sel[16];
	char err[256];
	int n;

	PARSE_OK("EPT_VIOLATION", 1);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_EPT_VIOLATION));
	PARSE_OK("ept_violation", 1);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_EPT_VIOLATION));
	PARSE_OK("npf", 1);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_NPF));

	/* One name, several ISAs. */
	PARSE_OK("io", 2);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_IOIO));
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_IO));
	PARSE_OK("IO", 2);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_IOIO));
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_IO));
	PARSE_OK("IO_INSTRUCTION", 1);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_IO_INSTRUCTION));
	PARSE_OK("hlt", 3);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_HLT));
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_HLT));
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_HLT));

	/* ISA-qualified names and numbers. */
	PARSE_OK("svm:0x7b", 1);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_IOIO));
	PARSE_OK("vmx:30", 1);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_IO_INSTRUCTION));
	PARSE_OK("user:MMIO", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_MMIO));
	/* Every spelling an output prints parses back: the tables' KVM_EXIT_IO, top's (kvm_stat's)
	 * kvm_userspace_exit(IO) and kvm_exit(HLT), the latter kernel exits only. */
	PARSE_OK("KVM_EXIT_IO", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_IO));
	PARSE_OK("kvm_userspace_exit(IO)", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_IO));
	PARSE_OK("kvm_exit(hlt)", 2);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_HLT));
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_HLT));
	PARSE_OK("kvm_exit(EPT_VIOLATION),kvm_userspace_exit(MMIO)", 2);
	PARSE_BAD("kvm_exit()", "unknown exit reason 'kvm_exit()'");
	PARSE_BAD("kvm_userspace_exit(npf)", "unknown exit reason");
	PARSE_BAD("kvm_exit(IO", "unknown exit reason");
	{
		char b[64];

		CHECK_STR(reason_label(VMEXIT_ISA_USER, KVM_EXIT_IO, b, sizeof(b)), "KVM_EXIT_IO");
		CHECK_STR(reason_label(VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EINTR, b, sizeof(b)),
			  "restart");
		CHECK_STR(reason_label(VMEXIT_ISA_SVM, SVM_EXIT_NPF, b, sizeof(b)), "npf");
	}
	PARSE_OK("user:io", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_IO));
	PARSE_OK("AMD:io", 1);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_IOIO));
	PARSE_OK("intel:hlt", 1);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, EXIT_REASON_HLT));
	PARSE_OK("svm:-1", 1);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, 0xffffffffu));

	/* Bare numbers: that code in every ISA. */
	PARSE_OK("48", 4);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, 48));
	CHECK(has(sel, n, VMEXIT_ISA_SVM, 48));
	CHECK(has(sel, n, VMEXIT_ISA_USER, 48));
	CHECK(has(sel, n, VMEXIT_ISA_ARM64, 48));
	PARSE_OK("0x400", 4);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_NPF));
	CHECK(has(sel, n, VMEXIT_ISA_VMX, 0x400));

	/* Spellings operators paste from trace output. */
	PARSE_OK("KVM_EXIT_MMIO", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, KVM_EXIT_MMIO));
	PARSE_OK("DE excp,DE_excp,de-EXCP", 1);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, SVM_EXIT_EXCP_BASE + DE_VECTOR));
	PARSE_OK("idle_halt", 1);
	CHECK(has(sel, n, VMEXIT_ISA_SVM, 0xa6));
	PARSE_OK("restart,EINTR", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EINTR));
	PARSE_OK("error(-14),error(14),error(EFAULT)", 1);
	CHECK(has(sel, n, VMEXIT_ISA_USER, VMEXIT_UREASON_ERRNO | EFAULT));
	PARSE_OK("FAILED_VMENTRY|INVALID_STATE", 1);
	CHECK(has(sel, n, VMEXIT_ISA_VMX, 0x80000000u | EXIT_REASON_INVALID_STATE));

	/* Lists: order kept, duplicates dropped, blanks around items ignored. */
	PARSE_OK(" npf , EPT_VIOLATION,io,IO,svm:io ", 4);
	CHECK_EQ_U64(sel[0].isa, VMEXIT_ISA_SVM);
	CHECK_EQ_U64(sel[0].reason, SVM_EXIT_NPF);
	CHECK_EQ_U64(sel[1].isa, VMEXIT_ISA_VMX);
	CHECK_EQ_U64(sel[1].reason, EXIT_REASON_EPT_VIOLATION);

	PARSE_BAD("bogus", "'bogus'");
	PARSE_BAD("bogus", "vmexit list");
	PARSE_BAD("npf,bogus", "'bogus'");
	PARSE_BAD("vmx:npf", "'vmx:npf'");
	PARSE_BAD("arm:1", "'arm:1'");
	PARSE_BAD("svm:", "'svm:'");
	PARSE_BAD("0x1g", "'0x1g'");
	PARSE_BAD("0x0x5", "'0x0x5'");
	PARSE_BAD("0x", "'0x'");
	PARSE_BAD("1a", "'1a'");
	PARSE_BAD("0x100000000", "'0x100000000'");
	PARSE_BAD("io,,npf", "empty");
	PARSE_BAD("", "empty");
	PARSE_BAD("FAILED_VMENTRY|npf", "FAILED_VMENTRY|npf");
	PARSE_BAD("error(0)", "error(0)");
	PARSE_BAD("UNKNOWN_-1", "UNKNOWN_-1");

	/* Room for max pairs only: "hlt" needs 3. */
	n = reason_parse_list("hlt", sel, 2, err, sizeof(err));
	CHECK_EQ_U64(n, (unsigned long long)-1);
	CHECK(strstr(err, "too many") != NULL);
	n = reason_parse_list("hlt", sel, 3, err, sizeof(err));
	CHECK_EQ_U64(n, 3);

	/* A tiny error buffer still ends up terminated. */
	n = reason_parse_list("bogus", sel, 16, err, 6);
	CHECK_EQ_U64(n, (unsigned long long)-1);
	CHECK_EQ_U64(strlen(err), 5);
}

static void test_list_print(void)
{
	char *text = NULL, line[128];
	size_t size = 0, total = 0, n, i;
	FILE *f = open_memstream(&text, &size);

	CHECK(f != NULL);
	if (!f)
		return;
	reason_list_print(f);
	fclose(f);
	for (i = 0; i < ARRAY_SIZE(isas); i++) {
		reason_table(isas[i], &n);
		total += n;
	}
	/* Every entry printed once, on its own line: count lines ending in a known name. */
	n = 0;
	for (char *p = text; p && *p;) {
		char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (l < sizeof(line)) {
			memcpy(line, p, l);
			line[l] = '\0';
			if (l > 2 && line[0] == ' ' && line[1] == ' ')
				n++;
		}
		p += l + (nl ? 1 : 0);
	}
	CHECK_EQ_U64(n, total);
	CHECK(strstr(text, " EPT_VIOLATION\n") != NULL);
	/* Exits to the VMM as the tables print them. */
	CHECK(strstr(text, "           2  KVM_EXIT_IO\n") != NULL);
	CHECK(strstr(text, "     0x400  npf\n") != NULL);
	CHECK(strstr(text, "vmx: ") && strstr(text, "svm: ") && strstr(text, "user: "));
	CHECK(strstr(text, "\narm64: ") != NULL);
	CHECK(strstr(text, "      0x24  DABT_LOW\n") != NULL);
	CHECK(strstr(text, "     0x100  IRQ\n") != NULL);
	CHECK(strstr(text, "arm64)") != NULL);	/* the ISA: prefixes the footer lists */
	free(text);
}

/* Evaluates the kernel's code expressions: "48", "0x040 + 13", "-1". */
static int eval_code(const char *s, __u32 *out)
{
	unsigned long long sum = 0;
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-') {
		long long v = strtoll(s, &end, 0);

		*out = (__u32)v;
		return 0;
	}
	for (;;) {
		sum += strtoull(s, &end, 0);
		if (end == s)
			return -1;
		s = end;
		while (isspace((unsigned char)*s))
			s++;
		if (*s != '+')
			break;
		s++;
	}
	*out = (__u32)sum;
	return 0;
}

/*
 * Walks every `{ CODE, "NAME" }` of the idx-th __print_symbolic( in fmt and checks our name.
 * Adjacent string literals ("KVM_EXIT_" "IO") are joined; strip removes a leading prefix.
 */
static int check_symbolic(const char *fmt, int idx, __u32 isa, const char *strip)
{
	const char *p = fmt, *end;
	int pairs = 0;

	while (idx-- >= 0) {
		p = strstr(p, "__print_symbolic(");
		if (!p)
			return -1;
		p += strlen("__print_symbolic(");
	}
	/* The list ends at the first "})" (the closing brace of the last pair). */
	end = strstr(p, "})");
	if (!end)
		return -1;
	while ((p = strchr(p, '{')) && p < end) {
		char name[128] = "", code[64];
		const char *comma = strchr(p, ','), *q;
		size_t l = 0;
		__u32 v;

		if (!comma || (size_t)(comma - p - 1) >= sizeof(code))
			return -1;
		memcpy(code, p + 1, comma - p - 1);
		code[comma - p - 1] = '\0';
		if (eval_code(code, &v))
			return -1;
		for (q = comma; *q && *q != '}';) {
			if (*q++ != '"')
				continue;
			while (*q && *q != '"' && l < sizeof(name) - 1)
				name[l++] = *q++;
			if (*q == '"')
				q++;
		}
		name[l] = '\0';
		if (strip && !strncmp(name, strip, strlen(strip)))
			memmove(name, name + strlen(strip), strlen(name + strlen(strip)) + 1);
		if (!reason_name(isa, v) || strcmp(reason_name(isa, v), name)) {
			fprintf(stderr, "kernel names %s 0x%x \"%s\", we say \"%s\"\n",
				isa_name(isa), v, name, reason_name(isa, v) ?: "(none)");
			check_failures++;
		}
		pairs++;
		p = q;
	}
	return pairs;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;

	if (!f)
		return NULL;
	buf = calloc(1, 1 << 20);
	n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	fclose(f);
	if (buf && !n) {
		free(buf);
		return NULL;
	}
	return buf;
}

static bool kernel_names_unchecked;

static void test_kernel_tracepoints(void)
{
	static const char *const dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], *fmt = NULL;
	size_t i;
	int n;

	for (i = 0; i < ARRAY_SIZE(dirs) && !fmt; i++) {
		snprintf(path, sizeof(path), "%s/events/kvm/kvm_exit/format", dirs[i]);
		fmt = read_text(path);
	}
	if (!fmt) {
		/* With kvm loaded, root reads it: then not finding it is a failure, not a skip. */
		CHECK(geteuid() != 0 || access("/sys/module/kvm", F_OK) != 0);
		kernel_names_unchecked = true;
		return;
	}
	/* The VMX list comes first in kvm_exit's print fmt, then the SVM one. */
	n = check_symbolic(fmt, 0, VMEXIT_ISA_VMX, NULL);
	CHECK(n > 50);
	printf("kernel kvm_exit: %d VMX names checked", n);
	n = check_symbolic(fmt, 1, VMEXIT_ISA_SVM, NULL);
	CHECK(n > 100);
	printf(", %d SVM names checked", n);
	free(fmt);

	path[strlen(path) - strlen("kvm_exit/format")] = '\0';
	strcat(path, "kvm_userspace_exit/format");
	fmt = read_text(path);
	if (fmt) {
		n = check_symbolic(fmt, 0, VMEXIT_ISA_USER, "KVM_EXIT_");
		CHECK(n > 25);
		printf(", %d user names checked", n);
		/* The tracepoint prints errno -4 as "restart". */
		CHECK(strstr(fmt, "-4 ? \"restart\"") != NULL);
		free(fmt);
	}
	printf("\n");
}

/* A recording's table names what this build does not know, and only that. */
static const char *future_names(void *ctx, __u32 isa, __u32 reason)
{
	(void)ctx;
	if (isa == VMEXIT_ISA_VMX && reason == 200)
		return "FUTURE_EXIT";
	if (isa == VMEXIT_ISA_VMX && reason == 48)
		return "NOT_USED";	/* the build's own name must win */
	return NULL;
}

static void test_names_fallback(void)
{
	char buf[REASON_STR_MAX];

	CHECK(reason_name(VMEXIT_ISA_VMX, 200) == NULL);
	reason_names_fallback(future_names, NULL);
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, 200), "FUTURE_EXIT");
	CHECK_STR(reason_str(VMEXIT_ISA_VMX, 200, buf, sizeof(buf)), "FUTURE_EXIT");
	CHECK_STR(reason_name(VMEXIT_ISA_VMX, 48), "EPT_VIOLATION");
	CHECK(reason_name(VMEXIT_ISA_SVM, 200) == NULL);
	reason_names_fallback(NULL, NULL);
	CHECK(reason_name(VMEXIT_ISA_VMX, 200) == NULL);
	CHECK_STR(reason_str(VMEXIT_ISA_VMX, 200, buf, sizeof(buf)), "UNKNOWN_0xc8");
}

/* The kvm event names (--kvm-events, kvm:NAME selectors) and their field table. */
static void test_kvm_events(void)
{
	const struct kvm_event_field *f;
	char err[256];
	__u32 mask;
	size_t n, total = 0;

	CHECK_STR(kvm_event_name(VMEXIT_KVM_PIO), "pio");
	CHECK_STR(kvm_event_name(VMEXIT_KVM_PAGE_FAULT), "page_fault");
	CHECK(kvm_event_name(0) == NULL);
	CHECK(kvm_event_name(VMEXIT_KVM_NR) == NULL);
	CHECK_EQ_U64(kvm_event_lookup("KVM_Inj_Virq"), VMEXIT_KVM_INJ_VIRQ);
	CHECK_EQ_U64(kvm_event_lookup("kvm_"), (__u64)-ENOENT);
	CHECK(!kvm_event_parse_list("pio,kvm_mmio,MSR", &mask, err, sizeof(err)));
	CHECK_EQ_U64(mask, 1u << 1 | 1u << 2 | 1u << 3);
	CHECK(!kvm_event_parse_list("all", &mask, err, sizeof(err)));
	CHECK_EQ_U64(mask, 0x3fe);	/* ids 1 (pio) to 9 (halt_poll_ns) */
	CHECK(kvm_event_parse_list("pio,,mmio", &mask, err, sizeof(err)) == -1);
	CHECK_STR(err, "unknown kvm event '' (valid: all, pio, mmio, msr, cpuid, inj_virq, "
		  "page_fault, msi_set_irq, apic_accept_irq, halt_poll_ns)");
	CHECK_EQ_U64(kvm_event_lookup("kvm_halt_poll_ns"), VMEXIT_KVM_HALT_POLL_NS);
	CHECK(kvm_event_parse_list("pio,exit", &mask, err, sizeof(err)) == -1);
	CHECK(!strncmp(err, "unknown kvm event 'exit' (valid: all, pio,", 41));
	CHECK(kvm_event_parse_list("pio,", &mask, err, 8) == -1);
	CHECK_STR(err, "unknown");
	/* Every event has fields, grouped; names are unique within an event. */
	for (__u32 id = 1; id < VMEXIT_KVM_NR; id++) {
		f = kvm_event_fields(id, &n);
		CHECK(f && n > 0);
		for (size_t i = 0; i < n; i++) {
			CHECK_EQ_U64(f[i].event, id);
			CHECK(kvm_event_field_find(id, f[i].name) == &f[i]);
		}
		total += n;
	}
	/* pio 5, mmio 4, msr 4, cpuid 8, inj_virq 3, page_fault 3, msi_set_irq 2,
	 * apic_accept_irq 4, halt_poll_ns 3. */
	CHECK_EQ_U64(total, 36);
	CHECK(kvm_event_fields(99, &n) == NULL && n == 0);
	CHECK(kvm_event_field_find(VMEXIT_KVM_PIO, "gpa") == NULL);
}

int main(void)
{
	test_isa();
	test_names_fallback();
	test_uapi_tables();
	test_uapi_user();
	test_arm64();
	test_round_trip();
	test_fallbacks();
	test_parse();
	test_list_print();
	test_kernel_tracepoints();
	test_kvm_events();
	if (kernel_names_unchecked && !check_failures) {
		/* Everything else passed, but not all of it ran: the runner counts a skip. */
		printf("SKIP: reasons: kvm_exit/format not readable (not root, or no kvm module), "
		       "the kernel's names were not checked\n");
		return 77;
	}
	CHECK_DONE("reasons");
}
