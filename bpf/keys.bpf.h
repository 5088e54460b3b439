/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Keys (--by key, --by rip): what each exit was about. The exit in flight is annotated with a
 * key (a port, an address, an MSR, a leaf, a hypercall, or its guest RIP), a userspace exit
 * takes the key of the guest exit that led to it, and at completion the latency goes to the
 * key table as well as to the cell. Included by handlers.bpf.h; every call is behind key_mode,
 * a constant the verifier folds: without keys the per-exit path is the same instructions.
 *
 * The table is a hash of its own, sized max_keys plus a reserve for the two rows every cell
 * may need besides its keys: `none` (exits nothing described) and `other` (exits whose key
 * found the table full, each counted in lost[LOST_KEYS_FULL]). One writer per entry (the
 * cell's thread), like the cells: no atomics per exit.
 */
#ifndef VMEXIT_KEYS_BPF_H
#define VMEXIT_KEYS_BPF_H

#include "key_rules.h"
#include "vmx_vector.bpf.h"

const volatile __u32 key_mode = KEY_MODE_OFF;	/* enum vmexit_key_mode */
const volatile __u32 max_keys = 0;
/* --key-gpa-shift: a guest-physical fault's key is its address in units of 2^shift bytes. */
const volatile __u32 key_gpa_shift = 12;
/* stream/record --keys put the key in each record: the table is stat's, top's and serve's. */
const volatile bool key_table_enabled = true;
/* Entries made for real keys (not none/other); may run a few past max_keys (racing CPUs). */
__u32 keys_used;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);		/* sized by userspace: max_keys + the reserve */
	__type(key, struct key_id);
	__type(value, struct key_stats);
} key_table SEC(".maps");

/* A new entry's first value: its histogram is never written, so it stays zero. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct key_stats);
} key_scratch SEC(".maps");

static __always_inline void key_charge(__u32 ref, const struct cell *c, const struct key_note *k,
				       __u64 lat);
static __always_inline void stream_send(struct thread_state *ts, __u32 tgid, __u32 tid, __u64 start,
					__u64 lat, __u16 type, const struct exit_split *s,
					const struct key_note *key);
static __always_inline bool stream_wanted(struct thread_state *ts, __u64 lat);

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
		key_charge(ref, c, &ts->late_key, ts->late_lat);
	/* stream --keys: the exit's record, which waited for the same key. */
	if (stream_enabled && ts->late_stream) {
		ts->late_stream = 0;
		stream_send(ts, 0, 0, ts->late_start, ts->late_lat, VMEXIT_EV_USER_EXIT,
			    &ts->late_split, &ts->late_key);
	}
}

/* A kvm_exit begins: its key so far (its RIP with --by rip, an interrupt's vector, else none
 * yet). */
static __always_inline void key_exit_start(struct thread_state *ts, const struct exit_info *x)
{
	if (ts->late_ref)
		key_settle(ts);
	ts->exit_key = (struct key_note){};
	if (key_exit_is_cpuid(x->isa, x->reason))
		ts->flags |= TS_CPUID_EXIT;
	else
		ts->flags &= ~TS_CPUID_EXIT;
	ts->vec_vcpu = 0;
	if (key_mode == KEY_MODE_RIP) {
		ts->exit_key.kind = KEY_RIP;
		ts->exit_key.key = x->rip;
	} else if (key_exit_vector(x->isa, x->reason, x->intr_info, &ts->exit_key.key)) {
		ts->exit_key.kind = KEY_VECTOR;
	}
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

	if (!vmx_cached_intr_info((struct kvm_vcpu *)ts->vec_vcpu, ts->vec_reason, &info)) {
		ts->vec_vcpu = 0;
		lost_inc(LOST_KEY_VECTOR);
		return;
	}
	ts->vec_vcpu = 0;
	if (key_exit_vector(VMEXIT_ISA_VMX, ts->vec_reason, info, &v))
		ts->exit_key = (struct key_note){ .kind = KEY_VECTOR, .key = v };
}

/*
 * A userspace exit begins: the key of the guest exit in flight that led to it, else (where
 * kvm_exit does not fire) the last key event of this KVM_RUN if it can be this exit's: KVM
 * traces an OUT, an MMIO access and an MSR before it exits to the VMM. An IN is traced only
 * when its data is there, in the next KVM_RUN: key_seen() corrects the key then.
 */
static __always_inline void key_user_exit(struct thread_state *ts, __u32 reason)
{
	if (ts->late_ref)
		key_settle(ts);
	if (ts->vec_vcpu && ts->exit_cell != CELL_NONE)
		key_vector_late(ts);
	if (ts->exit_cell != CELL_NONE && ts->exit_key.kind != KEY_NONE)
		ts->uexit_key = ts->exit_key;
	else if (key_fits_user_exit(ts->pend_key.kind, reason))
		ts->uexit_key = ts->pend_key;
	else
		ts->uexit_key = (struct key_note){};
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
	if (ts->exit_cell != CELL_NONE &&
	    key_replaces(ts->flags & TS_CPUID_EXIT, ts->exit_key.kind, k->kind))
		ts->exit_key = *k;
	ts->pend_key = *k;
}

/*
 * A completed exit, begun at start, its split s. An IO exit to the VMM waits (key_settle) when
 * it is charged, and its stream record with it (true: it waits): the IN's completion comes
 * right after the next KVM_RUN began.
 */
static __always_inline bool key_exit_done(struct thread_state *ts, __u32 ref, const struct cell *c,
					  const struct key_note *k, __u64 start, __u64 lat,
					  const struct exit_split *s, bool user)
{
	if (user) {
		/* A new KVM_RUN: what was traced in the last one describes no exit to come. */
		ts->pend_key.kind = KEY_NONE;
		if (ts->uexit_reason == KEY_KVM_EXIT_IO) {
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
	}
	key_charge(ref, c, k, lat);
	return false;
}

/* Slow path: the first exit of a key on this cell. NULL when not even `other` has room. */
static __noinline struct key_stats *key_add(struct key_id *id, const struct cell *c)
{
	struct key_stats *st;
	__u32 zero = 0;
	bool real = id->k.kind != KEY_NONE && id->k.kind != KEY_OTHER;

	if (real && keys_used >= max_keys) {
		lost_inc(LOST_KEYS_FULL);
		id->k.kind = KEY_OTHER;
		id->k.dir = KEY_DIR_NONE;
		id->k.key = 0;
		st = bpf_map_lookup_elem(&key_table, id);
		if (st)
			return st;
		real = false;
	}
	st = bpf_map_lookup_elem(&key_scratch, &zero);
	if (!st)
		return NULL;
	__builtin_memcpy(&st->id, &c->key, sizeof(st->id));
	st->count = 0;
	st->left = 0;
	st->total_ns = 0;
	st->max_ns = 0;
	st->min_ns = ~0ULL;
	if (bpf_map_update_elem(&key_table, id, st, BPF_NOEXIST)) {
		/* The reserve is gone too (more cells than it was sized for). */
		if (id->k.kind != KEY_OTHER)
			lost_inc(LOST_KEYS_FULL);
		return NULL;
	}
	if (real)
		__sync_fetch_and_add(&keys_used, 1);
	return bpf_map_lookup_elem(&key_table, id);
}

/* The entry of cell ref (c) for key k, made if new; NULL without a table or room. */
static __always_inline struct key_stats *key_entry(__u32 ref, const struct cell *c,
						   const struct key_note *k)
{
	struct key_id id = { .cell = ref, .tid = c->key.tid, .k = *k };
	struct key_stats *st;

	if (!key_table_enabled)
		return NULL;
	st = bpf_map_lookup_elem(&key_table, &id);
	return st ? st : key_add(&id, c);
}

/* A completed exit of cell ref (c), latency lat, about k. */
static __always_inline void key_charge(__u32 ref, const struct cell *c, const struct key_note *k,
				       __u64 lat)
{
	struct key_stats *st = key_entry(ref, c, k);

	if (st)
		lat_add(&st->count, &st->total_ns, &st->min_ns, &st->max_ns, st->hist, lat);
}

/*
 * The exit in flight of cell ref, about k, that its ending thread leaves unfinished (a VMM
 * that quits in an exit to it, and the guest exit behind it): counted, as its cell counts it
 * started, with its age at now in the time, but in no latency (it has none).
 */
static __always_inline void key_left(__u32 ref, const struct key_note *k, __u64 now)
{
	struct cell *c = cell_get(ref);
	struct key_stats *st;

	if (!c || !c->inflight_ts)
		return;
	st = key_entry(ref, c, k);
	if (st) {
		st->left++;
		st->total_ns += now - c->inflight_ts;
	}
}

/* A key tracepoint's program, on the current thread (ids as hot_ids() gives them). */
static __always_inline void handle_key(__u64 id, const struct key_note *k, bool in_done)
{
	struct thread_state *ts = thread_get(id >> 32, (__u32)id, true);
	struct key_note g;

	if (!ts || (ts->flags & TS_IGNORED))
		return;
	if (k->kind == KEY_GPA) {
		g = *k;
		g.key &= ~0ULL << (key_gpa_shift & 63);
		k = &g;
	}
	key_seen(ts, k, in_done);
}

#endif /* VMEXIT_KEYS_BPF_H */
