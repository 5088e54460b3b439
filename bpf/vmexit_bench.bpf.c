// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark-only programs: bpf_loop over the handlers of handlers.bpf.h, each iteration doing
 * what one pair of tracepoint hits does (clock read, pid/tgid, handler), timed in the kernel so
 * that the syscall around BPF_PROG_TEST_RUN does not count. bench/bench_handlers.c runs them.
 */
#include "handlers.bpf.h"
#include "../bench/vmexit_bench.h"

#define KVM_EXIT_IO	2
#define EINTR		4

/* Written by the run: elapsed ns of the loop, and a sink so that nothing is optimised away. */
__u64 bench_ns;
__u64 bench_sink;

struct loop_ctx {
	__u32 reason;
	__u64 acc;
};

static long cb_empty(__u64 i, struct loop_ctx *c)
{
	return 0;
}

static long cb_clock(__u64 i, struct loop_ctx *c)
{
	c->acc += bpf_ktime_get_ns();
	c->acc += bpf_ktime_get_ns();
	return 0;
}

/* The bodies of the kvm_exit and kvm_entry programs of vmexit.bpf.c, back to back. */
static long cb_exit_entry(__u64 i, struct loop_ctx *c)
{
	__u64 now = bpf_ktime_get_ns(), id = hot_ids();
	struct exit_info x = {
		.isa = VMEXIT_ISA_VMX,
		.reason = c->reason,
		.vcpu = 0,
		.rip = 0xfff0 + (i & 7),	/* a few hot RIPs, as a guest's (--by rip) */
	};

	if (stream_enabled) {
		x.info1 = i;
		x.info2 = i;
	}
	handle_kvm_exit(now, id >> 32, (__u32)id, &x);
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_entry(now, id >> 32, (__u32)id);
	return 0;
}

static __always_inline void user_run(__u32 reason, __s32 err)
{
	__u64 now = bpf_ktime_get_ns(), id = hot_ids();

	handle_user_exit(now, id >> 32, (__u32)id, reason, err);
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_run(now, id >> 32, (__u32)id);
}

static long cb_user_run(__u64 i, struct loop_ctx *c)
{
	user_run(KVM_EXIT_IO, 0);
	return 0;
}

static long cb_user_eintr_run(__u64 i, struct loop_ctx *c)
{
	user_run(0, -EINTR);
	return 0;
}

/* Only the per-thread state lookups of a pair, to split the handlers' cost. */
static long cb_state(__u64 i, struct loop_ctx *c)
{
	__u64 id = hot_ids();
	struct thread_state *ts = thread_get(id >> 32, (__u32)id, true);

	if (ts)
		c->acc += ts->flags;
	id = hot_ids();
	ts = thread_get(id >> 32, (__u32)id, false);
	if (ts)
		c->acc += ts->flags;
	return 0;
}

/*
 * Stream generator: every iteration completes exactly one exit, so iters = records offered to
 * the ring buffer. The mix varies what the consumer's renderers branch on (reason, ISA, vCPU,
 * rule selected): 7 in 8 are guest exits over 7 VMX reasons and 4 vCPUs, 1 in 8 an exit to the
 * VMM (IO or MMIO), roughly the shape of a busy guest.
 */
static __always_inline __u32 mix_reason(__u32 k)
{
	/* A switch, not a static table: libbpf lays such a table over the rodata tunables. */
	switch (k) {
	case 0: return 48;	/* EPT_VIOLATION */
	case 1: return 30;	/* IO_INSTRUCTION */
	case 2: return 1;	/* EXTERNAL_INTERRUPT */
	case 3: return 12;	/* HLT */
	case 4: return 32;	/* MSR_WRITE */
	case 5: return 10;	/* CPUID */
	default: return 28;	/* CR_ACCESS */
	}
}

static long cb_stream_mix(__u64 i, struct loop_ctx *c)
{
	__u32 k = i & 7;
	__u64 now, id;
	struct exit_info x = {
		.isa = VMEXIT_ISA_VMX,
		.vcpu = (i >> 3) & 3,
		.rip = 0xffffffff81000000ull + (i & 0xffff) * 16,
		.info1 = i & 0xfff,
		.info2 = 0xfee00000 + (i & 0xff0),
	};

	if (k == 7) {
		user_run(i & 8 ? 6 /* KVM_EXIT_MMIO */ : KVM_EXIT_IO, 0);
		return 0;
	}
	x.reason = mix_reason(k);
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_exit(now, id >> 32, (__u32)id, &x);
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_entry(now, id >> 32, (__u32)id);
	return 0;
}

/* One context switch away from and back to the current task: both sides of the program. */
static long cb_switch(__u64 i, struct loop_ctx *c)
{
	struct task_struct *t = bpf_get_current_task_btf();

	/* No program context here: stacks_enabled stays false in this object. */
	handle_sched_switch(NULL, i & 1, t, t);
	return 0;
}

/* The per-thread state the switch variants find: none, idle, or with an exit in flight. */
static __always_inline int switch_setup(__u64 variant)
{
	struct thread_state *ts;

	if (variant == BV_SWITCH_NONE)
		return 0;
	ts = thread_get(0, 0, true);
	if (!ts)
		return -1;
	/* CELL_FULL: in flight, but counted in no cell (the loop never ends it). */
	ts->uexit_cell = variant == BV_SWITCH_INFLIGHT ? CELL_FULL : CELL_NONE;
	return 0;
}

static __always_inline int run(__u64 variant, __u64 iters, __u32 reason)
{
	struct loop_ctx c = { .reason = reason };
	__u64 t0;

	if (variant >= BV_SWITCH_NONE && variant <= BV_SWITCH_INFLIGHT &&
	    (!use_task_storage || switch_setup(variant)))
		return -1;
	t0 = bpf_ktime_get_ns();

	switch (variant) {
	case BV_EMPTY:
		bpf_loop(iters, cb_empty, &c, 0);
		break;
	case BV_CLOCK:
		bpf_loop(iters, cb_clock, &c, 0);
		break;
	case BV_EXIT_ENTRY:
		bpf_loop(iters, cb_exit_entry, &c, 0);
		break;
	case BV_USER_RUN:
		bpf_loop(iters, cb_user_run, &c, 0);
		break;
	case BV_USER_EINTR_RUN:
		bpf_loop(iters, cb_user_eintr_run, &c, 0);
		break;
	case BV_STATE:
		bpf_loop(iters, cb_state, &c, 0);
		break;
	case BV_STREAM_MIX:
		bpf_loop(iters, cb_stream_mix, &c, 0);
		break;
	case BV_SWITCH_NONE:
	case BV_SWITCH_IDLE:
	case BV_SWITCH_INFLIGHT:
		bpf_loop(iters, cb_switch, &c, 0);
		break;
	default:
		return -1;
	}
	bench_ns = bpf_ktime_get_ns() - t0;
	bench_sink = c.acc;
	return 0;
}

/*
 * Thread state in the LRU hash (use_task_storage = false). A raw_tp program, as bench_task: a
 * syscall program is sleepable, and a sleepable program may not hold the stack map --stacks
 * added to the handlers (the verifier refuses it whether or not the code that uses it is dead).
 */
SEC("raw_tp")
int bench_sys(struct bench_args *a)
{
	return run(a->variant, a->iters, a->reason);
}

/* Thread state in task storage: the current task is the benchmark thread. */
SEC("raw_tp")
int bench_task(struct bench_args *a)
{
	return run(a->variant, a->iters, a->reason);
}

/*
 * Dispatch: empty programs on the one tracepoint a benchmark can fire at will, sys_enter,
 * through its two doors: the raw tracepoint (what tp_btf/kvm_exit uses) and the classic event
 * raw_syscalls:sys_enter (what tp/kvm/kvm_exit uses: the kernel builds the record first). Both
 * return 1, as every tracepoint program of vmexit does.
 */
SEC("?tp_btf/sys_enter")
int disp_raw(void *ctx)
{
	return 1;
}

SEC("?tp/raw_syscalls/sys_enter")
int disp_classic(void *ctx)
{
	return 1;
}

char LICENSE[] SEC("license") = "GPL";
