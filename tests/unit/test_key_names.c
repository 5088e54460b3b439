// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in key names (src/model/key_names.c) against the numbers of their sources: the host's
 * interrupt vectors of Linux's arch/x86/include/asm/irq_vectors.h, the SMCCC/PSCI function ids
 * of include/uapi/linux/psci.h and include/linux/arm-smccc.h, KVM_HC_* of
 * include/uapi/linux/kvm_para.h.
 */
#include "check.h"
#include "key_names.h"

static const char *name_of(__u32 kind, __u64 key)
{
	struct key_note k = { .kind = kind, .key = key };

	return key_builtin_name(&k);
}

static void test_vectors(void)
{
	struct key_note k = { .kind = KEY_VECTOR, .key = 0xec };
	char b[64];

	CHECK_STR(name_of(KEY_VECTOR, 0x02), "NMI");
	CHECK_STR(name_of(KEY_VECTOR, 0xec), "LOCAL_TIMER");
	CHECK_STR(name_of(KEY_VECTOR, 0xf0), "POSTED_INTR_NESTED");
	CHECK_STR(name_of(KEY_VECTOR, 0xf1), "POSTED_INTR_WAKEUP");
	CHECK_STR(name_of(KEY_VECTOR, 0xf2), "POSTED_INTR");
	CHECK_STR(name_of(KEY_VECTOR, 0xf6), "IRQ_WORK");
	CHECK_STR(name_of(KEY_VECTOR, 0xfb), "CALL_FUNCTION_SINGLE");
	CHECK_STR(name_of(KEY_VECTOR, 0xfc), "CALL_FUNCTION");
	CHECK_STR(name_of(KEY_VECTOR, 0xfd), "RESCHEDULE");
	CHECK_STR(name_of(KEY_VECTOR, 0xff), "SPURIOUS_APIC");
	/* 0xf5 is unused; 0x41 is a device's (allocated at run time); 0xeb only since 6.10. */
	CHECK_STR(name_of(KEY_VECTOR, 0xf5), "");
	CHECK_STR(name_of(KEY_VECTOR, 0x41), "");
	CHECK_STR(name_of(KEY_VECTOR, 0xeb), "");
	/* The numbers name vectors only: port 0xfd is no RESCHEDULE. */
	CHECK_STR(name_of(KEY_PORT, 0xfd), "fpu");
	CHECK_STR(key_kind_name(KEY_VECTOR), "vector");
	CHECK_STR(key_str(&k, key_builtin_name(&k), b, sizeof(b)), "0xec LOCAL_TIMER");
}

static const char *call_of(__u32 dir, __u64 key)
{
	struct key_note k = { .kind = KEY_HYPERCALL, .dir = dir, .key = key };

	return key_builtin_name(&k);
}

/* arm64 HVC ids (dir smccc) and x86 KVM hypercalls (no dir) each name from their own table. */
static void test_hypercalls(void)
{
	struct key_note k = { .kind = KEY_HYPERCALL, .dir = KEY_DIR_SMCCC, .key = 0x84000000 };
	char b[64];

	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000000), "PSCI_VERSION");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000001), "CPU_SUSPEND");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000001), "CPU_SUSPEND");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000002), "CPU_OFF");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000003), "CPU_ON");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000003), "CPU_ON");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000004), "AFFINITY_INFO");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000006), "MIGRATE_INFO_TYPE");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000008), "SYSTEM_OFF");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000009), "SYSTEM_RESET");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x8400000a), "PSCI_FEATURES");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000012), "SYSTEM_RESET2");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x80000000), "SMCCC_VERSION");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x80000001), "SMCCC_ARCH_FEATURES");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x80008000), "SMCCC_ARCH_WORKAROUND_1");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x80007fff), "SMCCC_ARCH_WORKAROUND_2");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x80003fff), "SMCCC_ARCH_WORKAROUND_3");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x84000053), "TRNG_RND32");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000053), "TRNG_RND64");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0x86000001), "KVM_PTP");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc5000021), "PV_TIME_ST");
	/* No SMC64 form of PSCI_VERSION or CPU_OFF. */
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000000), "");
	CHECK_STR(call_of(KEY_DIR_SMCCC, 0xc4000002), "");
	/* x0 = 5 on arm64 is no KVM_HC_KICK_CPU, and 0x84000000 on x86 no PSCI call. */
	CHECK_STR(call_of(KEY_DIR_SMCCC, 5), "");
	CHECK_STR(call_of(KEY_DIR_NONE, 5), "KICK_CPU");
	CHECK_STR(call_of(KEY_DIR_NONE, 0x84000000), "");
	CHECK_STR(call_of(KEY_DIR_HV, 0x84000000), "");
	CHECK_STR(key_dir_name(KEY_DIR_SMCCC), "smccc");
	CHECK_STR(key_str(&k, key_builtin_name(&k), b, sizeof(b)), "0x84000000 smccc PSCI_VERSION");
}

int main(void)
{
	test_vectors();
	test_hypercalls();
	CHECK_DONE("test_key_names");
}
