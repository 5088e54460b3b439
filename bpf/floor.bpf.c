// SPDX-License-Identifier: GPL-2.0
/*
 * The floor vmexit's cost is measured against: empty programs on the hooks vmexit attaches,
 * which every BPF tool on those hooks pays for (dispatch, a cold program). bench/floor_progs.c
 * loads the ones asked for; none is autoloaded. Each returns what vmexit's program on the same
 * hook returns (tracepoints 1: perf users keep their events).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "floor_timed.h"
#include "vmexit.h"
#include "run_key.bpf.h"

#define EMPTY_PROG(sec, name, ret)	SEC("?" sec) int name(void *ctx) { return ret; }

/* kvm_exit and kvm_entry: the fast path's raw tracepoints and the classic ones. */
EMPTY_PROG("tp_btf/kvm_exit", floor_exit_fast, 1)
EMPTY_PROG("tp_btf/kvm_entry", floor_entry_fast, 1)
EMPTY_PROG("tp/kvm/kvm_exit", floor_exit, 1)
EMPTY_PROG("tp/kvm/kvm_entry", floor_entry, 1)
/* kvm_userspace_exit: the BTF-enabled tracepoint, or the classic one (as src/kernel/hooks.c). */
EMPTY_PROG("tp_btf/kvm_userspace_exit", floor_user_exit_btf, 1)
EMPTY_PROG("tp/kvm/kvm_userspace_exit", floor_user_exit, 1)
/* The KVM_RUN hooks, as src/hooks.c chooses one: a trampoline, kvm_fpu (BTF-enabled or
 * classic), the ioctl syscall. */
EMPTY_PROG("fentry/kvm_arch_vcpu_ioctl_run", floor_run_fentry, 0)
EMPTY_PROG("tp_btf/kvm_fpu", floor_run_fpu_btf, 1)
EMPTY_PROG("tp/kvm/kvm_fpu", floor_run_fpu, 1)
EMPTY_PROG("tp/syscalls/sys_enter_ioctl", floor_run_ioctl, 1)
/*
 * --wake's hooks, one each as bpf/wake.bpf.c attaches them (its own kvm_entry and kvm_exit
 * beside the exit programs'): what per-delivery tracking costs before it does anything.
 */
EMPTY_PROG("tp_btf/kvm_entry", floor_wake_entry, 0)
EMPTY_PROG("tp_btf/kvm_exit", floor_wake_exit, 0)
EMPTY_PROG("tp_btf/kvm_vcpu_wakeup", floor_wake_halt_end, 0)
EMPTY_PROG("tp_btf/kvm_apic_ipi", floor_wake_ipi, 0)
EMPTY_PROG("tp_btf/kvm_msi_set_irq", floor_wake_msi, 0)
EMPTY_PROG("tp_btf/kvm_ioapic_set_irq", floor_wake_ioapic, 0)
EMPTY_PROG("tp_btf/kvm_set_irq", floor_wake_set_irq, 0)
EMPTY_PROG("tp_btf/kvm_apic_accept_irq", floor_wake_accept, 0)
EMPTY_PROG("tp_btf/hrtimer_expire_entry", floor_wake_timer, 0)
EMPTY_PROG("tp_btf/sched_switch", floor_wake_switch, 0)
EMPTY_PROG("tp_btf/sched_wakeup", floor_wake_wakeup, 0)
EMPTY_PROG("tp_btf/sched_process_exit", floor_wake_thread_end, 0)

/*
 * floor_progs --timed: the least a program that times each exit can do, on the same hooks as
 * the empty ones (kvm_exit to kvm_entry, kvm_userspace_exit to KVM_RUN): a clock read at both
 * ends, the exit's start kept per CPU with the thread that began it (its task and start time,
 * so that a thread that moved or another thread's end takes nothing), and the latency summed.
 * No reason, no histogram, no per-thread state, no care for a preemption between two reads of
 * the record (vmexit's user half reads its name twice): vmexit's programs do all of that on
 * top, and the benchmarks set both beside the empty programs and bpftrace.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* sized by floor_progs: the possible CPUs */
	__type(key, __u32);
	__type(value, struct timed_start[NR_TIMED]);
} timed_starts SEC(".maps");

/* This CPU's record for kind (TIMED_EXIT, TIMED_USER), or NULL. */
static __always_inline struct timed_start *timed_record(int kind)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct timed_start *r = bpf_map_lookup_elem(&timed_starts, &cpu);

	return r ? &r[kind] : NULL;
}

static __always_inline void timed_begin(int kind)
{
	__u64 now = bpf_ktime_get_ns();
	struct timed_start *s = timed_record(kind);
	struct task_struct *t = bpf_get_current_task_btf();

	if (!s)
		return;
	s->task = (__u64)t;
	s->born = t->start_time;
	s->start = now;
}

static __always_inline void timed_end(int kind)
{
	__u64 now = bpf_ktime_get_ns(), start;
	struct timed_start *s = timed_record(kind);
	struct task_struct *t = bpf_get_current_task_btf();

	if (!s || s->task != (__u64)t || s->born != t->start_time)
		return;
	start = s->start;
	if (!start)
		return;
	s->start = 0;
	s->count++;
	s->total_ns += now - start;
}

SEC("?tp_btf/kvm_exit")
int floor_exit_timed(void *ctx)
{
	timed_begin(TIMED_EXIT);
	return 1;
}

SEC("?tp_btf/kvm_entry")
int floor_entry_timed(void *ctx)
{
	timed_end(TIMED_EXIT);
	return 1;
}

SEC("?tp_btf/kvm_userspace_exit")
int floor_user_exit_timed(void *ctx)
{
	timed_begin(TIMED_USER);
	return 1;
}

SEC("?fentry/kvm_arch_vcpu_ioctl_run")
int floor_run_fentry_timed(void *ctx)
{
	timed_end(TIMED_USER);
	return 0;
}

/* The load (load != 0, TP_PROTO(int load)) ends the exit; the put returns at once. */
SEC("?tp_btf/kvm_fpu")
int floor_run_fpu_timed(__u64 *ctx)
{
	if ((int)ctx[0])
		timed_end(TIMED_USER);
	return 1;
}

/*
 * floor_progs --timed-key: timing alone, and the key of each exit to the VMM as vmexit's
 * run_keys read it from kvm_run at the end of the KVM_RUN before it (kvm_fpu's put,
 * bpf/run_key.bpf.h), kept per CPU: an IO exit's port and direction here. What a key costs
 * with no program on kvm_pio, on a host whose kvm_exit never fires (docs/design.md, "User exits
 * (the development host)").
 */
SEC("?tp_btf/kvm_fpu")
int floor_run_fpu_keyed(__u64 *ctx)
{
	struct timed_start *s;
	struct key_note k;

	if ((int)ctx[0]) {
		timed_end(TIMED_USER);
		return 1;
	}
	s = timed_record(TIMED_USER);
	if (!s || run_key_read(&k) == RUN_KEY_UNREAD)
		return 1;
	s->key_runs++;
	if (k.kind == KEY_PORT) {
		s->key = k.key | (__u64)k.dir << 16;
		s->key_io++;
	}
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
