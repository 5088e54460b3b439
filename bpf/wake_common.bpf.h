/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stat --wake's bookkeeping, the same on every architecture: the vCPU threads, their pending
 * deliveries and halts, the cells they are counted in, and the programs that follow a thread
 * through the scheduler. Included once by each architecture's program set (bpf/wake.bpf.c,
 * bpf/wake_arm64.bpf.c), which keeps only how a delivery starts and how the vCPU is found.
 *
 * The including file has included vmlinux.h, the libbpf headers, wake.h and hist.h, and defines
 * what differs by architecture:
 *   struct kvm_vcpu___wake, struct hrtimer___wake	its view of KVM's vCPU and of an hrtimer
 *							(of which the callback, function, is read)
 *   PEND_SRC_SHIFT, PEND_STATE_SHIFT, PEND_VECTOR	pend_slot.info's layout: the vector's width
 *							(x86's 8 bits, the GIC's INTID) sets it
 *   wake_vcpu_index(vcpu)				the vCPU's number as its delivery hook
 *							names the target
 *   WAKE_VCPU_TRACK(t, tid, vk, vcpu)			a new vCPU thread tid into wake_vcpus
 *							under vk, and its guest timer's hrtimer,
 *							if any, into wake_timers and t->timer_key
 *							(and t->arch_ptr if it has a use)
 */
#ifndef __WAKE_COMMON_BPF_H
#define __WAKE_COMMON_BPF_H

/* A delivery waiting for its entry; info 0 is a free slot. */
#define PEND_USED		(1ull << 63)

enum pend_state {
	PEND_GUEST,	/* the vCPU was in guest mode */
	PEND_EXIT,	/* in an exit; a later kvm_vcpu_wakeup may make it halted */
	PEND_POLLED,
	PEND_SLEPT,
};

struct pend_slot {
	__u64 info;	/* PEND_USED | state | source | vector, at the PEND_*_SHIFTs */
	__u64 ts;	/* 0 until the sender has written it */
	__u64 wake_ts;	/* PEND_SLEPT: the scheduler's wake-up, then on CPU */
	__u64 on_ts;
	__u64 rq_at_on;	/* PEND_SLEPT: the thread's rq_ns when its halt ended */
};

/*
 * The halts of a thread that ended since their figures last reached its hlt cell. The halt's
 * end (wake_halt_end) finds the thread's record anyway and keeps them here; the entry that
 * follows adds them with the exit's own figures through its one lookup of the cell
 * (hlt_account), where each halt used to look the cell up once more (a hash lookup a
 * delivery in the VMX bed's timer guest: docs/design.md). An exit holds HLT_HELD
 * halts at most: the halt end that finds them all taken adds them first. A halt whose thread
 * never enters the guest again (KVM_RUN ended by a signal, then the thread exits or the VM is
 * torn down) is added at the thread's end (wake_thread_end); a record that is dropped or
 * stops naming its vCPU (thread_of()) adds its own first.
 */
#define HLT_HELD		4

struct hlt_held {
	__u32 halts;		/* held; their buckets are bucket[0 .. halts - 1] */
	__u32 polled;
	__u32 poll_slept;
	__u32 slept;
	__u32 invalid;
	__u16 bucket[HLT_HELD];	/* each halt's start-to-wake-up, hist_bucket()'s */
	__u64 halt_ns;
	__u64 wake_sum_ns;
	__u64 slept_halt_ns;
};

/* One vCPU thread. */
struct wake_thread {
	__u32 tgid;
	__s32 vcpu;
	__u32 tid;		/* whose slot of wake_threads, 0: free (or in wake_thr_shared) */
	__u64 proc_start;	/* its process's start: with tgid, the VMM (wake.h) */
	__u64 vcpu_ptr;		/* its struct kvm_vcpu: a thread id given again is another vCPU */
	__u64 timer_key;	/* its guest timer's hrtimer in wake_timers, or 0 */
	__u64 arch_ptr;		/* what the delivery hook reads of the vCPU (x86: the APIC's
				 * register page), kept by WAKE_VCPU_TRACK: fixed for its life */
	__u32 in_guest;
	__u32 halts;		/* kvm_vcpu_wakeup events in the exit in flight */
	__u64 exit_ts;		/* kvm_exit of the exit in flight */
	/* The scheduler's view since the last halt ended: first sleep, last wake-up, on CPU. */
	__u64 sleep_ts;
	__u64 wake_ts;
	__u64 on_ts;
	/*
	 * Preempted while runnable (switched out not asleep) at out_ts; rq_ns sums those waits.
	 * A woken vCPU thread on a busy CPU may be preempted again on its way from the halt to
	 * the entry: that wait is the run-queue's too, not time on CPU.
	 */
	__u64 out_ts;
	__u64 rq_ns;
	__u64 hlt_parts[NR_HLT_PARTS - 1];	/* poll, sleep, runq of the exit in flight */
	struct hlt_held held;
	/*
	 * The guest timer's hrtimer (x86's LAPIC timer, arm64's bg_timer) expired at timer_ts
	 * with the vCPU doing timer_state: KVM makes the interrupt pending only later, in the
	 * vCPU's thread once a halt has ended (x86's kvm_inject_pending_timer_irqs(), arm64's
	 * vcpu_load), so that delivery counts from the expiry. timer_wake/on: the halt's
	 * wake-up and on CPU, as in pend_slot.
	 */
	__u64 timer_ts;
	__u32 timer_state;
	__u64 timer_wake_ts;
	__u64 timer_on_ts;
	__u64 timer_rq_at_on;
	/*
	 * Set by a sender once its slot's time is written (pend_publish()), cleared by the entry
	 * that looks: the entries and halt ends with nothing pending, most of them, skip the slots.
	 */
	__u32 pend_any;
	struct pend_slot pend[WAKE_PENDING_SLOTS];
};

/*
 * A sender's note, in its thread, of what it is delivering (x86's kvm_apic_ipi, kvm_msi_set_irq,
 * ...; arm64's kvm_timer_update_irq), for the delivery hook that follows.
 */
struct wake_note {
	__u32 source;
	__u32 vector;	/* ~0 (x86's kvm_set_irq): any */
};

struct vcpu_id_key {
	__u32 tgid;
	__s32 vcpu;
};

/*
 * The vCPU threads' records, direct-mapped by the thread id's low bits (thread_find()): an
 * array's lookup is a few instructions the verifier inlines, where a hash lookup hashes the key
 * and walks a bucket, and kvm_entry and kvm_exit look their thread up at every exit (3.7 times a
 * timer delivery in the VMX bed). A thread whose slot another holds goes to wake_thr_shared.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, WAKE_MAX_THREADS);
	__type(key, __u32);			/* thread id & (WAKE_MAX_THREADS - 1) */
	__type(value, struct wake_thread);
} wake_threads SEC(".maps");

/* Ids that meet in one slot are few (sequential ids fill the array's slots in turn). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKE_MAX_THREADS / 4);
	__type(key, __u32);			/* thread id */
	__type(value, struct wake_thread);
} wake_thr_shared SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKE_MAX_THREADS);
	__type(key, struct vcpu_id_key);
	__type(value, __u32);			/* the vCPU's thread id */
} wake_vcpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKE_MAX_THREADS);
	__type(key, __u64);			/* the guest timer's hrtimer */
	__type(value, __u32);			/* the vCPU's thread id */
} wake_timers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKE_MAX_THREADS);
	__type(key, __u32);			/* the sender's thread id */
	__type(value, struct wake_note);
} wake_notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKE_MAX_CELLS);
	__type(key, struct wake_key);
	__type(value, struct wake_cell);
} wake_cells SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKE_MAX_CELLS);
	__type(key, struct hlt_key);
	__type(value, struct hlt_cell);
} hlt_cells SEC(".maps");

/* Zeroed values too large for the stack, to create cells and threads from. */
struct wake_zero {
	struct wake_cell wc;
	struct hlt_cell hc;
	struct wake_thread th;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct wake_zero);
} wake_zero SEC(".maps");

__u64 wake_lost[NR_WAKE_LOST];
/*
 * Deliveries KVM posted to a vCPU in guest mode: no exit, not timed (x86's wake_posted_irq(),
 * which counts each in its cell's posted too; this is their total).
 * The loader reads it from either skeleton; arm64's peer, GICv4's direct injection, passes no
 * tracepoint, so there it stays 0 (README: SGIs and LPIs unseen).
 */
__u64 wake_posted;
/*
 * Interrupts made pending for a wanted vCPU vmexit never saw enter guest mode (x86's
 * wake_pending(): its vCPU is learnt at kvm_entry/kvm_exit): none can be timed. A software KVM
 * (kvm_pvm) traces no entry at all; elsewhere, a vCPU halted since before vmexit started.
 */
__u64 wake_untimed;

/*
 * stream --wake: each delivery also as a VMEXIT_EV_WAKE record (include/vmexit.h) in the
 * stream's ring buffer, whose map userspace puts in place of this one before loading
 * (wake_progs_open_stream()). Off otherwise: the cells cost what they did. A record the ring
 * could not take is counted here and reported as the stream's ringbuf_full.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

const volatile bool emit_events;
/* The session's: the reader woken once per 2^shift bytes pending, not per record (0: each). */
const volatile __u32 stream_wake_shift;

/* The session's guests (-p, -g, a command and its forks: its pid_filter, shared) and -c. */
#include "pid_filter.bpf.h"
const volatile __s32 filter_vcpu = -1;
__u64 events_lost;

/*
 * Which thread ids have a record in wake_threads, direct-mapped by their low bits: the
 * scheduler's hooks run at every context switch and wake-up of the host, nearly all of them
 * another task's, and a load from here turns those away where a hash lookup hashes the key and
 * walks a bucket. A slot holds the one tracked id that maps to it, 0, or TRACKED_SHARED once
 * two did (then the hash decides, as before); it stops naming a thread only when that thread's
 * record goes (wake_thread_end).
 */
#define TRACKED_TIDS		16384
#define TRACKED_SHARED		(~0u)
__u32 tracked_tids[TRACKED_TIDS];
/*
 * The same for the threads with a note in wake_notes: a delivery from a thread that never
 * noted one (a vCPU's own timer, nearly all of them with a busy guest timer) looks none up.
 */
__u32 noted_tids[TRACKED_TIDS];

/*
 * The guest timers' hrtimer callback (x86's apic_timer_fn, arm64's kvm_bg_timer_expire), from
 * the last vCPU tracked: the hrtimer hook turns every other timer of the host away with a load
 * before it looks wake_timers up. 0 until a vCPU is tracked, when no expiry matters.
 */
__u64 wake_timer_fn;

static __always_inline __u32 *tid_slot(__u32 *table, __u32 tid)
{
	return &table[tid & (TRACKED_TIDS - 1)];
}

/*
 * The guest timers' threads, direct-mapped by the hrtimer's address: every guest timer's expiry
 * (one a timer delivery) finds its vCPU's thread with a load, which its record's timer_key
 * confirms, where wake_timers' lookup hashes the key and walks a bucket. A slot holds the one
 * thread whose timer maps to it, 0, or TRACKED_SHARED once two did (then wake_timers decides).
 * The address's low bits are the allocation's alignment, the same for every vCPU: folded away.
 */
#define TIMER_SLOTS		4096
__u32 timer_tids[TIMER_SLOTS];

static __always_inline __u32 *timer_slot(__u64 timer)
{
	return &timer_tids[((timer ^ (timer >> 13)) >> 6) & (TIMER_SLOTS - 1)];
}

/* Tid 0 is each CPU's idle task: never a vCPU, and 0 marks a free slot. */
static __always_inline bool tid_in(__u32 *table, __u32 tid)
{
	__u32 v = *tid_slot(table, tid);

	return tid && (v == tid || v == TRACKED_SHARED);
}

/* Slot v names tid from now on, or is shared. */
static __always_inline void slot_claim(__u32 *v, __u32 tid)
{
	__u32 old;

	if (*v == tid)
		return;
	old = __sync_val_compare_and_swap(v, 0, tid);
	if (old && old != tid)
		__sync_lock_test_and_set(v, TRACKED_SHARED);
}

static __always_inline void tid_add(__u32 *table, __u32 tid)
{
	slot_claim(tid_slot(table, tid), tid);
}

/* A thread's entry goes: its slot is free again, unless shared (the hash decides there). */
static __always_inline void tid_del(__u32 *table, __u32 tid)
{
	__sync_val_compare_and_swap(tid_slot(table, tid), tid, 0);
}

static __always_inline bool tid_tracked(__u32 tid)
{
	return tid_in(tracked_tids, tid);
}

/* The sender's note, if this thread ever wrote one. */
static __always_inline struct wake_note *note_of(__u32 tid)
{
	return tid_in(noted_tids, tid) ? bpf_map_lookup_elem(&wake_notes, &tid) : NULL;
}

/* A sender's note, in its own thread, for the delivery hook that follows. */
static __always_inline void note_put(__u32 tid, const struct wake_note *n)
{
	bpf_map_update_elem(&wake_notes, &tid, n, BPF_ANY);
	tid_add(noted_tids, tid);
}

/*
 * Every program here is tp_btf (a raw tracepoint's BTF-typed twin), whose return value the
 * kernel ignores: perf and kvm_stat see every event whatever it returns. (A classic
 * tracepoint program's 0 would drop the event for perf: bpf/vmexit.bpf.c's TP_PASS.)
 */

static __always_inline void *cell_get(void *map, const void *key, const void *zero, int lost)
{
	void *c = bpf_map_lookup_elem(map, key);

	if (c)
		return c;
	/* -EEXIST: another CPU made it first, which is as good. */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	c = bpf_map_lookup_elem(map, key);
	if (!c)
		__sync_fetch_and_add(&wake_lost[lost], 1);
	return c;
}

/* As lat_add() in handlers.bpf.h: the bound the verifier sees, on the value it indexes with. */
static __always_inline void hist_add(__u64 *hist, __u64 v)
{
	__u32 b = hist_bucket(v);

	barrier_var(b);
	if (b < NR_BUCKETS)
		hist[b]++;
}

static __always_inline struct wake_zero *zeroes(void)
{
	__u32 z = 0;

	return bpf_map_lookup_elem(&wake_zero, &z);
}

/*
 * The cell of key in map, made from the zeroed one at offset zoff of struct wake_zero if new:
 * the zeroes are looked up only then (a cell is made once, found at every delivery and halt).
 */
static __always_inline void *cell_find(void *map, const void *key, __u32 zoff, int lost)
{
	void *c = bpf_map_lookup_elem(map, key);
	struct wake_zero *z;

	if (c)
		return c;
	z = zeroes();
	if (!z) {
		__sync_fetch_and_add(&wake_lost[lost], 1);
		return NULL;
	}
	return cell_get(map, key, (void *)z + zoff, lost);
}

#define WAKE_ZERO_WC	offsetof(struct wake_zero, wc)
#define WAKE_ZERO_HC	offsetof(struct wake_zero, hc)

/* The hlt cell of t's vCPU, made if new; NULL: the map is full (counted lost). */
static __always_inline struct hlt_cell *hlt_cell_of(struct wake_thread *t)
{
	struct hlt_key k = { .tgid = t->tgid, .vcpu = t->vcpu, .proc_start = t->proc_start };

	return cell_find(&hlt_cells, &k, WAKE_ZERO_HC, WAKE_LOST_CELLS);
}

/*
 * The halts t holds, added to its cell c, and t's emptied. Without a cell (NULL, counted
 * lost) they go all the same: the next halts need the room.
 */
static __always_inline void hlt_held_add(struct hlt_cell *c, struct wake_thread *t)
{
	struct hlt_held *h = &t->held;
	__u32 i, b;

	if (c) {
		c->halts += h->halts;
		c->polled += h->polled;
		c->poll_slept += h->poll_slept;
		c->slept += h->slept;
		c->invalid += h->invalid;
		c->halt_ns += h->halt_ns;
		c->wake_sum_ns += h->wake_sum_ns;
		c->slept_halt_ns += h->slept_halt_ns;
		for (i = 0; i < HLT_HELD && i < h->halts; i++) {
			/* As hist_add(): the bound on the value that indexes. */
			b = h->bucket[i];
			barrier_var(b);
			if (b < NR_BUCKETS)
				c->hist[b]++;
		}
	}
	__builtin_memset(h, 0, sizeof(*h));
}

/* Before t's record goes or is keyed anew: its held halts into the cell of its key now. */
static __always_inline void hlt_held_flush(struct wake_thread *t)
{
	if (t->held.halts)
		hlt_held_add(hlt_cell_of(t), t);
}

_Static_assert(!(WAKE_MAX_THREADS & (WAKE_MAX_THREADS - 1)), "wake_threads is direct-mapped");

/* Thread tid's record, or NULL. */
static __always_inline struct wake_thread *thread_find(__u32 tid)
{
	__u32 i = tid & (WAKE_MAX_THREADS - 1);
	struct wake_thread *t = bpf_map_lookup_elem(&wake_threads, &i);

	/* Tid 0, each CPU's idle task, is never a vCPU: a free slot's 0 names no one. */
	if (!tid || (t && t->tid == tid))
		return tid ? t : NULL;
	return bpf_map_lookup_elem(&wake_thr_shared, &tid);
}

/*
 * Thread tid's record t (thread_find()'s) goes. An array slot is freed last, its tgid cleared
 * first, so that no reader (test_wake_scope_host) takes it for a thread of the VMM that ended.
 */
static __always_inline void thread_forget(__u32 tid, struct wake_thread *t)
{
	if (t->tid != tid) {
		bpf_map_delete_elem(&wake_thr_shared, &tid);
		return;
	}
	t->tgid = 0;
	t->vcpu_ptr = 0;
	__sync_lock_test_and_set(&t->tid, 0);
}

/* A new record for thread tid from z (a zeroed record, its other fields set), or NULL (lost). */
static __always_inline struct wake_thread *thread_new(__u32 tid, struct wake_thread *z)
{
	__u32 i = tid & (WAKE_MAX_THREADS - 1);
	struct wake_thread *t = bpf_map_lookup_elem(&wake_threads, &i);

	/*
	 * Claimed by its tid, then filled (tid included): no other program looks this thread up
	 * before thread_of() returns (its vCPU, timer and tracked id are published after).
	 */
	if (t && !__sync_val_compare_and_swap(&t->tid, 0, tid)) {
		z->tid = tid;
		bpf_probe_read_kernel(t, sizeof(*t), z);
		return t;
	}
	z->tid = 0;
	return cell_get(&wake_thr_shared, &tid, z, WAKE_LOST_THREADS);
}

/* The vCPU thread's state, created at its first exit or entry. */
static __always_inline struct wake_thread *thread_of(__u32 tid, __u32 tgid,
						      struct kvm_vcpu___wake *vcpu)
{
	struct wake_thread *t = thread_find(tid);
	struct vcpu_id_key vk;
	struct wake_zero *z;
	__u32 *prev;
	__u64 born;

	/*
	 * A thread's record goes when it ends (wake_thread_end), so one found here is this
	 * thread's: a thread id the kernel gives again, in another VMM or a reused pid, starts
	 * anew without the process's start time read at every entry and exit (two probe reads,
	 * as much as the rest of wake_exit). The tgid and the vCPU are checked all the same
	 * (cheap): a thread that ended while the programs were being attached, before that one
	 * was, left its record behind.
	 */
	if (t && t->tgid == tgid && t->vcpu_ptr == (__u64)vcpu)
		return t;
	if (t) {
		hlt_held_flush(t);
		thread_forget(tid, t);
	}
	/*
	 * As the exit cells' proc_start_time(): bpf_get_current_task_btf() would spare a probe
	 * read, but came only in Linux 5.11 (KP Singh's task_local_storage series, "bpf: Implement
	 * get_current_task_btf and RET_PTR_TO_BTF_ID"), and the exit programs load before it.
	 */
	born = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), group_leader,
			     start_time);
	vk.tgid = tgid;
	vk.vcpu = wake_vcpu_index(vcpu);
	/*
	 * -p, -g, a command's VMMs and -c, as the exits are filtered: a thread not traced is
	 * never tracked, so none of its deliveries or halts is kept. Asked again at each of its
	 * entries and exits, so a VMM the session adds later (a fork, serve -g) is taken then.
	 */
	if (!pid_wanted(tgid) || (filter_vcpu >= 0 && vk.vcpu != filter_vcpu))
		return NULL;
	z = zeroes();
	if (!z)
		return NULL;
	z->th.tgid = tgid;
	z->th.vcpu = vk.vcpu;
	z->th.proc_start = born;
	z->th.vcpu_ptr = (__u64)vcpu;
	t = thread_new(tid, &z->th);
	if (!t)
		return NULL;
	tid_add(tracked_tids, tid);
	/*
	 * The vCPU moved to this thread (a VMM may run it from another): the thread it left no
	 * longer names it, so that a delivery made there (x86's wake_pending() asks the sender's
	 * own record first) finds this one, and so that it is tracked anew, vCPUs' hash
	 * included, if the vCPU comes back to it.
	 */
	prev = bpf_map_lookup_elem(&wake_vcpus, &vk);
	if (prev && *prev != tid) {
		struct wake_thread *o = thread_find(*prev);

		/*
		 * Its halts go to the vCPU's cell before it is un-named (else a later flush keys
		 * them vCPU -1). Its thread cannot be in KVM_RUN for the vCPU (KVM holds the
		 * vCPU's mutex there, this thread now), so none of them is ending meanwhile.
		 */
		if (o && o->tgid == tgid && o->vcpu == vk.vcpu) {
			hlt_held_flush(o);
			o->vcpu_ptr = 0;
			o->vcpu = -1;
		}
	}
	WAKE_VCPU_TRACK(t, tid, vk, vcpu);
	if (t->timer_key)
		slot_claim(timer_slot(t->timer_key), tid);
	/*
	 * The same callback for every vCPU of a kvm module; a reloaded module's is taken anew.
	 * Through a local: in BPF_CORE_READ()'s argument, t's field would be relocated too.
	 */
	if (t->timer_key) {
		struct hrtimer___wake *timer = (void *)t->timer_key;

		wake_timer_fn = (__u64)BPF_CORE_READ(timer, function);
	}
	return t;
}

/*
 * A record for the stream's ring, its type, time and latency set, or NULL (counted: the
 * stream says it with the deliveries lost, cause ring).
 */
static __always_inline struct vmexit_event *ring_take_for(__u32 tgid, __s32 vcpu, __u16 type,
							  __u64 ts, __u64 lat)
{
	struct vmexit_event *ev;

	if (!pid_wanted(tgid))
		return NULL;
	ev = bpf_ringbuf_reserve(&events, VMEXIT_EVENT_SPLIT_LEN, 0);
	if (!ev) {
		__sync_fetch_and_add(&events_lost, 1);
		return NULL;
	}
	ev->tgid = tgid;
	ev->tid = (__u32)bpf_get_current_pid_tgid();
	ev->vcpu = vcpu;
	ev->cpu = bpf_get_smp_processor_id();
	ev->isa = 0;
	ev->type = type;
	ev->ts_ns = ts;
	ev->latency_ns = lat;
	return ev;
}

/* ring_take_for() the vCPU of t. */
static __always_inline struct vmexit_event *ring_take(struct wake_thread *t, __u16 type,
						      __u64 ts, __u64 lat)
{
	return ring_take_for(t->tgid, t->vcpu, type, ts, lat);
}

static __always_inline void ring_send(struct vmexit_event *ev)
{
	__u64 flags = 0, pending, len;

	/*
	 * As the exits' event_submit(), less its timer kick (the reader polls on its own clock,
	 * capture_clock.h): a 1 kHz guest timer would otherwise wake it 1,000 times a second.
	 */
	if (stream_wake_shift) {
		/* What is unread, this record (reserved, so counted) included. */
		pending = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
		len = BPF_RINGBUF_HDR_SZ + VMEXIT_EVENT_SPLIT_LEN;
		flags = pending >> stream_wake_shift != (pending - len) >> stream_wake_shift ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	}
	bpf_ringbuf_submit(ev, flags);
}

static __always_inline void wake_emit(struct wake_thread *t, const struct wake_key *k,
				      __u64 ts, __u64 lat, const __u64 *p, __u16 type)
{
	struct vmexit_event *ev = ring_take(t, type, ts, lat);
	int i;

	if (!ev)
		return;
	for (i = 0; i < NR_WAKE_PARTS; i++)
		*wake_event_part(ev, i) = p[i];
	ev->intr_info = k->vector;
	ev->error_code = 0;
	ev->reason = k->source;
	ring_send(ev);
}

/*
 * stream/record --wake's HLT anatomy: what a halt (VMEXIT_EV_HALT) or a halted exit
 * (VMEXIT_EV_HLT) adds to its hlt_cell, so that report rebuilds the cells exactly.
 */
static __always_inline void hlt_emit(struct wake_thread *t, __u16 type, __u64 ts, __u64 lat,
				     const __u64 *p, __u32 n)
{
	struct vmexit_event *ev = ring_take(t, type, ts, lat);
	int i;

	if (!ev)
		return;
	for (i = 0; i < NR_HLT_PARTS; i++)
		*hlt_event_part(ev, i) = p[i];
	ev->blocked_ns = 0;
	ev->runq_ns = 0;
	ev->intr_info = type == VMEXIT_EV_HLT ? n : 0;
	ev->error_code = type == VMEXIT_EV_HALT ? n : 0;
	ev->reason = 0;
	ring_send(ev);
}

static __always_inline void wake_account(struct wake_thread *t, __u64 info, __u64 ts,
					 struct pend_slot *s, __u64 now)
{
	struct wake_key k = { .tgid = t->tgid, .vcpu = t->vcpu, .proc_start = t->proc_start };
	__u32 state = (info >> PEND_STATE_SHIFT) & 0xf;
	__u64 lat = now - ts, wake, on, rq, p[NR_WAKE_PARTS] = {};
	struct wake_cell *c;
	int i;

	k.source = (info >> PEND_SRC_SHIFT) & 0xf;
	k.vector = info & PEND_VECTOR;
	switch (state) {
	case PEND_GUEST:
		p[WAKE_PART_GUEST] = lat;
		break;
	case PEND_POLLED:
		p[WAKE_PART_POLLED] = lat;
		break;
	case PEND_SLEPT:
		/* Each boundary clamped into [pending, entry], in order: the parts sum exactly. */
		wake = s->wake_ts < ts ? ts : s->wake_ts > now ? now : s->wake_ts;
		on = s->on_ts < wake ? wake : s->on_ts > now ? now : s->on_ts;
		/* Preempted after the halt: run-queue time, not on CPU (at most all of it). */
		rq = t->rq_ns - s->rq_at_on;
		rq = rq > now - on ? now - on : rq;
		p[WAKE_PART_SLEPT] = wake - ts;
		p[WAKE_PART_RUNQ] = on - wake + rq;
		p[WAKE_PART_ONCPU] = now - on - rq;
		break;
	default:
		p[WAKE_PART_EXIT] = lat;
	}
	if (emit_events)
		wake_emit(t, &k, ts, lat, p, VMEXIT_EV_WAKE);
	c = cell_find(&wake_cells, &k, WAKE_ZERO_WC, WAKE_LOST_CELLS);
	if (!c)
		return;
	c->count++;
	c->sum_ns += lat;
	if (lat > c->max_ns)
		c->max_ns = lat;
	hist_add(c->hist, lat);
	for (i = 0; i < NR_WAKE_PARTS; i++)
		c->parts[i] += p[i];
}

/*
 * At the entry of a halted exit (it had halts and its kvm_exit was seen), now the entry's time:
 * the one lookup of the hlt cell, for the exit and the halts held (hlt_held).
 */
static __always_inline void hlt_account(struct wake_thread *t, __u64 now)
{
	__u64 total = now - t->exit_ts, in = 0, p[NR_HLT_PARTS];
	struct hlt_cell *c;
	int i;

	if (emit_events) {
		for (i = 0; i < NR_HLT_PARTS - 1; i++) {
			p[i] = t->hlt_parts[i];
			in += p[i];
		}
		p[HLT_PART_OTHER] = total > in ? total - in : 0;
		hlt_emit(t, VMEXIT_EV_HLT, t->exit_ts, total, p, t->halts);
		in = 0;
	}
	c = hlt_cell_of(t);
	hlt_held_add(c, t);
	if (!c)
		return;
	c->exits++;
	c->sum_ns += total;
	for (i = 0; i < NR_HLT_PARTS - 1; i++) {
		c->parts[i] += t->hlt_parts[i];
		in += t->hlt_parts[i];
		t->hlt_parts[i] = 0;
	}
	/* The halts' pieces lie inside the exit, one after the other: in <= total. */
	c->parts[HLT_PART_OTHER] += total > in ? total - in : 0;
}

/*
 * kvm_entry in thread id of the vCPU vcpu, which each architecture finds its own way: what was
 * pending is delivered, the exit's halts are counted. vcpu is checked before use: x86's is the
 * tracepoint's pointer argument, on which "bpf: Mark raw_tp arguments with PTR_MAYBE_NULL"
 * (Linux 6.13, in 6.12.y) refuses arithmetic unchecked; arm64's may not be found.
 */
static __always_inline int wake_vcpu_entry(__u64 id, struct kvm_vcpu___wake *vcpu)
{
	struct wake_thread *t;
	__u64 now = 0;
	int i;

	if (!vcpu)
		return 0;
	t = thread_of((__u32)id, id >> 32, vcpu);
	if (!t)
		return 0;
	/*
	 * Cleared before the slots are read: a sender that publishes after is seen at the next
	 * entry. The clock is read only when something is delivered or a halt ends here: most
	 * entries do neither (2.7 of 3.7 per timer delivery in the VMX bed).
	 */
	if (t->pend_any && __sync_lock_test_and_set(&t->pend_any, 0)) {
		now = bpf_ktime_get_ns();
		for (i = 0; i < WAKE_PENDING_SLOTS; i++) {
			struct pend_slot *s = &t->pend[i];
			__u64 info = s->info, ts = s->ts;

			if (!(info & PEND_USED))
				continue;
			/* A sender still writing its slot: delivered at the next entry. */
			if (!ts) {
				t->pend_any = 1;
				continue;
			}
			wake_account(t, info, ts, s, now);
			s->ts = 0;
			__sync_lock_test_and_set(&s->info, 0);
		}
	}
	if (t->halts && t->exit_ts)
		hlt_account(t, now ? now : bpf_ktime_get_ns());
	else	/* halts held with no halted exit here (a KVM_RUN that returned after its halt) */
		hlt_held_flush(t);
	t->halts = 0;
	t->exit_ts = 0;
	t->in_guest = 1;
	return 0;
}

/* kvm_exit in thread id of the vCPU vcpu (checked, as at entry): the exit in flight starts. */
static __always_inline int wake_vcpu_exit(__u64 id, struct kvm_vcpu___wake *vcpu)
{
	struct wake_thread *t;

	if (!vcpu)
		return 0;
	t = thread_of((__u32)id, id >> 32, vcpu);
	if (!t)
		return 0;
	t->exit_ts = bpf_ktime_get_ns();
	t->in_guest = 0;
	t->halts = 0;
	t->sleep_ts = 0;
	return 0;
}

/*
 * The end of a halt (kvm_vcpu_halt()): ns is from its start, polling included; waited says the
 * thread slept. Deliveries pending since the halt began were made while halted.
 */
static __always_inline int halt_end(__u32 tid, __u64 now, __u64 ns, bool waited, bool valid)
{
	struct wake_thread *t = thread_find(tid);
	__u64 start, sleep, wake, on;
	struct hlt_held *h;
	__u32 n;
	int i;

	if (!t)
		return 0;
	start = now > ns ? now - ns : 0;
	/*
	 * KVM's ns ends where it read the clock after the halt, not here: a thread preempted in
	 * between (6 ms once in the arm64 bed) moves now - ns past the halt's true start, and an
	 * interrupt made pending while it slept was taken for one made in the exit before. The
	 * halt had begun by the time its thread first slept in this exit.
	 */
	if (waited && t->sleep_ts && t->sleep_ts < start)
		start = t->sleep_ts;
	/* Held for the entry's lookup of the cell (struct hlt_held), room made if none is left. */
	if (t->held.halts >= HLT_HELD)
		hlt_held_flush(t);
	h = &t->held;
	n = h->halts;
	h->halt_ns += ns;
	if (!valid)
		h->invalid++;
	if (!waited) {
		h->polled++;
		t->hlt_parts[HLT_PART_POLL] += ns;
		if (n < HLT_HELD)
			h->bucket[n] = hist_bucket(ns);
		h->wake_sum_ns += ns;
		sleep = wake = on = now;
	} else {
		/* Clamped into the halt and ordered, so that the pieces never overlap. */
		sleep = t->sleep_ts < start ? start : t->sleep_ts > now ? now : t->sleep_ts;
		wake = t->wake_ts < sleep ? sleep : t->wake_ts > now ? now : t->wake_ts;
		on = t->on_ts < wake ? wake : t->on_ts > now ? now : t->on_ts;
		if (sleep > start)
			h->poll_slept++;
		else
			h->slept++;
		t->hlt_parts[HLT_PART_POLL] += sleep - start;
		t->hlt_parts[HLT_PART_SLEEP] += wake - sleep;
		t->hlt_parts[HLT_PART_RUNQ] += on - wake;
		if (n < HLT_HELD)
			h->bucket[n] = hist_bucket(wake - start);
		h->wake_sum_ns += wake - start;
		h->slept_halt_ns += ns;
	}
	h->halts = n + 1;
	if (emit_events) {
		__u64 p[NR_HLT_PARTS] = { ns };

		if (waited) {
			p[HLT_PART_POLL] = sleep - start;
			p[HLT_PART_SLEEP] = wake - sleep;
			p[HLT_PART_RUNQ] = on - wake;
			p[HLT_PART_OTHER] = ns > on - start ? ns - (on - start) : 0;
		}
		hlt_emit(t, VMEXIT_EV_HALT, start, ns, p,
			 (waited ? VMEXIT_HALT_WAITED : 0) | (valid ? VMEXIT_HALT_VALID : 0));
	}
	t->halts++;
	t->sleep_ts = 0;
	if (t->timer_ts && t->timer_ts >= start && t->timer_state == PEND_EXIT) {
		t->timer_state = waited ? PEND_SLEPT : PEND_POLLED;
		t->timer_wake_ts = wake;
		t->timer_on_ts = on;
		t->timer_rq_at_on = t->rq_ns;
	}
	/* No sender has published since the last entry: no slot has its time, none to class. */
	for (i = 0; t->pend_any && i < WAKE_PENDING_SLOTS; i++) {
		struct pend_slot *s = &t->pend[i];
		__u64 info = s->info;

		if (!(info & PEND_USED) || s->ts < start ||
		    ((info >> PEND_STATE_SHIFT) & 0xf) != PEND_EXIT)
			continue;
		info &= ~(0xfull << PEND_STATE_SHIFT);
		info |= (__u64)(waited ? PEND_SLEPT : PEND_POLLED) << PEND_STATE_SHIFT;
		s->wake_ts = wake;
		s->on_ts = on;
		s->rq_at_on = t->rq_ns;
		s->info = info;
	}
	return 0;
}

/* Its body is halt_end(), which tests/bpf/test_bpf_wake.c drives with hand-made halts. */
SEC("tp_btf/kvm_vcpu_wakeup")
int BPF_PROG(wake_halt_end, __u64 ns, bool waited, bool valid)
{
	return halt_end((__u32)bpf_get_current_pid_tgid(), bpf_ktime_get_ns(), ns, waited, valid);
}

/* A pending slot for the vCPU t, or NULL (counted lost). */
static __always_inline struct pend_slot *slot_take(struct wake_thread *t, __u64 info)
{
	int i;

	for (i = 0; i < WAKE_PENDING_SLOTS; i++) {
		struct pend_slot *s = &t->pend[i];

		if (__sync_val_compare_and_swap(&s->info, 0, info) == 0)
			return s;
	}
	__sync_fetch_and_add(&wake_lost[WAKE_LOST_SLOTS], 1);
	return NULL;
}

/* A taken slot's time, the last of it written: the entry and the halt end look at it now. */
static __always_inline void pend_publish(struct wake_thread *t, struct pend_slot *s, __u64 ts)
{
	s->ts = ts;
	/* After the time (an exchange is a full barrier): pend_any set finds the slot whole. */
	__sync_lock_test_and_set(&t->pend_any, 1);
}

/*
 * A delivery of vec from src made pending for the vCPU t now, in what t was doing (in guest or
 * in an exit; the halt end turns an exit's into polled or slept): both architectures' senders.
 */
static __always_inline int pend_start(struct wake_thread *t, __u32 src, __u32 vec)
{
	__u32 state = t->in_guest ? PEND_GUEST : PEND_EXIT;
	__u64 info = PEND_USED | (__u64)state << PEND_STATE_SHIFT |
		     (__u64)src << PEND_SRC_SHIFT | vec;
	struct pend_slot *s = slot_take(t, info);

	/* The clock only here: a guest timer's delivery counts from its expiry, read then. */
	if (s)
		pend_publish(t, s, bpf_ktime_get_ns());
	return 0;
}

/* The guest timer's interrupt, in the vCPU's own thread: pending since its hrtimer expired. */
static __always_inline int timer_pending(struct wake_thread *t, __u32 vec)
{
	__u64 info = PEND_USED | (__u64)t->timer_state << PEND_STATE_SHIFT |
		     (__u64)WAKE_SRC_TIMER << PEND_SRC_SHIFT | vec;
	struct pend_slot *s = slot_take(t, info);

	if (s) {
		s->wake_ts = t->timer_wake_ts;
		s->on_ts = t->timer_on_ts;
		s->rq_at_on = t->timer_rq_at_on;
		pend_publish(t, s, t->timer_ts);
	}
	t->timer_ts = 0;
	return 0;
}


/*
 * Every hrtimer of the host expires through here: its callback (a load: the hook's own BTF
 * argument) turns away all but the guest timers, then one hash lookup the other vCPUs'. The
 * first expiry since the last delivery is the one that counts.
 */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(wake_timer_expiry, struct hrtimer___wake *timer)
{
	__u64 key = (__u64)timer;
	struct wake_thread *t = NULL;
	__u32 *tid, v;

	if (!timer || !wake_timer_fn || (__u64)timer->function != wake_timer_fn)
		return 0;
	v = *timer_slot(key);
	/* 0: no tracked vCPU's timer maps here (another VMM's, one not traced). */
	if (!v)
		return 0;
	if (v != TRACKED_SHARED)
		t = thread_find(v);
	if (!t || t->timer_key != key) {
		tid = bpf_map_lookup_elem(&wake_timers, &key);
		t = tid ? thread_find(*tid) : NULL;
	}
	if (!t || t->timer_ts)
		return 0;
	t->timer_state = t->in_guest ? PEND_GUEST : PEND_EXIT;
	t->timer_ts = bpf_ktime_get_ns();
	return 0;
}

/*
 * The vCPU threads' sleeps, wake-ups and runs, for the halted parts. The tasks are the hooks'
 * own arguments (BTF pointers): read with a load each, not through bpf_probe_read_kernel().
 */
static __always_inline bool task_asleep(struct task_struct *p)
{
	/* "sched: Change task_struct::state" (Linux 5.14) renamed state to __state. */
	if (bpf_core_field_exists(p->__state))
		return p->__state != 0;
	return ((struct task_struct___pre514 *)p)->state != 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(wake_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct wake_thread *t = NULL;
	__u32 prev_tid, next_tid;
	__u64 now;

	if (!prev || !next)
		return 0;
	prev_tid = prev->pid;
	next_tid = next->pid;
	if (tid_tracked(prev_tid))
		t = thread_find(prev_tid);
	if (t) {
		if (!preempt && task_asleep(prev)) {
			if (!t->in_guest && !t->sleep_ts)
				t->sleep_ts = bpf_ktime_get_ns();
		} else {
			t->out_ts = bpf_ktime_get_ns();
		}
	}
	t = tid_tracked(next_tid) ? thread_find(next_tid) : NULL;
	if (t) {
		now = bpf_ktime_get_ns();
		t->on_ts = now;
		if (t->out_ts && now > t->out_ts)
			t->rq_ns += now - t->out_ts;
		t->out_ts = 0;
	}
	return 0;
}

/*
 * A thread's end: its record, and the vCPU's and timer's entries that lead to it, go. So a
 * thread id or hrtimer address the kernel gives again is never taken for this one (thread_of()
 * relies on it), and wake_threads keeps room for the vCPUs to come (a server of months sees
 * many VMMs come and go).
 */
static __always_inline int thread_end(__u32 tid)
{
	struct wake_thread *t;
	__u32 *owner;
	struct vcpu_id_key vk;
	__u64 timer;

	if (tid_in(noted_tids, tid)) {
		bpf_map_delete_elem(&wake_notes, &tid);
		tid_del(noted_tids, tid);
	}
	/* Every task of the host ends through here: the others turned away with a load. */
	t = tid_tracked(tid) ? thread_find(tid) : NULL;
	if (!t)
		return 0;
	/* Halts that ended with no entry after them (KVM_RUN ended by a signal, say). */
	hlt_held_flush(t);
	vk.tgid = t->tgid;
	vk.vcpu = t->vcpu;
	timer = t->timer_key;
	owner = bpf_map_lookup_elem(&wake_vcpus, &vk);
	if (owner && *owner == tid)
		bpf_map_delete_elem(&wake_vcpus, &vk);
	owner = timer ? bpf_map_lookup_elem(&wake_timers, &timer) : NULL;
	if (owner && *owner == tid)
		bpf_map_delete_elem(&wake_timers, &timer);
	if (timer)
		__sync_val_compare_and_swap(timer_slot(timer), tid, 0);
	thread_forget(tid, t);
	tid_del(tracked_tids, tid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(wake_thread_end, struct task_struct *task)
{
	return thread_end((__u32)bpf_get_current_pid_tgid());
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(wake_wakeup, struct task_struct *p)
{
	struct wake_thread *t;
	__u32 tid;

	if (!p)
		return 0;
	tid = p->pid;
	if (!tid_tracked(tid))
		return 0;
	t = thread_find(tid);
	if (t)
		t->wake_ts = bpf_ktime_get_ns();
	return 0;
}

#endif /* __WAKE_COMMON_BPF_H */
