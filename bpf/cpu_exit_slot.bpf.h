/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exit in flight, per CPU (issue 33): kvm_exit notes (thread, cell, start) in its CPU's
 * slot, and the kvm_entry that follows on the same CPU ends the exit from there, without the
 * task-storage lookup (about half of the entry program's cost on VMX, docs/design.md).
 *
 * A vCPU thread may sleep, be preempted or move to another CPU between the two, and another
 * thread may overwrite the slot meanwhile: the entry takes the slot only when the thread is
 * the current one and the cell's inflight_ts is still the slot's start, which no other exit
 * can leave there (an exit ended by the task-storage path zeroes it, a newer exit of the cell
 * stamps a later time, an ended cell is skipped). Else the task-storage path runs as before.
 *
 * After a completion here ts->exit_cell still names the cell, whose inflight_ts is 0: the
 * readers of exit_cell ask exit_live() instead.
 *
 * kvm_exit_fast, too, begins an exit from the slot when the slot was written by the same
 * thread for the same reason and its cell is still the thread's exit_cell (cell.exit_named):
 * then nothing in the thread's state changes, and the thread's state is not looked up
 * (cpu_slot_exit()). A thread that exits in another cell elsewhere un-names this one.
 *
 * With keys, also when the exit's key, read from the exit alone (key_of_exit()), is final and
 * one of the slot's ways maps (cell, key) to its key entry: the ways hold the entries the
 * slot's thread found in its key cache at the exits it began through its state on this CPU
 * (cpu_slot_note()), so alternating keys (two CPUID leaves, two vectors) begin here too. The
 * exit's key goes to its cell (cell.slot_key), not to the thread's state: the readers of the
 * thread's exit key take the cell's (exit_key_now(), bpf/keys.bpf.h); an exit begun through
 * the thread's state clears it.
 *
 * Those that read more of the thread's state at the end of an exit (--split, --stacks, the
 * stream) are not covered: the slot is used with none of them (cpu_slot_enabled, set by
 * src/kernel/session.c). A keyed exit ends here when its key entry is known at kvm_exit
 * (kslot: bpf/keys.bpf.h key_slot_final(), or the way that began it); any other keyed exit
 * ends through the thread's state.
 *
 * Included by handlers.bpf.h once cells and their completion are defined.
 */
#ifndef VMEXIT_CPU_EXIT_SLOT_BPF_H
#define VMEXIT_CPU_EXIT_SLOT_BPF_H

const volatile bool cpu_slot_enabled = false;

/* The slot's CPU; the test object names one of its choosing (bpf/vmexit_test.bpf.c). */
#ifndef SLOT_CPU
#define SLOT_CPU() bpf_get_smp_processor_id()
#endif

/* struct cpu_exit_slot: include/vmexit.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* sized by userspace: the possible CPUs */
	__type(key, __u32);
	__type(value, struct cpu_exit_slot);
} cpu_exits SEC(".maps");

/* exit_live() of ref, whose cell the caller has found already: c (NULL: none). */
static __always_inline bool exit_live_in(__u32 ref, const struct cell *c)
{
	if (ref == CELL_NONE)
		return false;
	if (!cpu_slot_enabled)
		return true;
	/* An exit with no cell (full, filtered) is never in a slot: its exit_cell is exact. */
	return !c || c->inflight_ts;
}

/* Whether ref, the thread's exit_cell, is an exit still in flight (see above). */
static __always_inline bool exit_live(__u32 ref)
{
	return exit_live_in(ref, cpu_slot_enabled ? cell_get(ref) : NULL);
}

/*
 * The current thread as a slot names it: its task and the task's start time. A task's address
 * is reused once it is freed, its start time is not (the next task there began later), so a
 * thread that ended never matches a new one; de_thread() gives an exec'ing thread its leader's
 * start time, which only makes its slot miss until its state is new.
 */
#ifndef SLOT_SELF
static __always_inline void slot_self(__u64 *task, __u64 *born)
{
	struct task_struct *t = bpf_get_current_task_btf();

	*task = (__u64)t;
	*born = t->start_time;
}
#else
#define slot_self SLOT_SELF
#endif

/*
 * The key of the thread's exit in flight (or last ended from a CPU's slot): its cell's when a
 * CPU's slot began it (cell.slot_key, bpf/cpu_exit_slot.bpf.h cpu_slot_exit()), which left
 * the thread's state as the last exit begun through it had it; else the thread's. Written
 * through too (key_seen()).
 */
static __always_inline struct key_note *exit_key_now(struct thread_state *ts)
{
	struct cell *c;

	if (!key_mode || !cpu_slot_enabled || ts->exit_cell == CELL_NONE)
		return &ts->exit_key;
	c = cell_get(ts->exit_cell);
	return c && c->slot_key.kind != KEY_NONE ? &c->slot_key : &ts->exit_key;
}

/* The thread's exit_cell stops naming ref (see struct cell's exit_named). */
static __always_inline void exit_unname(__u32 ref)
{
	struct cell *c = cell_get(ref);

	if (c)
		c->exit_named = 0;
}

/* The way of a slot that may hold (cell ref, key k). */
static __always_inline struct cpu_slot_way *slot_way(struct cpu_exit_slot *s, __u32 ref,
						     const struct key_note *k)
{
	return &s->way[(ref + (__u32)k->key + k->kind) & (CPU_SLOT_WAYS - 1)];
}

/*
 * kvm_exit of thread ts on cpu began an exit x in cell ref at start, its key entry kslot (0:
 * not known). Keys: another thread's ways are dropped first (a way is only ever its slot's
 * thread's, whose entries stay theirs while it lives), then a known entry is kept in its way.
 */
static __always_inline void cpu_slot_note(__u32 cpu, const struct thread_state *ts, __u32 ref,
					  __u64 start, const struct exit_info *x, __u32 kslot)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct cpu_slot_way *w;
	__u32 i;

	if (!s)
		return;
	if (key_mode && (s->task != ts->slot_task || s->born != ts->slot_born)) {
		for (i = 0; i < CPU_SLOT_WAYS; i++)
			s->way[i].kslot = 0;
	}
	s->tid = ts->tid;
	s->ref = ref;
	s->start = start;
	s->task = ts->slot_task;
	s->born = ts->slot_born;
	s->isa = x->isa;
	s->reason = x->reason;
	if (key_mode) {
		s->kslot = kslot;
		if (kslot) {
			w = slot_way(s, ref, &ts->exit_key);
			w->key = ts->exit_key.key;
			w->kind = ts->exit_key.kind;
			w->ref = ref;
			w->kslot = kslot;
		}
	}
}

/*
 * kvm_exit on cpu at now, of reason x, before any lookup of the thread's state: true when the
 * slot began the exit. It does when the slot was written by this very thread (slot_self())
 * for an exit of the same reason, and that cell is still the thread's exit_cell (exit_named,
 * which only the thread's own programs change): the thread's state then needs no change, so
 * the entry's fallback, the overwritten test and the thread's end find the exit as before,
 * wherever the thread runs next. Else the caller takes the task-storage path, which names the
 * cell and writes the slot.
 *
 * With keys x carries what kvm_exit reads of its key (key_of_exit()): the exit begins here
 * only when that key is final (no key event after kvm_exit may change it: key_final()) and a
 * way maps (cell, key) to its entry, which the slot's kslot then names for kvm_entry. The key
 * goes to the cell (slot_key), newer than the thread's exit_key. What else key_exit_start()
 * does is the same for an exit of the same reason with a final key (TS_CPUID_EXIT by reason,
 * vec_vcpu 0), but for settling an IO exit to the VMM that waits for its key (late_ref):
 * exit_end() un-names the exit cell when one starts to wait, so the next kvm_exit settles it.
 */
static __always_inline bool cpu_slot_exit(__u32 cpu, __u64 now, const struct exit_info *x)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct key_note k = {};
	struct cpu_slot_way *w;
	__u32 kslot = 0;
	struct cell *c;
	__u64 task, born;

	if (!s)
		return false;
	slot_self(&task, &born);
	if (s->task != task || s->born != born || s->reason != x->reason || s->isa != x->isa)
		return false;
	if (key_mode) {
		key_of_exit(x, &k);
		if (!key_final(k.kind))
			return false;
		w = slot_way(s, s->ref, &k);
		if (!w->kslot || w->ref != s->ref || w->kind != k.kind || w->key != k.key)
			return false;
		kslot = w->kslot;
	}
	c = cell_get(s->ref);
	if (!c || !c->exit_named)
		return false;
	/* The thread's previous exit, in this cell, never ended: overwritten, as exit_start(). */
	if (c->inflight_ts)
		lost_inc(LOST_OVERWRITTEN_EXIT);
	exit_count(s->ref, c, now);
	s->start = now;
	if (key_mode) {
		s->kslot = kslot;
		c->slot_key = k;
	}
	return true;
}

/* kvm_entry of thread tid on cpu at now: true when the slot held its exit and ended it. */
static __always_inline bool cpu_slot_end(__u32 cpu, __u32 tid, __u64 now)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct exit_split none = {};
	struct key_stats *st;
	struct cell *c;
	__u64 start;
	__u32 b;

	if (!s || s->tid != tid || (key_mode && !s->kslot))
		return false;
	c = cell_get(s->ref);
	if (!c)
		return false;
	start = s->start;
	/* The ended test: a tid reused by a new thread after the cell's owner exited in an exit. */
	if (!start || c->inflight_ts != start || c->ended)
		return false;
	c->inflight_ts = 0;
	/* The key entry's lookup first: b then dies within the two updates (key_charge_slot()). */
	st = key_mode ? key_slot_stats(s->kslot) : NULL;
	b = hist_bucket(now - start);
	cell_end(c, start, now, &none, b);
	if (st)
		key_charge_slot(st, now - start, b);
	return true;
}

/*
 * The userspace exit in flight per CPU, the same way: kvm_userspace_exit begins it from its
 * CPU's slot when the slot's user half was written by this very thread (slot_self()) for the
 * same reason and that cell is still the thread's uexit_cell (the cell's exit_named: only the
 * thread's own programs change it); the KVM_RUN that follows on the same CPU ends it there when
 * the slot is still the thread's and the cell's inflight_ts still the slot's start. Neither
 * looks the thread's state up; anything else takes the thread's state, which names the cell and
 * writes the slot. After a completion here ts->uexit_cell still names the cell: its readers ask
 * exit_live(). Plain counts without -c only (user_slot_enabled): with keys a userspace exit's
 * key is read into the thread's state (key_user_exit()), and -c filters by the thread's vCPU.
 *
 * Unlike kvm_exit and kvm_entry, which fire with preemption off, kvm_userspace_exit and the
 * KVM_RUN hooks run preemptible (only migration is off): another vCPU thread may write the
 * user half while a program is halfway through reading it. So the writer clears utask first
 * and sets it last, and a reader takes (uref, ureason, ustart) between two reads of
 * (utask, uborn) that both name its thread: only the thread itself writes its own name, so
 * any other writer in between shows as a cleared or foreign utask, and the reader falls back
 * to the thread's state. A reader's own store of ustart after another thread's write at worst
 * makes that thread's KVM_RUN miss the slot (its cell's start differs) and fall back too.
 */
const volatile bool user_slot_enabled = false;	/* src/kernel/session.c says when */

/* Where a test object writes another thread's user half, as a preemption there would. */
#ifndef USER_SLOT_PREEMPTED
#define USER_SLOT_PREEMPTED(s)
#endif

/* The user half of s as this thread last wrote it: false when another thread's is there. */
static __always_inline bool user_slot_read(struct cpu_exit_slot *s, __u32 *ref, __u32 *reason,
					   __u64 *start)
{
	__u64 task, born;

	slot_self(&task, &born);
	if (s->utask != task || s->uborn != born)
		return false;
	barrier();
	USER_SLOT_PREEMPTED(s);
	*ref = s->uref;
	*reason = s->ureason;
	*start = s->ustart;
	barrier();
	return s->utask == task && s->uborn == born;
}

/* kvm_userspace_exit through the thread's state began the exit of reason in ref at now. */
static __always_inline void cpu_slot_user_note(__u32 cpu, struct thread_state *ts, __u32 prev,
					       __u32 ref, __u32 reason, __u64 now)
{
	struct cpu_exit_slot *s;
	struct cell *c;

	if (prev != ref)
		exit_unname(prev);
	c = cell_get(ref);
	if (!c)
		return;		/* not counted (full, filtered): never begun from a slot */
	c->exit_named = 1;
	s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	if (!s)
		return;
	if (!ts->slot_task)
		slot_self(&ts->slot_task, &ts->slot_born);
	/* Cleared first: a reader preempted here sees no thread's name (uborn first would also
	 * do, but the order of stores is not what this should rest on). */
	s->utask = 0;
	barrier();
	s->uborn = ts->slot_born;
	s->uref = ref;
	s->ureason = reason;
	s->ustart = now;
	barrier();
	s->utask = ts->slot_task;
}

/*
 * kvm_userspace_exit of reason on cpu at now, before any lookup of the thread's state: true
 * when the slot began the exit. An exit still in flight in the cell was never ended by a
 * KVM_RUN: counted as handle_user_exit() counts it.
 */
static __always_inline bool cpu_slot_user_exit(__u32 cpu, __u64 now, __u32 reason)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	__u32 ref, ureason;
	__u64 ustart;
	struct cell *c;

	if (!s || !user_slot_read(s, &ref, &ureason, &ustart) || ureason != reason)
		return false;
	c = cell_get(ref);
	if (!c || !c->exit_named)
		return false;
	if (c->inflight_ts)
		lost_inc(LOST_UNMATCHED_RUN);
	exit_count(ref, c, now);
	s->ustart = now;
	return true;
}

/* KVM_RUN on cpu at now: true when the slot held the thread's userspace exit and ended it. */
static __always_inline bool cpu_slot_run(__u32 cpu, __u64 now)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct exit_split none = {};
	__u32 ref, ureason;
	__u64 start;
	struct cell *c;

	if (!s || !user_slot_read(s, &ref, &ureason, &start))
		return false;
	c = cell_get(ref);
	/* No ended test, unlike cpu_slot_end(): the slot names a task by its start time too, and
	 * an ended cell's thread never runs again. */
	if (!c || !start || c->inflight_ts != start)
		return false;
	c->inflight_ts = 0;
	cell_end(c, start, now, &none, hist_bucket(now - start));
	return true;
}

#endif /* VMEXIT_CPU_EXIT_SLOT_BPF_H */
