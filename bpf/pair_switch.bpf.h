/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The switch from the classic kvm_exit/kvm_entry pair to the fast one while tracing (a run
 * started on an idle host: src/kernel/fast_switch.c). For a moment both pairs are attached, and
 * every kvm_exit and kvm_entry fires two of vmexit's programs, one after the other on the same
 * CPU (a tracepoint calls its probes with preemption off). The first one handles the event, the
 * second sees that it was handled and leaves: an exit begun under one pair and ended under the
 * other is counted once, whichever pair runs first on each tracepoint.
 *
 * "Handled" is told per CPU: the last event of the overlap this CPU handled, (thread, kind).
 * That alone would also match a later event of the same kind on this CPU after the thread ran
 * on another one; the thread's exit in flight tells those apart: after a handled exit one is
 * in flight, after a handled entry none is. Costs nothing but one load outside the overlap.
 */
#ifndef VMEXIT_PAIR_SWITCH_BPF_H
#define VMEXIT_PAIR_SWITCH_BPF_H

#include "handlers.bpf.h"

/* Written by userspace through the mmapped .bss: both pairs are (or are about to be) attached. */
bool pair_overlap;

/*
 * kvm_entry_fast is the one entry program of every pair (the classic kvm_exit's too) on a
 * kernel whose BTF has kvm_entry: no second entry program can run, and entries need no
 * telling apart (src/kernel/hooks.c, hooks_exit_autoload()).
 */
const volatile bool entry_alone = false;

enum { PAIR_EXIT = 0, PAIR_ENTRY = 1 };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} pair_last SEC(".maps");

static __always_inline __u64 pair_mark(__u32 tid, int kind)
{
	/* Bit 1 set: never the zero a CPU starts with. */
	return (__u64)tid << 2 | 2 | kind;
}

/* The other pair's program already handled this event (pair_overlap only). */
static __always_inline bool pair_handled(int kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct thread_state *ts;
	__u32 zero = 0;
	__u64 *last = bpf_map_lookup_elem(&pair_last, &zero);

	if (!last || *last != pair_mark((__u32)id, kind))
		return false;
	ts = thread_get(id >> 32, (__u32)id, false);
	/* No state: an exit would have made some, so the first program saw an entry with no
	 * exit before it (a vCPU's first) and counted it. */
	if (!ts)
		return kind == PAIR_ENTRY;
	return kind == PAIR_EXIT ? exit_live(ts->exit_cell) : !exit_live(ts->exit_cell);
}

/* This CPU handled the event (pair_overlap only). */
static __always_inline void pair_note(int kind)
{
	__u32 zero = 0;
	__u64 *last = bpf_map_lookup_elem(&pair_last, &zero);

	if (last)
		*last = pair_mark((__u32)bpf_get_current_pid_tgid(), kind);
}

#endif /* VMEXIT_PAIR_SWITCH_BPF_H */
