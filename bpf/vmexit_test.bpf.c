// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only programs: drive the inline handlers of handlers.bpf.h (the very code the tracepoint
 * programs run) with hand-made events, through BPF_PROG_TEST_RUN. tests/bpf/test_bpf_handlers.c
 * loads this object and checks the maps.
 */
#include "vmlinux.h"

/* The CPU of the per-CPU exit slot (bpf/cpu_exit_slot.bpf.h): the event's, not the test's. */
__u32 test_cpu;
#define SLOT_CPU() test_cpu
/* The thread as the slot names it: the event's tid, and a start time the test sets. */
__u64 test_task, test_born;
#define SLOT_SELF(task, born) (*(task) = test_task, *(born) = test_born)

/*
 * Another thread's user half written over the slot in the middle of user_slot_read() (a
 * preemption there), once, when the test arms it: bpf/cpu_exit_slot.bpf.h.
 */
bool race_armed;
__u64 race_task, race_born, race_start;
__u32 race_ref, race_reason;
#define USER_SLOT_PREEMPTED(s)						\
	do {								\
		if (race_armed) {					\
			race_armed = false;				\
			(s)->utask = 0;					\
			(s)->uborn = race_born;				\
			(s)->uref = race_ref;				\
			(s)->ureason = race_reason;			\
			(s)->ustart = race_start;			\
			(s)->utask = race_task;				\
		}							\
	} while (0)

/*
 * Another thread's kvm_exit written over the slot while a key event notes its entry there
 * (cpu_slot_keyed(), preempted between its test and its stores), once, when the test arms it:
 * CPU race_cpu's slot, where that thread's exit was, copied over.
 */
bool key_race_armed;
__u32 race_cpu;
#define KEY_SLOT_PREEMPTED(s)						\
	do {								\
		struct cpu_exit_slot *o;				\
									\
		if (key_race_armed) {					\
			key_race_armed = false;				\
			o = bpf_map_lookup_elem(&cpu_exits, &race_cpu);	\
			if (o)						\
				*(s) = *o;				\
		}							\
	} while (0)

/* run_keys: what kvm_run says at a KVM_RUN's end (TOP_RUN_PUT), as the test sets it, and the
 * thread's context switches so far at a put or an exit (intr_err). */
__u64 test_rkey, test_switches;
__u32 test_rkind, test_rdir, test_rreason;
#define RUN_KEY_SWITCHES() test_switches
#define RUN_KEY_READ(k)								\
	((k)->key = test_rkey, (k)->kind = test_rkind, (k)->dir = test_rdir, (k)->__pad = 0,	\
	 test_rreason)

#include "handlers.bpf.h"
#include "../tests/bpf/vmexit_test.h"

static __always_inline int drive(const struct test_ctx *c)
{
	struct exit_info x = {};
	struct thread_state *ts;

	test_task = c->tid;
	switch (c->op) {
	case TOP_EXIT_FAST:
		/*
		 * kvm_exit_fast once it has the reason and what it reads of the key (the leaf as
		 * TOP_EXIT_LEAF, a cached interrupt's information, the RIP with --by rip): the
		 * CPU's slot first when it may begin the exit, else the thread's state.
		 */
		test_cpu = c->err;
		x.isa = c->isa;
		x.reason = c->reason;
		x.vcpu = c->vcpu;
		x.intr_info = c->intr_err >> 32;
		if (key_mode == KEY_MODE_DEVICE) {
			x.has_leaf = key_leaf_at_exit(c->isa, c->reason, c->info1 & 1,
						      c->info1 & 2, c->info1 & 4);
			x.leaf = c->rip;
		} else {
			x.rip = c->rip;
		}
		if (cpu_slot_enabled && cpu_slot_exit(test_cpu, c->now, x.isa, x.reason,
						      key_mode ? &x : NULL, key_mode))
			return 0;
		handle_kvm_exit(c->now, c->tgid, c->tid, &x);
		return 0;
	case TOP_EXIT:
		test_cpu = c->err;
		x.isa = c->isa;
		x.reason = c->reason;
		x.vcpu = c->vcpu;
		x.rip = c->rip;
		x.info1 = c->info1;
		x.info2 = c->info2;
		x.intr_info = c->intr_err >> 32;
		x.error_code = (__u32)c->intr_err;
		handle_kvm_exit(c->now, c->tgid, c->tid, &x);
		return 0;
	case TOP_EXIT_LEAF:
		test_cpu = c->err;
		x.isa = c->isa;
		x.reason = c->reason;
		x.vcpu = c->vcpu;
		x.has_leaf = key_leaf_at_exit(c->isa, c->reason, c->info1 & 1, c->info1 & 2,
					      c->info1 & 4);
		x.leaf = c->rip;
		handle_kvm_exit(c->now, c->tgid, c->tid, &x);
		return 0;
	case TOP_ENTRY:
		test_cpu = c->err;
		handle_kvm_entry(c->now, c->tgid, c->tid);
		return 0;
	case TOP_USER_EXIT:
		/* err is the errno here: the event's CPU is info1. */
		test_cpu = c->info1;
		test_switches = c->intr_err;
		handle_user_exit(c->now, c->tgid, c->tid, c->reason, c->err);
		return 0;
	case TOP_RUN:
		test_cpu = c->info1;
		handle_kvm_run(c->now, c->tgid, c->tid);
		return 0;
	case TOP_TSC:
		handle_tsc_offset(c->now, c->tgid, c->tid, c->vcpu, c->info1, c->info2);
		return 0;
	case TOP_FORK:
		handle_fork(c->tgid, c->tid);
		return 0;
	case TOP_ARM64_EXIT:
		/* What the kvm_exit program makes of an arm64 record, minus the field reads. */
		x.isa = VMEXIT_ISA_ARM64;
		x.reason = vmexit_arm64_reason(c->err, c->reason);
		x.vcpu = -1;
		x.rip = c->rip;
		handle_kvm_exit(c->now, c->tgid, c->tid, &x);
		return 0;
	case TOP_SWITCH_OUT:
	case TOP_SWITCH_IN:
	case TOP_WAKEUP:
		/* What the sched_switch / sched_wakeup programs do once they have the thread. */
		ts = thread_get(c->tgid, c->tid, false);
		if (!ts)
			return 0;
		if (c->op == TOP_SWITCH_OUT && split_leaving(ts))
			split_switch_out(ts, c->now, c->err != 0);
		else if (c->op == TOP_SWITCH_IN && ts->off_ts)
			split_switch_in(ts, c->now);
		else if (c->op == TOP_WAKEUP && split_asleep(ts))
			split_wakeup(ts, c->now);
		return 0;
	case TOP_THREAD_EXIT:
		handle_thread_exit(c->now, c->tgid, c->tid);
		return 0;
	case TOP_RUN_PUT:
		test_cpu = c->info1;
		test_switches = c->intr_err;
		test_rreason = c->err ? RUN_KEY_UNREAD : c->reason;
		test_rkey = c->rip;
		test_rkind = c->info2 >> 16;
		test_rdir = c->info2 & 0xffff;
		run_key_note(test_cpu);
		return 0;
	case TOP_PROCESS_GONE:
		handle_process_gone(c->tgid);
		return 0;
	case TOP_KEY: {
		struct key_note k = { .key = c->info1, .kind = c->info2 >> 16,
				      .dir = c->info2 & 0xffff };

		handle_key(c->tgid << 32 | c->tid, &k, c->err != 0);
		return 0;
	}
	}
	return -1;	/* an unknown op is a bug in the test: make it visible */
}

/* Per-thread state in the LRU hash, keyed by the synthetic tid (use_task_storage = false). */
SEC("syscall")
int run_event(struct test_ctx *c)
{
	return drive(c);
}

/*
 * The task-storage path: a raw_tp program run by test_run executes in the calling thread, so
 * bpf_get_current_task_btf() is the test itself. Needs use_task_storage = true at load.
 */
SEC("raw_tp")
int run_event_task(struct test_ctx *c)
{
	struct test_ctx l;

	/* Copy field by field: raw_tp contexts allow only plain loads, and drive() is shared. */
	l.op = c->op;
	l.now = c->now;
	l.tgid = c->tgid;
	l.tid = c->tid;
	l.vcpu = c->vcpu;
	l.isa = c->isa;
	l.reason = c->reason;
	l.err = c->err;
	l.rip = c->rip;
	l.info1 = c->info1;
	l.info2 = c->info2;
	l.intr_err = c->intr_err;
	return drive(&l);
}

/*
 * A kvm tracepoint record through its decoder and handle_kvm_event(). Not autoloaded: its CO-RE
 * relocations need the kvm tracepoint types in the kernel's BTF, which only the kvm-event test
 * checks for. The record is copied to the stack first: the decoders then read it through an
 * ordinary pointer, where a moved context pointer would not pass the verifier.
 */
SEC("?syscall")
int run_kvm_record(struct test_kvm_ctx *c)
{
	struct kvm_ev k = { .vcpu = -1 };
	__u64 rec[8];

	for (int i = 0; i < 8; i++)
		rec[i] = c->rec[i];
	switch (c->event) {
#define DECODE(ID, id, name)					\
	case VMEXIT_KVM_##ID:					\
		kvm_##name##_decode((void *)rec, &k);		\
		break;
	VMEXIT_KVM_EVENTS(DECODE)
#undef DECODE
	default:
		return -1;
	}
	handle_kvm_event(c->now, c->tgid, c->tid, &k);
	return 0;
}

/* include/hist.h's buckets as BPF computes them, for tests/bpf/test_bpf_hist.c to compare. */
#define HIST_CHECK_N	512
__u64 hist_in[HIST_CHECK_N];
__u32 hist_out[HIST_CHECK_N];

SEC("?raw_tp")
int hist_check(void *ctx)
{
	for (__u32 i = 0; i < HIST_CHECK_N; i++)
		hist_out[i] = hist_bucket(hist_in[i]);
	return 0;
}

/*
 * bpf/kernel_load.bpf.h's two ways against the verifier's own typed loads: the calling thread's
 * pid (32 bits) and start_time (64 bits), and an address that faults (kload_ok says whether the
 * read said it read). Neither autoloaded: kload_direct references bpf_rdonly_cast, which a
 * kernel before 6.2 does not have; tests/bpf/test_bpf_kernel_load.c loads them.
 */
__u32 kload_pid, kload_pid_read, kload_bad;
__u64 kload_start, kload_start_read;
bool kload_ok32, kload_ok64, kload_bad_ok;

static __always_inline int kload_check(bool direct)
{
	struct task_struct *t = bpf_get_current_task_btf();

	kload_pid = t->pid;
	kload_start = t->start_time;
	kload_ok32 = kread_u32(&t->pid, &kload_pid_read, direct);
	kload_ok64 = kread_u64(&t->start_time, &kload_start_read, direct);
	kload_bad = 0xdead;
	kload_bad_ok = kread_u32((void *)16, &kload_bad, direct);
	return 0;
}

SEC("?raw_tp")
int kload_direct(void *ctx)
{
	return kload_check(true);
}

SEC("?raw_tp")
int kload_probe(void *ctx)
{
	return kload_check(false);
}

char LICENSE[] SEC("license") = "GPL";
