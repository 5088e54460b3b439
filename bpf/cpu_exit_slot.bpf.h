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
 * (cpu_slot_note()), so alternating keys (two CPUID leaves, two vectors) begin here too; or
 * when that key is none yet (an IO exit, whose port kvm_pio names after kvm_exit). The exit's
 * key goes to its cell (cell.slot_key, cell.slot_keyed), not to the thread's state: the readers
 * of the thread's exit key take the cell's (exit_key_now()); an exit begun through the
 * thread's state clears it.
 *
 * Those that read more of the thread's state at the end of an exit (--split, --stacks, the
 * stream) are not covered: the slot is used with none of them (cpu_slot_enabled, set by
 * src/kernel/session.c). A keyed exit ends here when its key entry is known: at kvm_exit
 * (kslot: bpf/keys.bpf.h key_slot_final(), or the way that began it), or from the key event
 * that made its key final (cpu_slot_keyed(): an IO exit's port, an MMIO access); any other
 * keyed exit ends through the thread's state.
 *
 * With keys from kvm_run (run_keys, where kvm_exit never fires: bpf/run_key.bpf.h) the slot
 * also carries the key of an exit to the VMM from the end of its KVM_RUN (kvm_fpu's put) to its
 * kvm_userspace_exit (a note: run_key_note(), run_key_take()), and the user half the key whose
 * entry it holds (ukey, ukslot), so that such an exit begins and ends there.
 *
 * Included by handlers.bpf.h once cells and their completion are defined.
 */
#ifndef VMEXIT_CPU_EXIT_SLOT_BPF_H
#define VMEXIT_CPU_EXIT_SLOT_BPF_H

const volatile bool cpu_slot_enabled = false;
/* The userspace exit's half of the slot (below): src/kernel/session.c says when. */
const volatile bool user_slot_enabled = false;
/*
 * Keys: set, for good, once a kvm_exit wrote a slot (cpu_slot_note()). Until then neither a key
 * event (cpu_slot_key()) nor an exit to the VMM (cpu_slot_user_key()) can find a guest exit
 * begun there, so both leave the slot alone: a host whose kvm_exit never fires (kvm_pvm) would
 * otherwise look it up at every key event, and read and write the user half at every
 * userspace exit and KVM_RUN, each only to fall back to the thread's state (bench_user_exits
 * there: 36 ns a user exit for the user half, ~10 ns a run of key_pio).
 */
bool guest_half_used = false;

/*
 * The user half of the slot serves this program (above); with run_keys from the start: an exit
 * to the VMM takes its key from the note its KVM_RUN's put left in the slot (run_key_take()).
 */
static __always_inline bool user_half_on(void)
{
	return user_slot_enabled && (!key_mode || run_keys || guest_half_used);
}

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
 * The key of an exit in flight of the thread (or its last one ended from a CPU's slot), in cell
 * ref: the cell's when a CPU's slot began it (cell.slot_key, slot_keyed: cpu_slot_exit() and
 * cpu_slot_user_exit(), with that half of the slot on), which left the thread's state as the
 * last exit begun through it had it; else own, the thread's. Written through too (key_seen()).
 */
static __always_inline struct key_note *key_now(__u32 ref, struct key_note *own, bool half_on)
{
	struct cell *c;

	if (!key_mode || !half_on || ref == CELL_NONE)
		return own;
	c = cell_get(ref);
	return c && c->slot_keyed ? &c->slot_key : own;
}

/* The key of the thread's kernel exit (key_now()). */
static __always_inline struct key_note *exit_key_now(struct thread_state *ts)
{
	return key_now(ts->exit_cell, &ts->exit_key, cpu_slot_enabled);
}

/* The key of the thread's userspace exit (key_now()). */
static __always_inline struct key_note *uexit_key_now(struct thread_state *ts)
{
	return key_now(ts->uexit_cell, &ts->uexit_key, user_half_on());
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
 * Two u32 fields of the slot as one u64 (kpair, upair in include/vmexit.h), lo the one at the
 * lower address: BPF and its hosts are little-endian. One store, so no preemption falls
 * between them.
 */
static __always_inline __u64 slot_pair(__u32 lo, __u32 hi)
{
	return (__u64)hi << 32 | lo;
}

/* Way w takes (cell ref, key k) -> kslot. */
static __always_inline void slot_way_fill(struct cpu_slot_way *w, __u32 ref,
					  const struct key_note *k, __u32 kslot)
{
	w->key = k->key;
	w->kind = k->kind;
	w->dir = k->dir;
	w->ref = ref;
	w->kslot = kslot;
}

/* The key entry way w maps (cell ref, key k) to, as its kslot; 0: w holds another. */
static __always_inline __u32 slot_way_kslot(const struct cpu_slot_way *w, __u32 ref,
					    const struct key_note *k)
{
	if (w->ref != ref || w->kind != k->kind || w->dir != k->dir || w->key != k->key)
		return 0;
	return w->kslot;
}

/*
 * kvm_exit of thread ts on cpu began an exit x in cell ref at start, its key entry kslot (0:
 * not known). Keys: another thread's ways are dropped first (a way is only ever its slot's
 * thread's, whose entries stay theirs while it lives), then a known entry is kept in its way.
 */
static __always_inline void cpu_slot_note(__u32 cpu, struct thread_state *ts, __u32 ref,
					  __u64 start, const struct exit_info *x, __u32 kslot)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
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
		if (!guest_half_used)
			guest_half_used = true;
		s->kpair = slot_pair(kslot, ref);
		if (kslot)
			slot_way_fill(slot_way(s, ref, &ts->exit_key), ref, &ts->exit_key, kslot);
		/* A userspace exit's cell, ulast_ref, with the thread's uexit_key: most often its
		 * last charged through the state with its guest exit's final key, but any (cell,
		 * key) the thread's cache holds maps to its right entry. For kvm_userspace_exit
		 * (cpu_slot_user_key()); written here, where nothing preempts the writer. */
		if (user_slot_enabled && ts->ulast_ref != CELL_NONE) {
			__u32 uk = key_cached_slot(ts, ts->ulast_ref, &ts->uexit_key);

			if (uk)
				slot_way_fill(slot_way(s, ts->ulast_ref, &ts->uexit_key),
					      ts->ulast_ref, &ts->uexit_key, uk);
		}
	}
}

/*
 * kvm_exit on cpu at now, of (isa, reason), before any lookup of the thread's state: true when
 * the slot began the exit. x: the exit's key fields with keys, km the key_mode they are of;
 * NULL where there are none (plain stat's own path in kvm_exit_fast, whose compiled code then
 * holds no key test). Both are constants at kvm_exit's calls (exit_slot_keyed()), so key_mode
 * is not read from the object's read-only data again on the way (each such read is a load the
 * verifier leaves in place, though it knows the value). It does when
 * the slot was written by this very thread (slot_self())
 * for an exit of the same reason, and that cell is still the thread's exit_cell (exit_named,
 * which only the thread's own programs change): the thread's state then needs no change, so
 * the entry's fallback, the overwritten test and the thread's end find the exit as before,
 * wherever the thread runs next. Else the caller takes the task-storage path, which names the
 * cell and writes the slot.
 *
 * With keys x carries what kvm_exit reads of its key (key_of_exit_in()): the exit begins here
 * when that key is final (no key event after kvm_exit may change it: key_final()) and a way
 * maps (cell, key) to its entry, which the slot's kslot then names for kvm_entry; or when it
 * is none, with no entry named (a key event may name both: cpu_slot_keyed()). Never called for
 * an exit whose vector is read only at its end (kvm_exit_fast: key_vector_late() needs the
 * thread's state).
 * The key goes to the cell (slot_key), newer than the thread's exit_key. What else
 * key_exit_start() does is the same for an exit of the same reason (TS_CPUID_EXIT by reason,
 * vec_vcpu 0: only an exit begun through the state sets it, and its end clears it), but for
 * settling an IO exit to the VMM that waits for its key (late_ref): exit_end() un-names the
 * exit cell when one starts to wait, so the next kvm_exit settles it.
 *
 * A thread whose state is gone while a slot-begun exit waits for its key (an LRU-evicted
 * thread_hash entry; task storage lives as long as its thread): the key event makes a new
 * state, which names no exit, so the exit's end is counted lost (unmatched entry).
 */
static __always_inline bool cpu_slot_exit(__u32 cpu, __u64 now, __u32 isa, __u32 reason,
					  const struct exit_info *x, __u32 km)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct key_note k = {};
	__u32 kslot = 0;
	struct cell *c;
	__u64 task, born;

	if (!s)
		return false;
	slot_self(&task, &born);
	if (s->task != task || s->born != born || s->reason != reason || s->isa != isa)
		return false;
	if (x) {
		key_of_exit_in(x, &k, km);
		/* A key still none (an IO exit's port, an MMIO access come after kvm_exit) begins
		 * here with no entry: a key event may note it (cpu_slot_keyed()), else kvm_entry
		 * ends the exit through the thread's state, under the cell's key. */
		if (key_final(k.kind)) {
			kslot = slot_way_kslot(slot_way(s, s->ref, &k), s->ref, &k);
			if (!kslot)
				return false;
		}
	}
	c = cell_get(s->ref);
	if (!c || !c->exit_named)
		return false;
	/* The thread's previous exit, in this cell, never ended: overwritten, as exit_start(). */
	if (c->inflight_ts)
		lost_inc(LOST_OVERWRITTEN_EXIT);
	exit_count(s->ref, c, now);
	s->start = now;
	if (x) {
		s->kpair = slot_pair(kslot, s->ref);
		c->slot_key = k;
		c->slot_keyed = 1;
	}
	return true;
}

/* Where a test object writes another thread's exit over the slot, as a preemption would. */
#ifndef KEY_SLOT_PREEMPTED
#define KEY_SLOT_PREEMPTED(s)
#endif

/*
 * A key event made the key of the thread's exit in flight (cell ref) final, its entry kslot in
 * the thread's cache (key_seen()): when that exit is still its CPU's slot's, the slot takes the
 * entry, so that kvm_entry ends the exit there (an IO exit's port, an MMIO access: their keys
 * come after kvm_exit). A key event may be preempted (the exit's handler runs preemptible, and
 * so do tracepoint programs on PREEMPT_RT; migration is off within the program): another vCPU
 * thread's kvm_exit may rewrite the slot between the test and the store, so kslot goes with
 * kref, this exit's cell, which is never another thread's, in one store; that thread's
 * kvm_entry then finds another kref than its ref and takes its thread's state, as one whose
 * entry was not known.
 */
static __always_inline void cpu_slot_keyed(const struct thread_state *ts, __u32 ref,
					   __u32 kslot)
{
	__u32 cpu = SLOT_CPU();
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct cell *c = cell_get(ref);

	if (!s || !c || !ts->slot_task || s->task != ts->slot_task || s->born != ts->slot_born ||
	    s->tid != ts->tid || s->ref != ref || !s->start || s->start != c->inflight_ts)
		return;
	KEY_SLOT_PREEMPTED(s);
	/* Before or after kpair: a way filled from another thread's exit, should this one be
	 * preempted in between, holds that thread's own (cell, key) -> entry all the same. */
	s->kfill = 1;
	s->kpair = slot_pair(kslot, ref);
}

/*
 * A key event gave the exit in flight of cell ref its key ek (key_seen()): when that key is
 * final, its entry in the thread's cache, and its vector not due later, the exit's CPU slot
 * takes the entry if the exit is still the slot's (cpu_slot_keyed()). As key_slot_final(): a
 * cache hit only, the entry made at the exit's end as ever.
 */
static __always_inline void key_slot_keyed(struct thread_state *ts, __u32 ref,
					   const struct key_note *ek)
{
	__u32 kslot;

	if (!cpu_slot_enabled || !key_final(ek->kind) || ts->vec_vcpu)
		return;
	kslot = key_cached_slot(ts, ref, ek);
	if (kslot)
		cpu_slot_keyed(ts, ref, kslot);
}

/*
 * The cell (*ref) of this thread's (task, born) guest exit in flight begun from slot s, its key
 * in the cell (slot_keyed), or NULL. For programs that can be preempted (key events,
 * kvm_userspace_exit): read after a test of (task, born) that names the thread, which the
 * caller makes again after its last read of s (see user_slot_read()).
 */
static __always_inline struct cell *slot_guest_keyed(struct cpu_exit_slot *s, __u64 task,
						     __u64 born, __u32 *ref)
{
	struct cell *c;
	__u64 start;

	if (s->task != task || s->born != born)
		return NULL;
	barrier();
	*ref = s->ref;
	start = s->start;
	c = cell_get(*ref);
	if (!c || !start || c->inflight_ts != start || !c->exit_named || !c->slot_keyed)
		return NULL;
	return c;
}

/*
 * A key event k on this CPU, before any lookup of the thread's state: true when the slot took
 * it. It does for the thread's guest exit in flight begun from the slot (slot_keyed: the
 * exit's key is its cell's), which is what the thread's state would find in flight (its
 * exit_cell, named):
 *  - its key final: k changes nothing key_seen() would change (key_replaces() says no) but
 *    the thread's pend_key, which only an exit to the VMM with no guest exit in flight reads
 *    (key_user_exit()), and this one is in flight;
 *  - its key none, k final, and a way mapping (cell, k) to its entry (cpu_slot_end() fills it
 *    when such an exit ends from the slot): k becomes the exit's key in its cell, and its
 *    entry the slot's for kvm_entry (kpair, as cpu_slot_keyed(), whose reasons hold: this
 *    program can be preempted by another thread's kvm_exit on this CPU).
 * Not an IN's completion (in_done), which settles an exit waiting in the thread's state (the
 * wait un-names the guest exit's cell too: exit_end(), so that test only says it twice); not
 * a CPUID leaf while the key is none (key_replaces() asks whether the exit is a CPUID one,
 * which the thread's state says); no exit whose vector comes later (never begun here). The
 * slot read between two reads of (task, born) that name this thread, as user_slot_read().
 */
static __always_inline bool cpu_slot_key(const struct key_note *k, bool in_done)
{
	__u32 cpu = SLOT_CPU(), ref, kslot = 0;
	struct cpu_exit_slot *s;
	__u64 task, born;
	struct cell *c;

	if (!cpu_slot_enabled || !guest_half_used || in_done)
		return false;
	s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	if (!s)
		return false;
	slot_self(&task, &born);
	c = slot_guest_keyed(s, task, born, &ref);
	if (!c)
		return false;
	if (!key_final(c->slot_key.kind)) {
		if (c->slot_key.kind != KEY_NONE || k->kind == KEY_CPUID || !key_final(k->kind))
			return false;
		kslot = slot_way_kslot(slot_way(s, ref, k), ref, k);
		if (!kslot)
			return false;
	}
	barrier();
	if (s->task != task || s->born != born)
		return false;
	if (!kslot)
		return true;
	c->slot_key = *k;
	KEY_SLOT_PREEMPTED(s);
	s->kpair = slot_pair(kslot, ref);
	return true;
}

/* kvm_entry of thread tid on cpu at now: true when the slot held its exit and ended it. */
static __always_inline bool cpu_slot_end(__u32 cpu, __u32 tid, __u64 now)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	/* key_mode read once: each read is a load and a test left in the program. */
	bool keyed = key_mode;
	struct exit_split none = {};
	struct key_stats *st;
	struct cell *c;
	__u64 start;
	__u32 b;

	if (!s || s->tid != tid || (keyed && (!s->kslot || s->kref != s->ref)))
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
	st = keyed ? key_slot_stats(s->kslot) : NULL;
	b = hist_bucket(now - start);
	cell_end(c, start, now, &none, b);
	if (!st)
		return true;
	key_charge_slot(st, now - start, b);
	/* A key a key event named through the thread's state (kfill): its way, so that the next
	 * exit's key event names the entry without it (cpu_slot_key()). Written here, where
	 * nothing preempts the writer. */
	if (s->kfill) {
		s->kfill = 0;
		if (c->slot_keyed)
			slot_way_fill(slot_way(s, s->ref, &c->slot_key), s->ref, &c->slot_key,
				      s->kslot);
	}
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
 * exit_live(). Not with -c (user_slot_enabled), which filters by the thread's vCPU.
 *
 * With keys, a userspace exit begins here only when its key is that of its guest exit in flight,
 * final, begun from this slot (its key in its cell: key_user_exit() would take it so) and a way
 * of the slot maps (the userspace exit's cell, key) to its entry (cpu_slot_note() fills it from
 * the thread's last userspace exit): the key goes to the userspace exit's cell (slot_key, as
 * for a kernel exit: uexit_key_now() reads it) and its entry to ukslot, which its KVM_RUN
 * charges. Such a key waits for nothing (key_exit_done()). The thread's pend_key is left as it
 * was: it serves only an exit to the VMM with no guest exit in flight (kvm_exit does not fire:
 * key_user_exit()), never where the slot runs.
 *
 * Unlike kvm_exit and kvm_entry, which fire with preemption off, kvm_userspace_exit and the
 * KVM_RUN hooks run preemptible (only migration is off): another vCPU thread may write the
 * user half while a program is halfway through reading it. So the writer clears utask first
 * and sets it last, and a reader takes (uref, ureason, ustart) between two reads of
 * (utask, uborn) that both name its thread: only the thread itself writes its own name, so
 * any other writer in between shows as a cleared or foreign utask, and the reader falls back
 * to the thread's state. A reader's own store of ustart after another thread's write at worst
 * makes that thread's KVM_RUN miss the slot (its cell's start differs) and fall back too; so
 * ukslot is stored with uref, in one store (upair): a half can then hold this thread's entry
 * only beside this thread's cell. The guest half is read the same way, between two reads of
 * (task, born).
 */
/* Where a test object writes another thread's user half, as a preemption there would. */
#ifndef USER_SLOT_PREEMPTED
#define USER_SLOT_PREEMPTED(s)
#endif

/*
 * The user half of s as this thread, (task, born) as slot_self() names it, last wrote it: false
 * when another thread's is there.
 */
static __always_inline bool user_slot_read(struct cpu_exit_slot *s, __u64 task, __u64 born,
					   __u32 *ref, __u32 *reason, __u64 *start, __u32 *ukslot,
					   struct key_note *ukey)
{
	if (s->utask != task || s->uborn != born)
		return false;
	barrier();
	USER_SLOT_PREEMPTED(s);
	*ref = s->uref;
	*reason = s->ureason;
	*start = s->ustart;
	*ukslot = s->ukslot;
	if (run_keys && ukey)
		*ukey = (struct key_note){ .key = s->ukey, .kind = s->ukind, .dir = s->udir };
	barrier();
	return s->utask == task && s->uborn == born;
}

/*
 * run_keys: the current thread's context switches so far. A note stamped with them at the put is
 * taken only by an exit of the same count: the thread never left its CPU in between, so the note
 * is its own KVM_RUN's, never one an earlier KVM_RUN left here (a thread that moves CPU is
 * switched out first).
 */
#ifndef RUN_KEY_SWITCHES
static __always_inline __u64 run_key_switches(void)
{
	struct task_struct *t = bpf_get_current_task_btf();

	return t->nvcsw + t->nivcsw;
}
#else
#define run_key_switches RUN_KEY_SWITCHES
#endif

/*
 * run_keys (bpf/run_key.bpf.h): the end of a KVM_RUN (kvm_fpu's put, where the vCPU is still
 * loaded) notes in its CPU's slot what kvm_run says of the exit to the VMM that follows, for
 * the kvm_userspace_exit right after it (run_key_take()); RUN_KEY_UNREAD when the vCPU is not
 * found, so that no older note stands in for it.
 */
static __always_inline void run_key_note(__u32 cpu)
{
	struct cpu_exit_slot *s;
	struct key_note k = {};
	__u64 task, born;
	__u32 reason;

	reason = run_key_read(&k);
	s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	if (!s)
		return;
	slot_self(&task, &born);
	/* Named last and cleared first, as the user half (see above): preemptible here too. */
	s->rtask = 0;
	barrier();
	s->rborn = born;
	s->rreason = reason;
	s->rkey = k.key;
	s->rkind = k.kind;
	s->rdir = k.dir;
	s->rswitches = run_key_switches();
	barrier();
	s->rtask = task;
}

/*
 * run_keys: kvm_userspace_exit of reason takes the key the put noted in slot s (k; none when
 * there is none of this thread's KVM_RUN, or it is another reason's: a failed KVM_RUN leaves
 * the last exit's in kvm_run) and clears a note of this thread's whatever it says: a note
 * serves one exit. The clear is a compare-and-swap: preempted before it, the thread must not
 * wipe the note another thread's put made meanwhile. An IO, MMIO, hypercall or MSR exit with
 * no key is counted (LOST_KEY_RUN).
 */
static __always_inline void run_key_take(struct cpu_exit_slot *s, __u64 task, __u64 born,
					 __u32 reason, struct key_note *k)
{
	bool mine;

	*k = (struct key_note){};
	if (s->rtask == task && s->rborn == born) {
		barrier();
		*k = (struct key_note){ .key = s->rkey, .kind = s->rkind, .dir = s->rdir };
		mine = s->rreason == reason && s->rswitches == run_key_switches();
		barrier();
		/* Still this thread's at the swap: no put wrote the note since the name was read
		 * (a writer clears rtask first and names its own thread last). */
		if (__sync_val_compare_and_swap(&s->rtask, task, 0) == task && mine)
			return;
		*k = (struct key_note){};
	}
	if (run_key_reason_keyed(reason))
		lost_inc(LOST_KEY_RUN);
}

/* run_key_take() from this CPU's slot, for an exit that begins through the thread's state. */
static __always_inline void run_key_take_cpu(__u32 cpu, __u32 reason, struct key_note *k)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	__u64 task, born;

	*k = (struct key_note){};
	if (!s) {
		if (run_key_reason_keyed(reason))
			lost_inc(LOST_KEY_RUN);
		return;
	}
	slot_self(&task, &born);
	run_key_take(s, task, born, reason, k);
}

/*
 * Keys: the key of the userspace exit of cell uref (of reason) about to begin from s, the
 * thread's guest exit's, and its entry (*kslot): false unless that exit is in flight from this
 * slot with a key in its cell that the exit to the VMM takes as settled (key_user_settled())
 * and a way holds (uref, key). The guest half read between two reads of
 * (task, born) that name this thread (the program is preemptible, see above).
 */
static __always_inline bool cpu_slot_user_key(struct cpu_exit_slot *s, __u64 task, __u64 born,
					      __u32 uref, __u32 reason, struct key_note *k,
					      __u32 *kslot)
{
	struct cell *c;
	__u32 ref;

	c = slot_guest_keyed(s, task, born, &ref);
	if (!c || !key_user_settled(reason, &c->slot_key))
		return false;
	*k = c->slot_key;
	*kslot = slot_way_kslot(slot_way(s, uref, k), uref, k);
	barrier();
	return *kslot && s->task == task && s->born == born;
}

/*
 * The user half of s written as thread ts's: cell ref, reason, its key entry kslot, with
 * run_keys the key k that entry is of, and start (0: no exit in flight). Cleared first, named
 * last: a reader preempted in the middle sees no thread's name, and a half written by two
 * threads at once names neither (uborn is the first field written).
 */
static __always_inline void user_half_write(struct cpu_exit_slot *s, struct thread_state *ts,
					    __u32 ref, __u32 reason, __u32 kslot,
					    const struct key_note *k, __u64 start)
{
	if (!ts->slot_task)
		slot_self(&ts->slot_task, &ts->slot_born);
	s->utask = 0;
	barrier();
	s->uborn = ts->slot_born;
	s->upair = slot_pair(ref, kslot);
	s->ureason = reason;
	if (run_keys && k) {
		s->ukey = k->key;
		s->ukind = k->kind;
		s->udir = k->dir;
	}
	s->ustart = start;
	barrier();
	s->utask = ts->slot_task;
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
	/* The thread's uexit_key is this exit's (key_user_exit()), not the cell's. */
	if (key_mode)
		c->slot_keyed = 0;
	s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	if (!s)
		return;
	/* run_keys: the exit's key from kvm_run (handle_user_exit()), its entry if the thread's
	 * cache has it (else its KVM_RUN, through the state, makes it: cpu_slot_user_keyed()). */
	if (run_keys)
		user_half_write(s, ts, ref, reason, key_cached_slot(ts, ref, &ts->uexit_key),
				&ts->uexit_key, now);
	else
		user_half_write(s, ts, ref, reason, key_mode ? key_user_final(ts, ref) : 0, NULL,
				now);
}

/*
 * run_keys: the exit to the VMM in cell ref (of reason) that its KVM_RUN ended through the
 * thread's state, charged to key k whose entry is kslot (0: not in the thread's cache). The
 * half takes (ref, reason, k, kslot) with no exit in flight (ustart 0), as the thread's, so
 * that its next exit of the reason begins here and, when its key is the same, ends here too
 * (cpu_slot_user_exit(), cpu_slot_run()). The cell stays named (the caller kept
 * ts->uexit_cell on it).
 */
static __always_inline void cpu_slot_user_keyed(__u32 cpu, struct thread_state *ts, __u32 ref,
						__u32 reason, const struct key_note *k,
						__u32 kslot)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);

	if (s)
		user_half_write(s, ts, ref, reason, kslot, k, 0);
}

/*
 * kvm_userspace_exit of reason on cpu at now, before any lookup of the thread's state: true
 * when the slot began the exit. An exit still in flight in the cell was never ended by a
 * KVM_RUN: counted as handle_user_exit() counts it.
 */
static __always_inline bool cpu_slot_user_exit(__u32 cpu, __u64 now, __u32 reason)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	__u32 ref, ureason, uk, kslot = 0;
	__u64 ustart, task, born;
	struct key_note k;
	struct cell *c;

	if (!s)
		return false;
	/* Once for both halves' tests: a helper call less per userspace exit with keys. */
	slot_self(&task, &born);
	if (!user_slot_read(s, task, born, &ref, &ureason, &ustart, &uk, NULL) || ureason != reason)
		return false;
	c = cell_get(ref);
	if (!c || !c->exit_named)
		return false;
	if (key_mode && !run_keys && !cpu_slot_user_key(s, task, born, ref, reason, &k, &kslot))
		return false;
	/* run_keys: the key the put noted (run_key_take()), kept in the cell (only this thread
	 * writes it): the KVM_RUN charges it from the half when it is the half's (cpu_slot_run()),
	 * and the half is left as its writer named it. */
	if (run_keys)
		run_key_take(s, task, born, reason, &k);
	if (c->inflight_ts)
		lost_inc(LOST_UNMATCHED_RUN);
	exit_count(ref, c, now);
	if (key_mode) {
		c->slot_key = k;
		c->slot_keyed = 1;
	}
	if (key_mode && !run_keys) {
		/* With uref in one store: preempted after it, another thread's rewrite of the
		 * half replaces both; before it, this store leaves that thread's ustart beside
		 * this thread's cell, whose start differs, and its KVM_RUN falls back. */
		s->upair = slot_pair(ref, kslot);
		barrier();
	}
	s->ustart = now;
	return true;
}

/*
 * KVM_RUN on cpu at now: true when the slot held the thread's userspace exit and ended it. With
 * keys, charged to the entry ukslot: cpu_slot_user_exit() kept it only for the exit's key; with
 * run_keys the half's key's, which must be the exit's: the cell's when the slot began it
 * (slot_keyed), else the one the thread's state noted with the half (cpu_slot_user_note()).
 */
static __always_inline bool cpu_slot_run(__u32 cpu, __u64 now)
{
	struct cpu_exit_slot *s = bpf_map_lookup_elem(&cpu_exits, &cpu);
	struct exit_split none = {};
	__u32 ref, ureason, uk, b;
	__u64 start, task, born;
	struct key_stats *st;
	struct key_note ukey = {};
	struct cell *c;

	if (!s)
		return false;
	slot_self(&task, &born);
	if (!user_slot_read(s, task, born, &ref, &ureason, &start, &uk, &ukey) || (key_mode && !uk))
		return false;
	c = cell_get(ref);
	/* No ended test, unlike cpu_slot_end(): the slot names a task by its start time too, and
	 * an ended cell's thread never runs again. */
	if (!c || !start || c->inflight_ts != start)
		return false;
	if (run_keys && c->slot_keyed && (c->slot_key.key != ukey.key ||
					  c->slot_key.kind != ukey.kind ||
					  c->slot_key.dir != ukey.dir))
		return false;
	c->inflight_ts = 0;
	st = key_mode ? key_slot_stats(uk) : NULL;
	b = hist_bucket(now - start);
	cell_end(c, start, now, &none, b);
	if (st)
		key_charge_slot(st, now - start, b);
	return true;
}

#endif /* VMEXIT_CPU_EXIT_SLOT_BPF_H */
