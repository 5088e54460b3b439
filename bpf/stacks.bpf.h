/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --stacks (with --split): what a vCPU thread was blocked on. When it leaves the CPU with an
 * exit in flight, its kernel stack goes to a stack map; when it runs again, the time it was off
 * CPU (asleep and waiting for a CPU) is charged to (guest, the exit's reason, that stack). Only
 * on the --split context-switch path, and only for threads with an exit in flight: the per-exit
 * path does not change. Included by handlers.bpf.h, whose thread_state and cells it uses.
 */
#ifndef VMEXIT_STACKS_BPF_H
#define VMEXIT_STACKS_BPF_H

/* errno values the helpers return (vmlinux.h has no errno.h). */
#define STACKS_ENOMEM	12
#define STACKS_EEXIST	17

const volatile bool stacks_enabled = false;
/* Periods that end before their exit is this old are not charged: short exits never are. */
const volatile __u64 stack_min_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1);		/* sized by userspace: --max-stacks */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, STACK_DEPTH_MAX * sizeof(__u64));
} stack_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* sized by userspace: --max-stacks */
	__type(key, struct stack_key);
	__type(value, struct stack_val);
} stack_time SEC(".maps");

/*
 * The thread leaves the CPU during an exit (split_leaving()): keep its stack and which exit it
 * belongs to, the innermost one counted: a userspace exit nests in its guest exit, and the
 * VMM's work is what blocks then. A userspace exit not counted (-r naming only the guest exit,
 * as explain's stacks step does, or cells full) leaves the period to the guest exit around it,
 * whose time it is too: charging nothing lost every stack of the VMM's sleeps. The stack is
 * current's: sched_switch runs on the task going out.
 */
static __always_inline void stack_switch_out(void *ctx, struct thread_state *ts, __u64 now)
{
	__u32 ref = ts->uexit_cell;
	long id;

	ts->stack_off_ts = 0;
	if (!cell_get(ref))
		ref = ts->exit_cell;
	if (!cell_get(ref))
		return;		/* no exit in flight counted (filtered, or lost): nothing to charge */
	/* No BPF_F_REUSE_STACKID: a slot taken by another stack is a loss, never a wrong stack. */
	id = bpf_get_stackid(ctx, &stack_map, 0);
	if (id < 0) {
		lost_inc(id == -STACKS_ENOMEM ? LOST_STACKS_FULL : LOST_STACK_COLLISION);
		return;
	}
	ts->stack_id = id;
	ts->stack_ref = ref;
	ts->stack_off_ts = now;
}

/* Back on a CPU: the whole period off it goes to the stack it left with. */
static __always_inline void stack_switch_in(struct thread_state *ts, __u64 now)
{
	struct cell *c = cell_get(ts->stack_ref);
	struct stack_key k = {};
	struct stack_val *v, zero = {};
	__u64 off = ts->stack_off_ts;

	ts->stack_off_ts = 0;
	if (!c || !c->inflight_ts || now < off || now - c->inflight_ts < stack_min_ns)
		return;
	k.tgid = c->key.tgid;
	k.isa = c->key.isa;
	k.reason = c->key.reason;
	k.stack_id = ts->stack_id;
	k.proc_start = c->key.proc_start;
	v = bpf_map_lookup_elem(&stack_time, &k);
	if (!v) {
		long err = bpf_map_update_elem(&stack_time, &k, &zero, BPF_NOEXIST);

		/* -EEXIST: another CPU made it first, which is fine; else the table is full. */
		v = err && err != -STACKS_EEXIST ? NULL : bpf_map_lookup_elem(&stack_time, &k);
		if (!v) {
			lost_inc(LOST_STACKS_FULL);
			return;
		}
	}
	__sync_fetch_and_add(&v->ns, now - off);
	__sync_fetch_and_add(&v->count, 1);
}

#endif /* VMEXIT_STACKS_BPF_H */
