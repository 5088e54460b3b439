/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel types vmexit's BPF programs use, kept by hand, for x86 and arm64 alike. A distro
 * vmlinux.h does not have the kvm tracepoint records (they live in the kvm module's BTF, or in
 * vmlinux's where KVM is built in, as on Debian's arm64 kernels), and CO-RE only needs
 * the fields we touch: libbpf relocates every access below against the running kernel's
 * vmlinux and module BTF, so field order and offsets here do not matter.
 */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

typedef signed char __s8;
typedef unsigned char __u8;
typedef short __s16;
typedef unsigned short __u16;
typedef int __s32;
typedef unsigned int __u32;
typedef long long __s64;
typedef unsigned long long __u64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;
enum { false = 0, true = 1 };

/* uapi/linux/bpf.h constants used by the maps and helpers (stable ABI). */
enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_STACK_TRACE = 7,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_QUEUE = 22,
	BPF_MAP_TYPE_RINGBUF = 27,
	BPF_MAP_TYPE_TASK_STORAGE = 29,
};

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum {
	BPF_F_NO_PREALLOC = (1U << 0),
	BPF_F_MMAPABLE = (1U << 10),
};

enum {
	BPF_LOCAL_STORAGE_GET_F_CREATE = (1ULL << 0),
};

/* bpf_ringbuf_submit() flags, bpf_ringbuf_query() flags, and the record header's size. */
enum {
	BPF_RB_NO_WAKEUP = (1ULL << 0),
	BPF_RB_FORCE_WAKEUP = (1ULL << 1),
};

enum {
	BPF_RB_AVAIL_DATA = 0,
};

enum {
	BPF_RINGBUF_HDR_SZ = 8,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct mm_struct {
	unsigned long arg_start;
	unsigned long arg_end;
};

struct bpf_local_storage;

/* task_cpu(): where a task last ran, in thread_info since "sched: move CPU field back into
 * thread_info if THREAD_INFO_IN_TASK" (Linux 5.16); in task_struct before. */
struct thread_info {
	u32 cpu;
};

/* The threads of a process not yet past do_exit()'s count (sched_process_exit). */
struct signal_struct {
	struct {
		int counter;
	} live;
};

struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

struct preempt_notifier {
	struct hlist_node link;
};

struct pid;
struct task_struct {
	struct thread_info thread_info;
	unsigned int __state;
	int pid;
	int tgid;
	struct task_struct *real_parent;
	struct mm_struct *mm;
	struct bpf_local_storage *bpf_storage;
	struct task_struct *group_leader;
	u64 start_time;
	struct signal_struct *signal;
	struct hlist_head preempt_notifiers;
	struct pid *thread_pid;
	unsigned long nvcsw, nivcsw;	/* run_keys' note stamp (bpf/cpu_exit_slot.bpf.h) */
};

/* "sched: Change task_struct::state" (Linux 5.14) renamed state to __state. */
struct task_struct___pre514 {
	long state;
};

struct task_struct___pre516 {
	unsigned int cpu;
};

/* The context of a task iterator program (iter/task), and its output. */
struct seq_file;

struct bpf_iter_meta {
	struct seq_file *seq;
};

struct bpf_iter__task {
	struct bpf_iter_meta *meta;
	struct task_struct *task;
};

/*
 * What the raw kvm_exit fast path reads from the vCPU itself (bpf/exit_read.bpf.h). kvm_vcpu
 * is in vmlinux's BTF or kvm's; vcpu_vmx in kvm_intel's, vcpu_svm and vmcb in kvm_amd's: only
 * one of the two is loaded, and CO-RE drops the branch of the other.
 */
/*
 * --by key on VMX: which registers KVM has cached since the exit (bpf/vmx_vector.bpf.h). A
 * CPUID exit's leaf on the fast path (bpf/keys.bpf.h): the guest's GPRs (regs[0] is RAX,
 * VCPU_REGS_RAX, on every x86 kernel), whether the vCPU runs a nested guest (hflags'
 * HF_GUEST_MASK) and whether the guest turned CPUID faulting on.
 */
struct kvm_vcpu_arch {
	unsigned long regs[17];
	u32 regs_avail;
	u32 hflags;
	u64 msr_misc_features_enables;
};

enum kvm_reg {
	VCPU_EXREG_EXIT_INFO_2 = 24,
};

struct kvm_vcpu {
	int vcpu_id;
	struct pid *pid;		/* the vCPU's thread, and its link in that thread's */
	struct preempt_notifier preempt_notifier;	/* preempt notifiers (kvm_run below) */
	struct kvm_run *run;
	struct kvm_vcpu_arch arch;
};

/*
 * An exit to the VMM as KVM hands it over (the UAPI's struct kvm_run), reached from the vCPU
 * (vcpu->run), the vCPU from its task's preempt notifiers (vcpu_load() puts its own first):
 * --by key where KVM traces no kvm_exit (bpf/run_key.bpf.h), and the benchmarks' timing + key
 * case (bpf/floor.bpf.c).
 */
struct kvm_run {
	__u32 exit_reason;
	union {
		struct {
			__u8 direction;
			__u8 size;
			__u16 port;
			__u32 count;
			__u64 data_offset;
		} io;
		struct {
			__u64 phys_addr;
			__u8 data[8];
			__u32 len;
			__u8 is_write;
		} mmio;
		struct {
			__u64 nr;
		} hypercall;
		struct {
			__u8 error;
			__u8 pad[7];
			__u32 reason;
			__u32 index;
			__u64 data;
		} msr;
	};
};

union vmx_exit_reason {
	u32 full;
};

struct vcpu_vt {
	union vmx_exit_reason exit_reason;
	u32 exit_intr_info;
};

struct vcpu_vmx {
	struct kvm_vcpu vcpu;
	union vmx_exit_reason exit_reason;
	u32 exit_intr_info;
	struct vcpu_vt vt;
};

struct vmcb_control_area {
	u32 exit_code;
};

/* --by rip on the fast path: the guest RIP as of the exit (bpf/exit_read.bpf.h). */
struct vmcb_save_area {
	u64 rip;
};

/* Since "KVM: SVM: Add support for SEV-ES ... save area" the save area is in an anonymous union:
 * CO-RE finds a member through anonymous unions, so the flat layout here matches both. */
struct vmcb {
	struct vmcb_control_area control;
	struct vmcb_save_area save;
};

/*
 * The controls L1 asked for in the VMCB it runs its L2 with, as KVM keeps them: a struct
 * vmcb_ctrl_area_cached since 5.16, a struct vmcb_control_area before; both have the intercept
 * vectors as u32 intercepts[] since 5.10 (a CPUID exit of an L2: bpf/keys.bpf.h).
 */
struct vmcb_ctrl_area_cached {
	u32 intercepts[5];
};

struct svm_nested_state {
	struct vmcb_ctrl_area_cached ctl;
};

struct vcpu_svm {
	struct kvm_vcpu vcpu;
	struct vmcb *vmcb;
	struct svm_nested_state nested;
};

/* The first 8 bytes of every tracepoint record; a BPF program sees them overwritten. */
struct trace_entry {
	unsigned short type;
	unsigned char flags;
	unsigned char preempt_count;
	int pid;
};

struct trace_event_raw_kvm_exit {
	struct trace_entry ent;
	unsigned int exit_reason;
	unsigned long guest_rip;
	u32 isa;
	u64 info1;
	u64 info2;
	u32 intr_info;
	u32 error_code;
	unsigned int vcpu_id;
};

/*
 * The arm64 record of the same tracepoint (arch/arm64/kvm/trace_arm.h, until Linux 5.8
 * virt/kvm/arm/trace.h): ret is ARM_EXCEPTION_CODE() of the exit, esr_ec the ESR_ELx.EC of a
 * trap and 0 for the other kinds. No isa, no vCPU id. libbpf drops the ___arm64 suffix when
 * it matches this against the kernel's trace_event_raw_kvm_exit, so the one program reads
 * whichever layout the running kernel has. The layout is the same in every version read for
 * this (virt/kvm/arm/trace.h of 5.5 onward); a kernel with neither this nor the x86 layout
 * gets its exits counted under ISA 0.
 */
struct trace_event_raw_kvm_exit___arm64 {
	struct trace_entry ent;
	int ret;
	unsigned int esr_ec;
	unsigned long vcpu_pc;
};

struct trace_event_raw_kvm_entry {
	struct trace_entry ent;
	unsigned int vcpu_id;
	unsigned long rip;
};

struct trace_event_raw_kvm_userspace_exit {
	struct trace_entry ent;
	__u32 reason;
	int errno;
};

/* load is 1 when KVM_RUN loads the guest FPU state (its start on x86), 0 when it puts it back. */
struct trace_event_raw_kvm_fpu {
	struct trace_entry ent;
	u32 load;
};

struct trace_event_raw_kvm_write_tsc_offset {
	struct trace_entry ent;
	unsigned int vcpu_id;
	__u64 previous_tsc_offset;
	__u64 next_tsc_offset;
};

/* The other kvm tracepoints `--kvm-events` captures (arch/x86/kvm/trace.h). */
struct trace_event_raw_kvm_pio {
	struct trace_entry ent;
	unsigned int rw;
	unsigned int port;
	unsigned int size;
	unsigned int count;
	unsigned int val;
};

struct trace_event_raw_kvm_mmio {
	struct trace_entry ent;
	u32 type;
	u32 len;
	u64 gpa;
	u64 val;
};

struct trace_event_raw_kvm_msr {
	struct trace_entry ent;
	unsigned int write;
	u32 ecx;
	u64 data;
	u8 exception;
};

struct trace_event_raw_kvm_cpuid {
	struct trace_entry ent;
	unsigned int function;
	unsigned int index;
	unsigned long rax;
	unsigned long rbx;
	unsigned long rcx;
	unsigned long rdx;
	bool found;
	bool used_max_basic;
};

struct trace_event_raw_kvm_inj_virq {
	struct trace_entry ent;
	unsigned int vector;
	bool soft;
	bool reinjected;
};

/* Before Linux 5.19 the record held only the vector, named irq. */
struct trace_event_raw_kvm_inj_virq___pre519 {
	struct trace_entry ent;
	unsigned int irq;
};

/*
 * error_code was an unsigned int before 6.1 and fault_address an unsigned long: CO-RE sizes
 * the loads of these unsigned fields to the running kernel's.
 */
struct trace_event_raw_kvm_page_fault {
	struct trace_entry ent;
	unsigned int vcpu_id;
	unsigned long guest_rip;
	u64 fault_address;
	u64 error_code;
};

struct trace_event_raw_kvm_hypercall {
	struct trace_entry ent;
	unsigned long nr;
};

struct trace_event_raw_kvm_hv_hypercall {
	struct trace_entry ent;
	u16 code;
};

/*
 * arm64's HVC, traced by kvm_handle_hvc() before KVM handles the call
 * (arch/arm64/kvm/trace_handle_exit.h): r0 is the guest's x0, the SMCCC function id.
 */
struct trace_event_raw_kvm_hvc_arm64 {
	struct trace_entry ent;
	unsigned long vcpu_pc;
	unsigned long r0;
	unsigned long imm;
};

/*
 * arm64's stage-2 fault, traced by kvm_handle_guest_abort() (arch/arm64/kvm/trace_arm.h): the
 * same four fields since the arm64 port (2013) to 6.12 and later; hsr is the exit's ESR_EL2.
 */
struct trace_event_raw_kvm_guest_fault {
	struct trace_entry ent;
	unsigned long vcpu_pc;
	unsigned long hsr;
	unsigned long hxfar;
	unsigned long long ipa;
};

struct trace_event_raw_kvm_msi_set_irq {
	struct trace_entry ent;
	u64 address;
	u64 data;
};

struct trace_event_raw_kvm_apic_accept_irq {
	struct trace_entry ent;
	u32 apicid;
	u16 dm;
	u16 tm;
	u8 vec;
};

struct trace_event_raw_kvm_halt_poll_ns {
	struct trace_entry ent;
	bool grow;
	unsigned int vcpu_id;
	unsigned int new;
	unsigned int old;
};

/* Context of the syscalls:sys_enter_* tracepoints (kernel/trace/trace_syscalls.c). */
struct syscall_trace_enter {
	struct trace_entry ent;
	int nr;
	unsigned long args[6];
};

struct trace_event_raw_sched_process_fork {
	struct trace_entry ent;
	char parent_comm[16];
	int parent_pid;
	char child_comm[16];
	int child_pid;
};

/* Stand-ins for a field's size at an address bpf/kernel_load.bpf.h loads from: any kernel's. */
typedef struct {
	int counter;
} atomic_t;

struct refcount_struct {
	atomic_t refs;
};

struct timespec64 {
	long long tv_sec;
	long tv_nsec;
};

#pragma clang attribute pop

#endif /* __VMLINUX_H__ */
