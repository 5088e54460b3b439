/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys (--by key, --by rip): what each exit was about. The exit in flight is annotated with a
 * key (a port, an address, an MSR, a leaf, a hypercall, or its guest RIP), a userspace exit
 * takes the key of the guest exit that led to it, and at completion the latency goes to the
 * key table as well as to the cell. Included by handlers.bpf.h; every call is behind key_mode,
 * a constant the verifier folds: without keys the per-exit path is the same instructions.
 *
 * The table: each entry's statistics in an array (key_slots), and a hash from (cell, thread,
 * key) to its slot (key_table), sized alike: max_keys plus a reserve for the two rows every cell
 * may need besides its keys: `none` (exits nothing described) and `other` (exits whose key
 * found the table full, each counted in lost[LOST_KEYS_FULL]). The hash, a jhash of the 24-byte
 * key_id and a bucket walk, is what --by key cost most per exit; a thread finds the entries it
 * charged lately in a small cache in its state (thread_state.key_cache), and the hash only on
 * a miss. One writer per entry (the cell's thread), like the cells: no atomics per exit.
 * Userspace reads the hash for the slots, the slots for the figures, and hands the slot of a
 * forgotten entry back zeroed (free_keys), as it does cells.
 */
#ifndef VMEXIT_KEYS_BPF_H
#define VMEXIT_KEYS_BPF_H

#include "key_rules.h"
#include "vmx_vector.bpf.h"
#include "run_key.bpf.h"

const volatile __u32 key_mode = KEY_MODE_OFF;	/* enum vmexit_key_mode */
/* Exits to the VMM keyed from kvm_run at their KVM_RUN (bpf/run_key.bpf.h), no key programs. */
const volatile bool run_keys = false;
const volatile __u32 max_keys = 0;
/* key_slots' size (max_keys + the reserve): next_key is never taken past it. */
const volatile __u32 key_slots_nr = 0;
/* --key-gpa-shift: a guest-physical fault's key is its address in units of 2^shift bytes. */
const volatile __u32 key_gpa_shift = 12;
/* stream/record --keys put the key in each record: the table is stat's, top's and serve's. */
const volatile bool key_table_enabled = true;
/* Entries made for real keys (not none/other); may run a few past max_keys (racing CPUs). */
__u32 keys_used;
/* key_slots never handed out yet start here. */
__u32 next_key;

#define KEY_SLOT_NONE	~0u

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* sized by userspace: key_slots_nr */
	__type(key, struct key_id);
	__type(value, __u32);		/* the entry's index in key_slots */
} key_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);		/* sized by userspace: key_slots_nr */
	__type(key, __u32);
	__type(value, struct key_stats);
} key_slots SEC(".maps");

/* Slots of forgotten entries, zeroed by userspace: taken before new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);		/* sized by userspace: key_slots_nr */
	__type(value, __u32);
} free_keys SEC(".maps");

static __always_inline void key_charge(struct thread_state *ts, __u32 ref, const struct cell *c,
				       const struct key_note *k, __u64 lat);
static __always_inline void stream_send(struct thread_state *ts, __u32 tgid, __u32 tid, __u64 start,
					__u64 lat, __u16 type, const struct exit_split *s,
					const struct key_note *key);
static __always_inline bool stream_wanted(struct thread_state *ts, __u64 lat);
static __always_inline bool exit_live(__u32 ref);
static __always_inline struct key_note *exit_key_now(struct thread_state *ts);
static __always_inline void key_slot_keyed(struct thread_state *ts, __u32 ref,
					   const struct key_note *ek);
static __always_inline bool cpu_slot_key(const struct key_note *k, bool in_done);

/*
 * An IO exit to the VMM that completed (at KVM_RUN) and waits for its key: the next key event
 * of the thread, if it is the completion of an IN (see key_seen), or else whatever key it had.
 */
static __always_inline void key_settle(struct thread_state *ts)
{
	__u32 ref = ts->late_ref;
	struct cell *c = cell_get(ref);

	ts->late_ref = CELL_NONE;
	if (c)
		key_charge(ts, ref, c, &ts->late_key, ts->late_lat);
	/* stream --keys: the exit's record, which waited for the same key. */
	if (stream_enabled && ts->late_stream) {
		ts->late_stream = 0;
		stream_send(ts, 0, 0, ts->late_start, ts->late_lat, VMEXIT_EV_USER_EXIT,
			    &ts->late_split, &ts->late_key);
	}
}

/*
 * The key of kvm_exit x as kvm_exit knows it: its RIP with --by rip, an interrupt's vector, a
 * CPUID exit's leaf, else none yet. From the exit alone: the per-CPU slot compares it with the
 * last exit's (cpu_slot_exit()) before any thread state is looked up. km: key_mode, which the
 * slot's caller passes as a constant (kvm_exit's keyed slot path, bpf/vmexit.bpf.c).
 */
static __always_inline void key_of_exit_in(const struct exit_info *x, struct key_note *k,
					   __u32 km)
{
	*k = (struct key_note){};
	/* The leaf before the vector: only a CPUID exit has a leaf, only an interrupt's or an
	 * NMI's a vector, and the CPUID exits are the many (the vector's tests cost them ~7
	 * instructions each on the fast path). */
	if (km == KEY_MODE_RIP) {
		k->kind = KEY_RIP;
		k->key = x->rip;
	} else if (x->has_leaf) {
		k->kind = KEY_CPUID;
		k->key = x->leaf;
	} else if (key_exit_vector(x->isa, x->reason, x->intr_info, &k->key)) {
		k->kind = KEY_VECTOR;
	}
}

/* key_of_exit_in() under this run's key_mode. */
static __always_inline void key_of_exit(const struct exit_info *x, struct key_note *k)
{
	key_of_exit_in(x, k, key_mode);
}

/* A kvm_exit begins: its key so far (key_of_exit()). */
static __always_inline void key_exit_start(struct thread_state *ts, const struct exit_info *x)
{
	if (ts->late_ref)
		key_settle(ts);
	if (key_exit_is_cpuid(x->isa, x->reason))
		ts->flags |= TS_CPUID_EXIT;
	else
		ts->flags &= ~TS_CPUID_EXIT;
	ts->vec_vcpu = 0;
	key_of_exit(x, &ts->exit_key);
}

/*
 * The fast path's CPUID exit: its leaf, the guest's RAX as KVM holds it when kvm_exit fires, so
 * that no program need run on kvm_cpuid (a raw tracepoint's dispatch and a task-storage lookup
 * per CPUID exit, most of what --by key cost on top of plain stat). false where kvm_cpuid would
 * not have traced the exit's leaf (key_leaf_at_exit(), include/key_rules.h); the caller,
 * key_exit_leaf(), has tested the vCPU and this kernel's fields, and isa is a constant at each
 * of its calls. The guest's RAX and RCX are current in vcpu->arch.regs when
 * kvm_exit fires, in the bed kernels' modules (Debian's 6.1.192 and 6.12.117, disassembled):
 * - VMX, 6.1 and 6.12: vmx_vcpu_run() traces kvm_exit after vmx_vcpu_enter_exit() returned,
 *   and __vmx_vcpu_run()'s vmx_vmexit (vmenter.S) has stored every GPR but RSP into the regs
 *   array it is handed (&vcpu->arch.regs) right after the VM exit; vmx_register_cache_reset()
 *   marks only RIP, RSP and the lazily read registers unavailable.
 * - SVM, 6.12: svm_vcpu_run() copies vmcb->save.rax into regs[VCPU_REGS_RAX] (not for SEV-ES
 *   guests, whose CPUID exits as VMGEXIT) and traces kvm_exit after; __svm_vcpu_run() stores
 *   RCX and the other GPRs after VMRUN. 6.1: the same copy, and kvm_exit is traced first thing
 *   in svm_handle_exit(), which vcpu_enter_guest() calls after svm_vcpu_run() returned.
 * A nested guest's exit finds its (L2's) registers there. regs_avail is not consulted: the GPRs
 * are always available on x86 (only RSP and RIP are read lazily, on VMX).
 */
static __always_inline bool key_leaf_read(struct kvm_vcpu *vcpu, __u32 isa, __u32 reason,
					  __u32 *leaf)
{
	bool guest = vcpu->arch.hflags & KEY_HF_GUEST_MASK, l1_cpuid = true;
	bool faulting = vcpu->arch.msr_misc_features_enables & KEY_CPUID_FAULT;
	__u32 word;

	/* An L2's CPUID on SVM: L0 emulates it unless L1 intercepts it. Unknown: not keyed. */
	if (guest && isa == VMEXIT_ISA_SVM && bpf_core_type_exists(struct vcpu_svm)) {
		struct vcpu_svm *svm = (void *)vcpu - bpf_core_field_offset(struct vcpu_svm, vcpu);

		if (bpf_core_field_exists(svm->nested.ctl.intercepts) &&
		    !bpf_probe_read_kernel(&word, sizeof(word), __builtin_preserve_access_index(
				    &svm->nested.ctl.intercepts[KEY_SVM_INTERCEPT_CPUID_WORD])))
			l1_cpuid = word & (1u << KEY_SVM_INTERCEPT_CPUID_BIT);
	}
	if (!key_leaf_at_exit(isa, reason, guest, l1_cpuid, faulting))
		return false;
	/* kvm_cpuid's function: the low 32 bits of RAX (kvm_emulate_cpuid()'s u32 eax). */
	*leaf = (__u32)vcpu->arch.regs[0];
	return true;
}

/* The fast path's CPUID exit's leaf (key_leaf_read(), above): false for any other exit. */
static __always_inline bool key_exit_leaf(struct kvm_vcpu *vcpu, __u32 isa, __u32 reason,
					  __u32 *leaf)
{
	/* The three fields in one test (&, not &&: each is a constant once loaded, one branch
	 * costs the many CPUID exits less than three); each ISA apart, with its CPUID reason,
	 * so that key_leaf_at_exit()'s own tests of isa and reason fold into these (an SEV-ES
	 * VMGEXIT is no CPUID exit it keys). */
	if (!(bpf_core_field_exists(vcpu->arch.regs) & bpf_core_field_exists(vcpu->arch.hflags) &
	      bpf_core_field_exists(vcpu->arch.msr_misc_features_enables)) || !vcpu)
		return false;
	if (isa == VMEXIT_ISA_VMX)
		return (reason & 0xffff) == KEY_VMX_EXIT_CPUID &&
		       key_leaf_read(vcpu, VMEXIT_ISA_VMX, reason, leaf);
	return isa == VMEXIT_ISA_SVM && reason == KEY_SVM_EXIT_CPUID &&
	       key_leaf_read(vcpu, VMEXIT_ISA_SVM, reason, leaf);
}

/*
 * The VMX fast path's exit in flight whose vector KVM had not cached at kvm_exit: read now
 * (its kvm_entry, or the exit to the VMM it led to), when KVM has. The vector is the exit's key
 * whatever key events came since, as it would have been from kvm_exit on (key_replaces()).
 */
static __always_inline void key_vector_late(struct thread_state *ts)
{
	__u32 info;
	__u64 v;

	if (!vmx_cached_intr_info((struct kvm_vcpu *)ts->vec_vcpu, ts->vec_reason, &info, false)) {
		ts->vec_vcpu = 0;
		lost_inc(LOST_KEY_VECTOR);
		return;
	}
	ts->vec_vcpu = 0;
	if (key_exit_vector(VMEXIT_ISA_VMX, ts->vec_reason, info, &v))
		ts->exit_key = (struct key_note){ .kind = KEY_VECTOR, .key = v };
}

/*
 * Whether an exit to the VMM of reason, keyed by its guest exit's key k, waits for nothing: k is
 * final, and not an IO exit's unless an OUT's port (traced before the exit) or a RIP. Such an
 * exit is charged at its KVM_RUN (key_exit_done()), and may begin from a CPU's slot
 * (cpu_slot_user_key()).
 */
static __always_inline bool key_user_settled(__u32 reason, const struct key_note *k)
{
	if (!key_final(k->kind))
		return false;
	return reason != KEY_KVM_EXIT_IO || k->kind == KEY_RIP ||
	       (k->kind == KEY_PORT && k->dir == KEY_DIR_OUT);
}

/*
 * A userspace exit begins: the key of the guest exit in flight that led to it, else (where
 * kvm_exit does not fire) the last key event of this KVM_RUN if it can be this exit's: KVM
 * traces an OUT, an MMIO access and an MSR before it exits to the VMM. An IN is traced only
 * when its data is there, in the next KVM_RUN: key_seen() corrects the key then.
 */
static __always_inline void key_user_exit(struct thread_state *ts, __u32 reason)
{
	const struct key_note *k;

	if (ts->late_ref)
		key_settle(ts);
	if (ts->vec_vcpu && ts->exit_cell != CELL_NONE)
		key_vector_late(ts);
	/* exit_live(): an exit the per-CPU slot ended leaves exit_cell set (key_slot_final()). */
	k = exit_live(ts->exit_cell) ? exit_key_now(ts) : NULL;
	ts->flags &= ~TS_UEXIT_FINAL;
	if (k) {
		/* Even none: what a key event after kvm_exit said is the exit's key already, and
		 * pend_key may be an earlier exit's (an IN's port comes at its completion). */
		ts->uexit_key = *k;
		if (key_user_settled(reason, k))
			ts->flags |= TS_UEXIT_FINAL;
	} else if (key_fits_user_exit(ts->pend_key.kind, reason)) {
		ts->uexit_key = ts->pend_key;
	} else {
		ts->uexit_key = (struct key_note){};
	}
	ts->pend_key.kind = KEY_NONE;
	ts->uexit_reason = reason;
}

/*
 * A kvm tracepoint described what the thread is doing. The guest exit in flight takes the
 * first such key (an MMIO access replaces the stage-2 fault that led to it; a CPUID leaf only
 * a CPUID exit's: key_replaces); the next exit to
 * the VMM may take it (key_user_exit). in_done: the completion of an IN that went to the VMM,
 * which names the IO exit waiting for it (key_settle).
 */
static __always_inline void key_seen(struct thread_state *ts, const struct key_note *k,
				     bool in_done)
{
	if (ts->late_ref) {
		if (in_done)
			ts->late_key = *k;
		key_settle(ts);
	}
	/* An exit the per-CPU slot ended may still be exit_cell here: its key was final
	 * (key_slot_final()), which key_replaces() never replaces. */
	if (ts->exit_cell != CELL_NONE) {
		struct key_note *ek = exit_key_now(ts);

		if (key_replaces(ts->flags & TS_CPUID_EXIT, ek->kind, k->kind)) {
			*ek = *k;
			/* Its entry known: kvm_entry may end the exit from its CPU's slot. */
			key_slot_keyed(ts, ts->exit_cell, ek);
		}
	}
	ts->pend_key = *k;
}

/*
 * A completed exit, begun at start, its split s. An IO exit to the VMM waits (key_settle) when
 * it is charged, and its stream record with it (true: it waits): the IN's completion comes
 * right after the next KVM_RUN began. Not one whose key is its guest exit's and final (an
 * OUT's port, traced before the exit to the VMM; a RIP): no key event can change it, and
 * charged now, it leaves the next kvm_exit free to begin from its CPU's slot.
 */
static __always_inline bool key_exit_done(struct thread_state *ts, __u32 ref, const struct cell *c,
					  const struct key_note *k, __u64 start, __u64 lat,
					  const struct exit_split *s, bool user)
{
	/* run_keys: k is kvm_run's, final; no key event comes (nor is any program there). */
	if (user && !run_keys) {
		/* A new KVM_RUN: what was traced in the last one describes no exit to come. */
		ts->pend_key.kind = KEY_NONE;
		/* c->slot_keyed: a CPU's slot began it, with its guest exit's final key. */
		if (ts->uexit_reason == KEY_KVM_EXIT_IO && !(ts->flags & TS_UEXIT_FINAL) &&
		    !c->slot_keyed) {
			ts->late_ref = ref;
			ts->late_lat = lat;
			ts->late_key = *k;
			if (stream_enabled) {
				ts->late_stream = stream_wanted(ts, lat);
				ts->late_start = start;
				ts->late_split = *s;
			}
			return true;
		}
		/* Its key the thread's uexit_key: kvm_exit may put its entry in a CPU's way. */
		if ((ts->flags & TS_UEXIT_FINAL) && !c->slot_keyed)
			ts->ulast_ref = ref;
	}
	key_charge(ts, ref, c, k, lat);
	return false;
}

/*
 * Slow path: the first exit of a key on this cell: a zeroed slot (a forgotten one first), its
 * identity and extremes set, then found through the hash. id->k becomes `other` when the
 * table has no room for a real key. KEY_SLOT_NONE when not even `other` has room.
 */
static __noinline __u32 key_add(struct key_id *id, const struct cell *c)
{
	struct key_stats *st;
	__u32 idx, *found;
	bool real = id->k.kind != KEY_NONE && id->k.kind != KEY_OTHER;

	if (real && keys_used >= max_keys) {
		lost_inc(LOST_KEYS_FULL);
		id->k.kind = KEY_OTHER;
		id->k.dir = KEY_DIR_NONE;
		id->k.key = 0;
		found = bpf_map_lookup_elem(&key_table, id);
		if (found)
			return *found;
		real = false;
	}
	if (bpf_map_pop_elem(&free_keys, &idx)) {
		/* Tested before the add, so that a full table does not push next_key on. */
		if (next_key >= key_slots_nr)
			goto full;
		idx = __sync_fetch_and_add(&next_key, 1);
	}
	st = bpf_map_lookup_elem(&key_slots, &idx);
	if (!st)
		goto full;	/* racing CPUs took the last ones */
	__builtin_memcpy(&st->id, &c->key, sizeof(st->id));
	st->count = 0;
	st->left = 0;
	st->total_ns = 0;
	st->max_ns = 0;
	st->min_ns = ~0ULL;
	if (bpf_map_update_elem(&key_table, id, &idx, BPF_NOEXIST)) {
		/* Slots and hash are sized alike: not expected, but the slot is not lost. */
		bpf_map_push_elem(&free_keys, &idx, BPF_ANY);
		goto full;
	}
	if (real)
		__sync_fetch_and_add(&keys_used, 1);
	return idx;
full:
	/* The reserve is gone too (more cells than it was sized for). */
	if (id->k.kind != KEY_OTHER)
		lost_inc(LOST_KEYS_FULL);
	return KEY_SLOT_NONE;
}

/* The way of the thread's cache that may hold (cell ref, key k): (ref + key + kind + dir) mod
 * KEY_CACHE_N. */
static __always_inline struct key_cached *key_way(struct thread_state *ts, __u32 ref,
						  const struct key_note *k)
{
	__u32 way = (ref + (__u32)k->key + k->kind + k->dir) & (KEY_CACHE_N - 1);

	return &ts->key_cache[way];
}

/* Whether way kc holds (cell ref, key k). */
static __always_inline bool key_way_holds(const struct key_cached *kc, __u32 ref,
					  const struct key_note *k)
{
	return kc->slot && kc->cell == ref && kc->key == k->key && kc->kind == k->kind &&
	       kc->dir == k->dir;
}

/*
 * The entry of cell ref (c) of thread ts for key k, made if new; NULL without a table or room.
 * The thread's cache first: its ways hold (cell, key) -> slot for entries only this thread
 * writes, and go with its state; an entry is forgotten only once its guest is gone, threads
 * and all, so a cached slot is never another entry's. A key redirected to `other` (the table
 * was full) is not cached: each of its exits is counted lost, as it was.
 */
static __always_inline struct key_stats *key_entry(struct thread_state *ts, __u32 ref,
						   const struct cell *c, const struct key_note *k)
{
	struct key_cached *kc = key_way(ts, ref, k);
	struct key_id id;
	__u32 idx, *found;

	if (!key_table_enabled)
		return NULL;
	if (key_way_holds(kc, ref, k)) {
		idx = kc->slot - 1;
		return bpf_map_lookup_elem(&key_slots, &idx);
	}
	id = (struct key_id){ .cell = ref, .tid = c->key.tid, .k = *k };
	found = bpf_map_lookup_elem(&key_table, &id);
	idx = found ? *found : key_add(&id, c);
	if (idx == KEY_SLOT_NONE)
		return NULL;
	if (id.k.kind == k->kind) {
		kc->key = k->key;
		kc->kind = k->kind;
		kc->dir = k->dir;
		kc->cell = ref;
		kc->slot = idx + 1;
	}
	return bpf_map_lookup_elem(&key_slots, &idx);
}

/*
 * The entry the thread's cache holds for (cell ref, key k), as its slot in key_slots + 1; 0
 * on a miss or without a table. Every entry the CPU slots take comes from here: a cache hit
 * only, never a new entry (see key_slot_final()).
 */
static __always_inline __u32 key_cached_slot(struct thread_state *ts, __u32 ref,
					     const struct key_note *k)
{
	struct key_cached *kc = key_way(ts, ref, k);

	if (!key_table_enabled)
		return 0;
	return key_way_holds(kc, ref, k) ? kc->slot : 0;
}

/*
 * The per-CPU exit slot with keys (bpf/cpu_exit_slot.bpf.h): the key entry the exit in flight
 * of cell ref will be charged to, as its slot in key_slots + 1, when kvm_entry may charge it
 * from the CPU's slot without the thread's state; 0 when the entry must read the state. Only
 * a key that nothing after kvm_exit can change: one set at kvm_exit (a CPUID leaf, a vector
 * KVM had cached, a RIP) that key_replaces() keeps, its exit's vector not due later
 * (ts->vec_vcpu, set only for an exit whose key is still none), and only a hit in the thread's
 * cache: an entry is made at the exit's end, as without the slot, so that an exit that never
 * ends (overwritten, its thread gone) leaves no empty row behind. A slot stays its entry's
 * until its guest is gone, threads and all, and the slot's exit is taken only while its cell
 * has not ended: the key slot read at kvm_entry is still this exit's entry.
 */
static __always_inline __u32 key_slot_final(struct thread_state *ts, __u32 ref)
{
	return key_final(ts->exit_key.kind) ? key_cached_slot(ts, ref, &ts->exit_key) : 0;
}

/*
 * The same for the userspace exit of cell ref that kvm_userspace_exit began through the
 * thread's state, for its KVM_RUN: only when its key is its guest exit's and settles it
 * (TS_UEXIT_FINAL: key_exit_done() charges it at the KVM_RUN, not later).
 */
static __always_inline __u32 key_user_final(struct thread_state *ts, __u32 ref)
{
	return (ts->flags & TS_UEXIT_FINAL) ? key_cached_slot(ts, ref, &ts->uexit_key) : 0;
}

/* The key entry of a slot's exit (key_slot_final()'s kslot), or NULL. */
static __always_inline struct key_stats *key_slot_stats(__u32 kslot)
{
	__u32 idx = kslot - 1;

	return bpf_map_lookup_elem(&key_slots, &idx);
}

/*
 * kvm_entry's end of an exit from the per-CPU slot: its key entry st (key_slot_stats(),
 * looked up before the cell's update) takes lat with the cell's bucket b, not computed again.
 */
static __always_inline void key_charge_slot(struct key_stats *st, __u64 lat, __u32 b)
{
	lat_add(&st->count, &st->total_ns, &st->min_ns, &st->max_ns, st->hist, lat, b);
}

/*
 * A completed exit of cell ref (c) of thread ts, latency lat, about k. Its bucket is computed
 * again, not taken from the cell's: kept live across key_entry()'s branches, it multiplies
 * the states the verifier walks (the test object, which holds every handler, then passed its
 * million-instruction limit).
 */
static __always_inline void key_charge(struct thread_state *ts, __u32 ref, const struct cell *c,
				       const struct key_note *k, __u64 lat)
{
	struct key_stats *st = key_entry(ts, ref, c, k);

	if (st)
		lat_add(&st->count, &st->total_ns, &st->min_ns, &st->max_ns, st->hist, lat,
			hist_bucket(lat));
}

/*
 * The exit in flight of cell ref, about k, that its ending thread leaves unfinished (a VMM
 * that quits in an exit to it, and the guest exit behind it): counted, as its cell counts it
 * started, with its age at now in the time, but in no latency (it has none).
 */
static __always_inline void key_left(struct thread_state *ts, __u32 ref, const struct key_note *k,
				     __u64 now)
{
	struct cell *c = cell_get(ref);
	struct key_stats *st;

	if (!c || !c->inflight_ts)
		return;
	st = key_entry(ts, ref, c, k);
	if (st) {
		st->left++;
		st->total_ns += now - c->inflight_ts;
	}
}

/*
 * A key tracepoint's program, on the current thread (ids as hot_ids() gives them: none with task
 * storage, where only a thread's first event needs them, and thread_get() reads them then).
 */
static __always_inline void handle_key(__u64 id, const struct key_note *k, bool in_done)
{
	struct thread_state *ts;
	struct key_note g;

	if (k->kind == KEY_GPA) {
		g = *k;
		g.key &= ~0ULL << (key_gpa_shift & 63);
		k = &g;
	}
	if (cpu_slot_key(k, in_done))
		return;
	ts = thread_get(id >> 32, (__u32)id, true);
	if (!ts || (ts->flags & TS_IGNORED))
		return;
	key_seen(ts, k, in_done);
}

#endif /* VMEXIT_KEYS_BPF_H */
