// SPDX-License-Identifier: GPL-2.0
/*
 * Built-in names of keys: x86 legacy ports and the ones QEMU adds, the x86 MMIO windows of
 * the interrupt controllers and timer, MSRs (architectural, KVM and Hyper-V paravirtual),
 * CPUID leaves, KVM and Hyper-V hypercalls, arm64 SMCCC/PSCI function ids, the host's
 * interrupt vectors. One table per kind; a range names every key in it.
 */
#include <stdbool.h>
#include <stdio.h>
#include "key_names.h"

struct key_range {
	__u64 lo, hi;		/* inclusive */
	const char *name;
};

#define NR(t) (sizeof(t) / sizeof((t)[0]))

/* The PC's fixed ports, and QEMU's (fw_cfg, its debug ports, the ACPI PM block of piix4/q35). */
static const struct key_range ports[] = {
	{ 0x000, 0x01f, "dma1" },	{ 0x020, 0x021, "pic1" },
	{ 0x040, 0x043, "pit" },	{ 0x060, 0x060, "i8042" },
	{ 0x061, 0x061, "pcspk" },	{ 0x064, 0x064, "i8042" },
	{ 0x070, 0x071, "rtc" },	{ 0x080, 0x080, "post" },
	{ 0x081, 0x08f, "dma-page" },	{ 0x092, 0x092, "port92" },
	{ 0x0a0, 0x0a1, "pic2" },	{ 0x0b2, 0x0b3, "apm" },
	{ 0x0c0, 0x0df, "dma2" },	{ 0x0e9, 0x0e9, "debugcon" },
	{ 0x0f0, 0x0ff, "fpu" },	{ 0x170, 0x177, "ide1" },
	{ 0x1ce, 0x1d0, "vbe" },	{ 0x1f0, 0x1f7, "ide0" },
	{ 0x2f8, 0x2ff, "serial" },	{ 0x376, 0x376, "ide1" },
	{ 0x378, 0x37f, "parallel" },	{ 0x3b0, 0x3df, "vga" },
	{ 0x3f0, 0x3f5, "fdc" },	{ 0x3f6, 0x3f6, "ide0" },
	{ 0x3f7, 0x3f7, "fdc" },	{ 0x3f8, 0x3ff, "serial" },
	{ 0x402, 0x402, "isa-debugcon" }, { 0x4d0, 0x4d1, "elcr" },
	{ 0x510, 0x511, "fw_cfg" },	{ 0x514, 0x51b, "fw_cfg-dma" },
	{ 0x600, 0x63f, "acpi-pm" },	{ 0xb000, 0xb03f, "acpi-pm" },
	{ 0xcf8, 0xcfb, "pci-conf-idx" }, { 0xcfc, 0xcff, "pci-conf-data" },
};

static const struct key_range mmio[] = {
	{ 0xfec00000, 0xfec003ff, "ioapic" },
	{ 0xfed00000, 0xfed003ff, "hpet" },
	{ 0xfee00000, 0xfee00fff, "lapic" },
};

static const struct key_range msrs[] = {
	{ 0x10, 0x10, "TSC" },			{ 0x11, 0x11, "KVM_WALL_CLOCK" },
	{ 0x12, 0x12, "KVM_SYSTEM_TIME" },	{ 0x1b, 0x1b, "APIC_BASE" },
	{ 0x3a, 0x3a, "FEATURE_CONTROL" },	{ 0x48, 0x48, "SPEC_CTRL" },
	{ 0x49, 0x49, "PRED_CMD" },		{ 0x8b, 0x8b, "UCODE_REV" },
	{ 0xe7, 0xe7, "MPERF" },		{ 0xe8, 0xe8, "APERF" },
	{ 0x10a, 0x10a, "ARCH_CAPABILITIES" },	{ 0x174, 0x174, "SYSENTER_CS" },
	{ 0x175, 0x175, "SYSENTER_ESP" },	{ 0x176, 0x176, "SYSENTER_EIP" },
	{ 0x1a0, 0x1a0, "MISC_ENABLE" },	{ 0x1d9, 0x1d9, "DEBUGCTL" },
	{ 0x277, 0x277, "PAT" },		{ 0x6e0, 0x6e0, "TSC_DEADLINE" },
	{ 0x802, 0x802, "X2APIC_APICID" },	{ 0x80b, 0x80b, "X2APIC_EOI" },
	{ 0x80f, 0x80f, "X2APIC_SPIV" },	{ 0x830, 0x830, "X2APIC_ICR" },
	{ 0x832, 0x832, "X2APIC_LVTT" },	{ 0x838, 0x838, "X2APIC_TMICT" },
	{ 0x839, 0x839, "X2APIC_TMCCT" },	{ 0x83e, 0x83e, "X2APIC_TDCR" },
	{ 0x83f, 0x83f, "X2APIC_SELF_IPI" },	{ 0x800, 0x8ff, "X2APIC" },
	{ 0x40000000, 0x40000000, "HV_GUEST_OS_ID" }, { 0x40000001, 0x40000001, "HV_HYPERCALL" },
	{ 0x40000002, 0x40000002, "HV_VP_INDEX" }, { 0x40000020, 0x40000020, "HV_TIME_REF_COUNT" },
	{ 0x40000070, 0x40000070, "HV_EOI" },	{ 0x40000071, 0x40000071, "HV_ICR" },
	{ 0x40000072, 0x40000072, "HV_TPR" },
	{ 0x4b564d00, 0x4b564d00, "KVM_WALL_CLOCK_NEW" },
	{ 0x4b564d01, 0x4b564d01, "KVM_SYSTEM_TIME_NEW" },
	{ 0x4b564d02, 0x4b564d02, "KVM_ASYNC_PF_EN" },
	{ 0x4b564d03, 0x4b564d03, "KVM_STEAL_TIME" },
	{ 0x4b564d04, 0x4b564d04, "KVM_PV_EOI_EN" },
	{ 0x4b564d05, 0x4b564d05, "KVM_POLL_CONTROL" },
	{ 0x4b564d06, 0x4b564d06, "KVM_ASYNC_PF_INT" },
	{ 0x4b564d07, 0x4b564d07, "KVM_ASYNC_PF_ACK" },
	{ 0x4b564d08, 0x4b564d08, "KVM_MIGRATION_CONTROL" },
	{ 0xc0000080, 0xc0000080, "EFER" },	{ 0xc0000081, 0xc0000081, "STAR" },
	{ 0xc0000082, 0xc0000082, "LSTAR" },	{ 0xc0000083, 0xc0000083, "CSTAR" },
	{ 0xc0000084, 0xc0000084, "SYSCALL_MASK" }, { 0xc0000100, 0xc0000100, "FS_BASE" },
	{ 0xc0000101, 0xc0000101, "GS_BASE" },	{ 0xc0000102, 0xc0000102, "KERNEL_GS_BASE" },
	{ 0xc0000103, 0xc0000103, "TSC_AUX" },
};

static const struct key_range leaves[] = {
	{ 0x0, 0x0, "vendor" },			{ 0x1, 0x1, "features" },
	{ 0x2, 0x2, "cache-descriptors" },	{ 0x4, 0x4, "cache-params" },
	{ 0x5, 0x5, "monitor" },		{ 0x6, 0x6, "thermal-power" },
	{ 0x7, 0x7, "ext-features" },		{ 0xa, 0xa, "perfmon" },
	{ 0xb, 0xb, "topology" },		{ 0xd, 0xd, "xsave" },
	{ 0x14, 0x14, "processor-trace" },	{ 0x15, 0x15, "tsc-freq" },
	{ 0x16, 0x16, "cpu-freq" },		{ 0x1f, 0x1f, "topology-v2" },
	{ 0x40000000, 0x40000000, "hypervisor" }, { 0x40000001, 0x40000001, "kvm-features" },
	{ 0x80000000, 0x80000000, "ext-max" },	{ 0x80000001, 0x80000001, "ext-features" },
	{ 0x80000002, 0x80000004, "brand" },	{ 0x80000005, 0x80000006, "ext-cache" },
	{ 0x80000007, 0x80000007, "power-mgmt" }, { 0x80000008, 0x80000008, "address-sizes" },
	{ 0x8000000a, 0x8000000a, "svm" },	{ 0x8000001f, 0x8000001f, "sev" },
};

/* KVM_HC_* of include/uapi/linux/kvm_para.h. */
static const struct key_range kvm_calls[] = {
	{ 1, 1, "VAPIC_POLL_IRQ" },	{ 5, 5, "KICK_CPU" },	{ 9, 9, "CLOCK_PAIRING" },
	{ 10, 10, "SEND_IPI" },		{ 11, 11, "SCHED_YIELD" }, { 12, 12, "MAP_GPA_RANGE" },
};

/* Hyper-V call codes (the TLFS), as kvm_hv_hypercall gives them. */
static const struct key_range hv_calls[] = {
	{ 0x02, 0x02, "HvFlushVirtualAddressSpace" },
	{ 0x03, 0x03, "HvFlushVirtualAddressList" },
	{ 0x08, 0x08, "HvNotifyLongSpinWait" },
	{ 0x0b, 0x0b, "HvSendSyntheticClusterIpi" },
	{ 0x13, 0x13, "HvFlushVirtualAddressSpaceEx" },
	{ 0x14, 0x14, "HvFlushVirtualAddressListEx" },
	{ 0x15, 0x15, "HvSendSyntheticClusterIpiEx" },
	{ 0x5c, 0x5c, "HvPostMessage" },
	{ 0x5d, 0x5d, "HvSignalEvent" },
};

/*
 * arm64 HVC function ids (dir "smccc": only kvm_hvc_arm64 notes them, so an x86 hypercall
 * number never meets this table nor an arm64 id KVM_HC_*'s). PSCI 0.2 to 1.3 from
 * include/uapi/linux/psci.h (PSCI_0_2_FN*, PSCI_1_x_FN*; SMC32 ids 0x84..., SMC64 0xc4...),
 * the Arm architecture calls, TRNG and KVM's vendor calls from include/linux/arm-smccc.h.
 */
static const struct key_range smccc_calls[] = {
	{ 0x80000000, 0x80000000, "SMCCC_VERSION" },
	{ 0x80000001, 0x80000001, "SMCCC_ARCH_FEATURES" },
	{ 0x80000002, 0x80000002, "SMCCC_ARCH_SOC_ID" },
	{ 0x80003fff, 0x80003fff, "SMCCC_ARCH_WORKAROUND_3" },
	{ 0x80007fff, 0x80007fff, "SMCCC_ARCH_WORKAROUND_2" },
	{ 0x80008000, 0x80008000, "SMCCC_ARCH_WORKAROUND_1" },
	{ 0x84000000, 0x84000000, "PSCI_VERSION" },
	{ 0x84000001, 0x84000001, "CPU_SUSPEND" },
	{ 0x84000002, 0x84000002, "CPU_OFF" },
	{ 0x84000003, 0x84000003, "CPU_ON" },
	{ 0x84000004, 0x84000004, "AFFINITY_INFO" },
	{ 0x84000005, 0x84000005, "MIGRATE" },
	{ 0x84000006, 0x84000006, "MIGRATE_INFO_TYPE" },
	{ 0x84000007, 0x84000007, "MIGRATE_INFO_UP_CPU" },
	{ 0x84000008, 0x84000008, "SYSTEM_OFF" },
	{ 0x84000009, 0x84000009, "SYSTEM_RESET" },
	{ 0x8400000a, 0x8400000a, "PSCI_FEATURES" },
	{ 0x8400000b, 0x8400000b, "CPU_FREEZE" },
	{ 0x8400000c, 0x8400000c, "CPU_DEFAULT_SUSPEND" },
	{ 0x8400000d, 0x8400000d, "NODE_HW_STATE" },
	{ 0x8400000e, 0x8400000e, "SYSTEM_SUSPEND" },
	{ 0x8400000f, 0x8400000f, "SET_SUSPEND_MODE" },
	{ 0x84000010, 0x84000010, "STAT_RESIDENCY" },
	{ 0x84000011, 0x84000011, "STAT_COUNT" },
	{ 0x84000012, 0x84000012, "SYSTEM_RESET2" },
	{ 0x84000013, 0x84000013, "MEM_PROTECT" },
	{ 0x84000014, 0x84000014, "MEM_PROTECT_CHECK_RANGE" },
	{ 0x84000015, 0x84000015, "SYSTEM_OFF2" },
	{ 0x84000050, 0x84000050, "TRNG_VERSION" },
	{ 0x84000051, 0x84000051, "TRNG_FEATURES" },
	{ 0x84000052, 0x84000052, "TRNG_GET_UUID" },
	{ 0x84000053, 0x84000053, "TRNG_RND32" },
	{ 0x86000000, 0x86000000, "KVM_FEATURES" },
	{ 0x86000001, 0x86000001, "KVM_PTP" },
	{ 0x8600ff01, 0x8600ff01, "VENDOR_HYP_CALL_UID" },
	{ 0xc4000001, 0xc4000001, "CPU_SUSPEND" },
	{ 0xc4000003, 0xc4000003, "CPU_ON" },
	{ 0xc4000004, 0xc4000004, "AFFINITY_INFO" },
	{ 0xc4000005, 0xc4000005, "MIGRATE" },
	{ 0xc4000007, 0xc4000007, "MIGRATE_INFO_UP_CPU" },
	{ 0xc400000c, 0xc400000c, "CPU_DEFAULT_SUSPEND" },
	{ 0xc400000d, 0xc400000d, "NODE_HW_STATE" },
	{ 0xc400000e, 0xc400000e, "SYSTEM_SUSPEND" },
	{ 0xc4000010, 0xc4000010, "STAT_RESIDENCY" },
	{ 0xc4000011, 0xc4000011, "STAT_COUNT" },
	{ 0xc4000012, 0xc4000012, "SYSTEM_RESET2" },
	{ 0xc4000014, 0xc4000014, "MEM_PROTECT_CHECK_RANGE" },
	{ 0xc4000015, 0xc4000015, "SYSTEM_OFF2" },
	{ 0xc4000053, 0xc4000053, "TRNG_RND64" },
	{ 0xc5000020, 0xc5000020, "PV_TIME_FEATURES" },
	{ 0xc5000021, 0xc5000021, "PV_TIME_ST" },
};

/*
 * The host's system vectors, which an external-interrupt exit reports, as current Linux
 * assigns them (arch/x86/include/asm/irq_vectors.h; Hyper-V's two only with CONFIG_HYPERV).
 * Vectors below 0xec go to devices (0xeb is POSTED_MSI_NOTIFICATION only from Linux 6.10).
 */
static const struct key_range vectors[] = {
	{ 0x02, 0x02, "NMI" },
	{ 0xec, 0xec, "LOCAL_TIMER" },		{ 0xed, 0xed, "HYPERV_STIMER0" },
	{ 0xee, 0xee, "HYPERV_REENLIGHTENMENT" }, { 0xef, 0xef, "MANAGED_IRQ_SHUTDOWN" },
	{ 0xf0, 0xf0, "POSTED_INTR_NESTED" },	{ 0xf1, 0xf1, "POSTED_INTR_WAKEUP" },
	{ 0xf2, 0xf2, "POSTED_INTR" },		{ 0xf3, 0xf3, "HYPERVISOR_CALLBACK" },
	{ 0xf4, 0xf4, "DEFERRED_ERROR" },	{ 0xf6, 0xf6, "IRQ_WORK" },
	{ 0xf7, 0xf7, "X86_PLATFORM_IPI" },	{ 0xf8, 0xf8, "REBOOT" },
	{ 0xf9, 0xf9, "THRESHOLD_APIC" },	{ 0xfa, 0xfa, "THERMAL_APIC" },
	{ 0xfb, 0xfb, "CALL_FUNCTION_SINGLE" },	{ 0xfc, 0xfc, "CALL_FUNCTION" },
	{ 0xfd, 0xfd, "RESCHEDULE" },		{ 0xfe, 0xfe, "ERROR_APIC" },
	{ 0xff, 0xff, "SPURIOUS_APIC" },
};

static const struct key_range *range_find(const struct key_range *t, size_t n, __u64 key)
{
	for (size_t i = 0; i < n; i++) {
		if (key >= t[i].lo && key <= t[i].hi)
			return &t[i];
	}
	return NULL;
}

static const char *range_name(const struct key_range *t, size_t n, __u64 key)
{
	const struct key_range *r = range_find(t, n, key);

	return r ? r->name : "";
}

bool key_builtin_mmio_range(__u64 addr, __u64 *lo, __u64 *hi)
{
	const struct key_range *r = range_find(mmio, NR(mmio), addr);

	if (r) {
		*lo = r->lo;
		*hi = r->hi;
	}
	return r;
}

const char *key_builtin_name(const struct key_note *k)
{
	switch (k->kind) {
	case KEY_PORT:
		return range_name(ports, NR(ports), k->key);
	case KEY_MMIO:
	case KEY_GPA:
		return range_name(mmio, NR(mmio), k->key);
	case KEY_MSR:
		return range_name(msrs, NR(msrs), k->key);
	case KEY_CPUID:
		return range_name(leaves, NR(leaves), k->key);
	case KEY_VECTOR:
		return range_name(vectors, NR(vectors), k->key);
	case KEY_HYPERCALL:
		if (k->dir == KEY_DIR_HV)
			return range_name(hv_calls, NR(hv_calls), k->key);
		if (k->dir == KEY_DIR_SMCCC)
			return range_name(smccc_calls, NR(smccc_calls), k->key);
		return range_name(kvm_calls, NR(kvm_calls), k->key);
	}
	return "";
}

static const char *const kind_names[NR_KEY_KINDS] = {
	[KEY_NONE] = "none",	[KEY_PORT] = "port",	[KEY_MMIO] = "mmio",
	[KEY_GPA] = "gpa",	[KEY_MSR] = "msr",	[KEY_CPUID] = "cpuid",
	[KEY_HYPERCALL] = "hypercall", [KEY_VECTOR] = "vector", [KEY_RIP] = "rip",
	[KEY_OTHER] = "other",
};

static const char *const dir_names[NR_KEY_DIRS] = {
	[KEY_DIR_NONE] = "", [KEY_DIR_IN] = "in", [KEY_DIR_OUT] = "out",
	[KEY_DIR_READ] = "read", [KEY_DIR_WRITE] = "write", [KEY_DIR_HV] = "hv",
	[KEY_DIR_SMCCC] = "smccc",
};

const char *key_kind_name(__u32 kind)
{
	return kind < NR_KEY_KINDS ? kind_names[kind] : "?";
}

const char *key_dir_name(__u32 dir)
{
	return dir < NR_KEY_DIRS ? dir_names[dir] : "?";
}

const char *key_span_str(const struct key_note *k, __u64 end, const char *name, char *buf,
			 size_t len)
{
	const char *dir = key_dir_name(k->dir);
	char e[24] = "";

	if (k->kind == KEY_NONE || k->kind == KEY_OTHER) {
		snprintf(buf, len, "(%s)", key_kind_name(k->kind));
		return buf;
	}
	if (end > k->key)
		snprintf(e, sizeof(e), "-%#llx", (unsigned long long)end);
	snprintf(buf, len, "%#llx%s%s%s%s%s", (unsigned long long)k->key, e, *dir ? " " : "", dir,
		 *name ? " " : "", name);
	return buf;
}

const char *key_str(const struct key_note *k, const char *name, char *buf, size_t len)
{
	return key_span_str(k, 0, name, buf, len);
}
