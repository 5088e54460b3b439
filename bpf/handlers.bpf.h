/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps and the per-event logic of vmexit, as inline functions taking plain values
 * (thread ids, timestamps, reasons) so that the tracepoint programs in vmexit.bpf.c and the
 * test-only programs in vmexit_test.bpf.c run exactly the same code.
 *
 * Hot path design: a statistics cell is a slot of an mmapable array, owned by one vCPU thread
 * (so it has one writer and needs no atomics); the thread finds its cell for a reason through a
 * small table in its own task storage, so an exit costs two task-storage lookups, two clock
 * reads and a few stores, with no hashing. Hashes are used only on slow paths: first sight of
 * a thread or reason, and reasons outside the dense slot ranges.
 */
#ifndef VMEXIT_HANDLERS_BPF_H
#define VMEXIT_HANDLERS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "vmexit.h"
#include "hist.h"
#include "exit_read.bpf.h"

/* Tunables, set by userspace between open and load. */
const volatile bool use_task_storage = true;	/* false: per-thread state in an LRU hash */
const volatile bool follow_forks = false;	/* children of filtered pids join the filter */
const volatile bool filter_reasons = false;	/* only (isa, reason) in reason_filter */
const volatile __s32 filter_vcpu = -1;
const volatile __u32 max_cells = 1;
const volatile bool stream_enabled = false;	/* emit a vmexit_event per completed exit */
const volatile __u64 stream_min_latency_ns = 0;
const volatile __u32 stream_sample_every = 1;	/* emit 1 in N events per thread */
/* top --kvm-events: the kvm event records alone, for counting (no exit records). */
const volatile bool kvm_events_enabled = false;
const volatile bool split_enabled = false;	/* --split: exit time as on CPU, blocked, runq */
const volatile __u64 stuck_min_ns = 0;		/* stat --stuck: cell.stuck_* (0: off) */
const volatile bool count_gated = false;	/* no exit counts until userspace sets counting */
/*
 * Ring records pending before the reader is woken, as a power of two (set with the ring's size;
 * 0: woken at every record, the ring buffer's default). Below it records wait, unannounced, for
 * the reader's own clock (src/capture_clock.h, 20 ms), and a record that takes the backlog
 * past a multiple of it wakes the reader: one wakeup per batch, not per record, and none per
 * record while a busy reader lags (each forced wakeup is an interrupt on this CPU).
 */
const volatile __u32 stream_wake_shift = 0;

/* Written by userspace through the mmapped .bss: start of a new reporting interval. */
__u32 epoch;
/* count_gated: set by userspace once every program is attached (see cell_alloc). */
__u32 counting;
/* Cells handed out so far; may run past max_cells when the array is full. */
__u32 next_cell;
__u64 lost[NR_LOST];
/* Cells taken again from free_cells, after userspace handed them back (see cell.ended). */
__u64 cells_reused;
/* Set by userspace before it runs flush_in_flight: when tracing stopped (CLOCK_MONOTONIC). */
__u64 flush_ns;
/*
 * Bumped by userspace after it adds pids to pid_filter (serve following a guest name): threads
 * ignored before are looked up again, since a new VMM's vCPUs exit long before userspace
 * finds it in /proc.
 */
__u32 filter_gen;
/*
 * A new VMM process was seen (proc_note): the next record wakes the reader at once, which names
 * the process from its command line while the pid is surely still the process's.
 */
bool stream_wake_now;

/* Dense reason slots: the per-thread cache covers these, everything else takes a hash. */
#define RSLOT_VMX_N	128	/* VMX basic reasons 0..127 */
#define RSLOT_SVM_N	192	/* SVM codes 0x000..0x0bf */
#define RSLOT_SVM_HI_N	16	/* SVM codes 0x400..0x40f (npf, avic, vmgexit) */
#define RSLOT_USER_N	64	/* KVM_EXIT_* 0..63 */
/*
 * arm64: every exception class 0..0x3f, and the non-trap kinds 0x100..0x103 (IRQ is what a
 * host interrupt costs the guest: one of the most frequent exits, so not worth a hash lookup
 * per exit). Only HYP_GONE, which ends KVM, is left to other_cells.
 */
#define RSLOT_ARM64_N	64
#define RSLOT_ARM64_EXC_N 4
#define RSLOT_ARM64	(RSLOT_VMX_N + RSLOT_SVM_N + RSLOT_SVM_HI_N + RSLOT_USER_N)
#define NR_RSLOTS	(RSLOT_ARM64 + RSLOT_ARM64_N + RSLOT_ARM64_EXC_N)

/* Per-thread cell references are cell index + 1; these mark exits that are not recorded. */
#define CELL_NONE	0
#define CELL_WAIT	0xfffd	/* begun before counting started: never counted */
#define CELL_FULL	0xfffe
#define CELL_FILTERED	0xffff
#define CELL_MAX	0xfffc

#define TS_INIT		1u
#define TS_IGNORED	2u
#define TS_OFF_RUNQ	4u	/* --split: left the CPU runnable (preempted), not asleep */
#define TS_CPUID_EXIT	8u	/* keys: the exit in flight is a CPUID exit (key_replaces) */
#define TS_UEXIT_FINAL	16u	/* keys: the userspace exit's key is its guest exit's, final */

/*
 * Keys (bpf/keys.bpf.h): one key table entry the thread charged lately, found again without the
 * hash: the cell and key it is of, and its slot in key_slots + 1 (0: an empty way).
 */
struct key_cached {
	__u64 key;
	__u16 kind;
	__u16 dir;
	__u32 cell;
	__u32 slot;
	__u32 __pad;
};

#define KEY_CACHE_N	8	/* ways, a power of two: a vCPU's busy keys are few */

/* One completed exit's latency as on CPU + blocked + runq (--split). */
struct exit_split {
	__u64 blocked;
	__u64 runq;
};

/*
 * When an exit began is kept in its cell (cell.inflight_ts), where userspace sees it too: the
 * exits in flight, and for how long, at every sample.
 */
struct thread_state {
	__u32 exit_cell;	/* CELL_NONE: no exit in flight */
	__u32 uexit_cell;
	__u32 last_cell;	/* the thread's newest cell: the head of its cell.thread_next chain */
	__u32 filter_gen;	/* the filter_gen TS_IGNORED was decided at */
	__s32 vcpu;		/* from kvm_exit; -1 until seen */
	__u32 flags;
	/*
	 * The thread's id, kept at its first event: kvm_exit names the thread in its CPU's slot
	 * (cpu_exit_slot.bpf.h) without a helper call per exit.
	 */
	__u32 tid;
	__u32 sample_ctr;
	/* The thread as the CPU slots name it (slot_self()), kept at its first exit; 0: not yet. */
	__u64 slot_task;
	__u64 slot_born;
	__u32 uexit_reason;	/* the rest describes the exits in flight, for the stream only */
	__s64 uexit_errno;
	struct exit_info exit;
	/*
	 * --split: the thread's time off CPU while an exit was in flight, summed since it was
	 * first seen; an exit's share is how much the sums grew between its start and its end,
	 * so the kernel exit and the userspace exit nested in it each get theirs.
	 */
	__u64 off_ts;		/* left the CPU with an exit in flight; 0 while on CPU */
	__u64 blocked_sum;
	__u64 runq_sum;
	__u64 exit_blocked0;	/* the sums when the exit in flight began */
	__u64 exit_runq0;
	__u64 uexit_blocked0;
	__u64 uexit_runq0;
	/* --stacks: the stack it left the CPU with, the exit that is charged, and when. */
	__u64 stack_off_ts;	/* 0: no period to charge */
	__s32 stack_id;
	__u32 stack_ref;
	/* Keys (bpf/keys.bpf.h): what the exits in flight are about, the last key event of
	 * this KVM_RUN, and an IO exit to the VMM that completed, waiting for its key. */
	struct key_note exit_key;
	struct key_note uexit_key;
	struct key_note pend_key;
	struct key_note late_key;
	/* --by key, VMX fast path: the exit in flight's vCPU, whose vector KVM reads after
	 * kvm_exit (bpf/vmx_vector.bpf.h); 0 when none is due. */
	__u64 vec_vcpu;
	__u32 vec_reason;
	/* The cell of the last exit to the VMM charged through this state with its guest exit's
	 * final key, uexit_key then: kvm_exit puts the entry the thread's cache holds for
	 * (ulast_ref, uexit_key) in its CPU slot's ways (cpu_slot_note()). */
	__u32 ulast_ref;
	__u64 late_lat;
	__u32 late_ref;
	__u32 late_stream;	/* stream --keys: its record waits for the key too */
	__u64 late_start;
	struct exit_split late_split;
	struct key_cached key_cache[KEY_CACHE_N];
	__u16 cells[NR_RSLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} thread_storage SEC(".maps");

/* Fallback for kernels without task storage for tracing programs (before 5.11). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);		/* sized by userspace when used */
	__type(key, __u32);
	__type(value, struct thread_state);
} thread_hash SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);		/* sized by userspace: max_cells */
	__type(key, __u32);
	__type(value, struct cell);
} cells SEC(".maps");

struct other_key {
	__u32 tid;
	__u32 isa;
	__u32 reason;
};

/* Cells of reasons outside the dense slots, per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct other_key);
	__type(value, __u32);
} other_cells SEC(".maps");

/* Indexes of cells userspace has read for the last time and zeroed: taken before new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, 1);		/* sized by userspace: max_cells */
	__type(value, __u32);
} free_cells SEC(".maps");

#include "pid_filter.bpf.h"

/* Key: isa << 32 | reason. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u64);
	__type(value, __u8);
} reason_filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);	/* sized by userspace when streaming */
} events SEC(".maps");

/* VMM command lines by tgid (slow path: a thread's first event); LRU keeps the live ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct proc_args);
} procs SEC(".maps");

/*
 * With the pid filter on: the processes whose threads made KVM events while not wanted, each
 * noted at a thread's first event. serve looks for the VMMs of a -g name among them (no scan of
 * every process's command line, and proof that each one is a VMM).
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} unwanted_vmms SEC(".maps");

/* Scratch for a proc_args: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct proc_args);
} proc_scratch SEC(".maps");

static const struct thread_state zero_thread;

static __always_inline void lost_inc(int why)
{
	if (why >= 0 && why < NR_LOST)
		__sync_fetch_and_add(&lost[why], 1);
}

/*
 * With task storage keying the per-thread state, the hot path needs no thread ids: the
 * tracepoint programs then pass tgid = tid = 0 (never a VMM: pid 0 is the idle task) and the
 * slow paths fetch them here.
 */
static __always_inline void ids_fill(__u32 *tgid, __u32 *tid)
{
	if (!*tgid) {
		__u64 id = bpf_get_current_pid_tgid();

		*tgid = id >> 32;
		*tid = (__u32)id;
	}
}

/* The ids a tracepoint program hands the handlers: none when task storage keys the state. */
static __always_inline __u64 hot_ids(void)
{
	return use_task_storage ? 0 : bpf_get_current_pid_tgid();
}


/* When the current process started: with its pid, the identity of a VMM. */
static __always_inline __u64 proc_start_time(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, group_leader, start_time);
}

/*
 * Keeps the VMM's command line once per process, for naming its guest later. A pid reused by a
 * new VMM replaces the old one's: the new guest must not get the old name.
 */
static __noinline void proc_note(__u32 tgid)
{
	struct task_struct *task;
	struct proc_args *pa, *old;
	unsigned long start, end;
	__u32 zero = 0, len;
	__u64 born = proc_start_time();

	old = bpf_map_lookup_elem(&procs, &tgid);
	if (old && old->start == born)
		return;
	stream_wake_now = true;
	if (old)
		bpf_map_delete_elem(&procs, &tgid);
	pa = bpf_map_lookup_elem(&proc_scratch, &zero);
	if (!pa)
		return;
	task = (struct task_struct *)bpf_get_current_task();
	start = BPF_CORE_READ(task, mm, arg_start);
	end = BPF_CORE_READ(task, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > PROC_ARGS_MAX)
		len = PROC_ARGS_MAX;
	barrier_var(len);
	if (len > PROC_ARGS_MAX)
		return;
	/* A page not present makes this fail: then userspace asks /proc instead. */
	if (!len || bpf_probe_read_user(pa->args, len, (void *)start))
		return;
	pa->len = len;
	pa->start = born;
	bpf_map_update_elem(&procs, &tgid, pa, BPF_ANY);
}

static __always_inline struct thread_state *thread_get(__u32 tgid, __u32 tid, bool create)
{
	struct thread_state *ts;

	if (use_task_storage) {
		ts = bpf_task_storage_get(&thread_storage, bpf_get_current_task_btf(), 0,
					  create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	} else {
		ts = bpf_map_lookup_elem(&thread_hash, &tid);
		if (!ts && create) {
			bpf_map_update_elem(&thread_hash, &tid, &zero_thread, BPF_NOEXIST);
			ts = bpf_map_lookup_elem(&thread_hash, &tid);
		}
	}
	if (!ts) {
		if (create)
			lost_inc(LOST_THREADS_FULL);
		return NULL;
	}
	if (!(ts->flags & TS_INIT)) {
		ids_fill(&tgid, &tid);
		ts->flags = TS_INIT | (pid_wanted(tgid) ? 0 : TS_IGNORED);
		ts->filter_gen = filter_gen;
		ts->tid = tid;
		ts->vcpu = -1;
		if (!(ts->flags & TS_IGNORED)) {
			proc_note(tgid);
		} else {
			__u8 one = 1;

			bpf_map_update_elem(&unwanted_vmms, &tgid, &one, BPF_ANY);
		}
	} else if (filter_pids && (ts->flags & TS_IGNORED) && ts->filter_gen != filter_gen) {
		/* Wanted from now on; an exit begun while ignored ends as an unmatched entry. */
		ts->filter_gen = filter_gen;
		ids_fill(&tgid, &tid);
		if (pid_wanted(tgid)) {
			ts->flags &= ~TS_IGNORED;
			proc_note(tgid);
		}
	}
	return ts;
}

/* NR_RSLOTS when the reason has no dense slot. */
static __always_inline __u32 reason_slot(__u32 isa, __u32 reason)
{
	if (isa == VMEXIT_ISA_VMX && reason < RSLOT_VMX_N)
		return reason;
	if (isa == VMEXIT_ISA_SVM) {
		if (reason < RSLOT_SVM_N)
			return RSLOT_VMX_N + reason;
		if (reason - 0x400 < RSLOT_SVM_HI_N)
			return RSLOT_VMX_N + RSLOT_SVM_N + (reason - 0x400);
	}
	if (isa == VMEXIT_ISA_USER && reason < RSLOT_USER_N)
		return RSLOT_VMX_N + RSLOT_SVM_N + RSLOT_SVM_HI_N + reason;
	if (isa == VMEXIT_ISA_ARM64) {
		if (reason < RSLOT_ARM64_N)
			return RSLOT_ARM64 + reason;
		if (reason - VMEXIT_ARM64_EXC < RSLOT_ARM64_EXC_N)
			return RSLOT_ARM64 + RSLOT_ARM64_N + (reason - VMEXIT_ARM64_EXC);
	}
	return NR_RSLOTS;
}

/* Slow path: first exit of this reason on this thread. Returns a cell reference. */
static __noinline __u32 cell_alloc(__u32 tgid, __u32 tid, __s32 vcpu, __u32 isa, __u32 reason)
{
	struct cell *c;
	__u32 idx;

	/*
	 * count_gated: an exit begun before counting started (stat, top and serve start counting
	 * once every program is attached) is neither begun nor completed in the cells, so that
	 * no front end ever counts the completion of an exit whose start it did not see. Here,
	 * on the slow path: no cell exists before counting starts, so every exit comes here
	 * until then, and CELL_WAIT is not kept as the thread's cell.
	 */
	if (count_gated && !counting)
		return CELL_WAIT;
	ids_fill(&tgid, &tid);
	if (filter_reasons) {
		__u64 rkey = (__u64)isa << 32 | reason;

		if (!bpf_map_lookup_elem(&reason_filter, &rkey))
			return CELL_FILTERED;
	}
	/*
	 * A cell userspace has handed back first: its thread has exited and it is zeroed. Else a
	 * new one. Once full, stay full without counting on: reasons that cache no CELL_FULL
	 * (other_cells) come back here on every exit, and an ever-growing next_cell would wrap
	 * after 2^32 such exits and hand out cell 0 again, to a second writer.
	 */
	if (!bpf_map_pop_elem(&free_cells, &idx)) {
		__sync_fetch_and_add(&cells_reused, 1);
	} else {
		if (next_cell >= max_cells || next_cell >= CELL_MAX)
			return CELL_FULL;
		idx = __sync_fetch_and_add(&next_cell, 1);
	}
	if (idx >= max_cells || idx >= CELL_MAX)
		return CELL_FULL;
	c = bpf_map_lookup_elem(&cells, &idx);
	if (!c)
		return CELL_FULL;
	c->key.tgid = tgid;
	c->key.tid = tid;
	c->key.vcpu = vcpu;
	c->key.isa = isa;
	c->key.reason = reason;
	/* The thread name names the vCPU when the exits do not, even after the thread exits. */
	bpf_get_current_comm(c->key.comm, sizeof(c->key.comm));
	c->key.proc_start = proc_start_time();
	c->min_ns = ~0ULL;
	c->iv_epoch = ~0U;
	/* Publish the key: an atomic orders it after the stores above on weakly ordered CPUs. */
	__sync_fetch_and_add(&c->key.ready, 1);
	return idx + 1;
}

static __always_inline struct cell *cell_get(__u32 ref)
{
	__u32 idx = ref - 1;

	if (ref == CELL_NONE || ref >= CELL_WAIT)
		return NULL;
	return bpf_map_lookup_elem(&cells, &idx);
}

/* cell.thread_next: the previous cell's reference, and whether this one is in other_cells. */
#define THREAD_NEXT_OTHER	0x80000000u
#define THREAD_NEXT_REF		0xffffu

/* Slow path: a new cell joins its thread's chain, which the thread's exit walks. */
static __always_inline void thread_link(struct thread_state *ts, __u32 ref, bool other)
{
	struct cell *c = cell_get(ref);

	if (!c)
		return;
	c->thread_next = ts->last_cell | (other ? THREAD_NEXT_OTHER : 0);
	ts->last_cell = ref;
}

static __always_inline __u32 cell_ref(struct thread_state *ts, __u32 tgid, __u32 tid, __u32 isa,
				      __u32 reason)
{
	__u32 slot = reason_slot(isa, reason);
	struct other_key okey;
	__u32 ref, *refp;

	/* Keep the bound check in the code the verifier sees: the compiler knows it holds. */
	barrier_var(slot);
	if (slot < NR_RSLOTS) {
		ref = ts->cells[slot];
		if (ref == CELL_NONE) {
			ref = cell_alloc(tgid, tid, ts->vcpu, isa, reason);
			if (ref == CELL_WAIT)
				return ref;
			ts->cells[slot] = ref;
			thread_link(ts, ref, false);
		}
		return ref;
	}
	ids_fill(&tgid, &tid);
	okey.tid = tid;
	okey.isa = isa;
	okey.reason = reason;
	refp = bpf_map_lookup_elem(&other_cells, &okey);
	if (refp)
		return *refp;
	ref = cell_alloc(tgid, tid, ts->vcpu, isa, reason);
	if (ref == CELL_FULL || ref == CELL_WAIT)
		return ref;	/* retry later: a cell or the hash may have room then */
	thread_link(ts, ref, true);	/* even if the hash is full: the cell is the thread's */
	if (bpf_map_update_elem(&other_cells, &okey, &ref, BPF_NOEXIST))
		return CELL_FULL;
	return ref;
}

/*
 * One completed exit of latency lat into a cell's or a key's counts, extremes and histogram;
 * b is hist_bucket(lat). The caller computes it once for an exit that both its cell and its
 * key entry take: the compiler does not reuse the first across the key entry's map lookup
 * (a helper call: ~35 instructions again per keyed exit).
 */
static __always_inline void lat_add(__u64 *count, __u64 *total, __u64 *min, __u64 *max,
				    __u32 *hist, __u64 lat, __u32 b)
{
	(*count)++;
	*total += lat;
	if (lat < *min)
		*min = lat;
	if (lat > *max)
		*max = lat;
	barrier_var(b);
	if (b < NR_BUCKETS)
		hist[b]++;
}

#include "keys.bpf.h"

/* Counts an exit as started at now in ref, whose cell is c (NULL: none). */
static __always_inline void exit_count(__u32 ref, struct cell *c, __u64 now)
{
	if (c) {
		c->started++;
		c->inflight_ts = now;
	} else if (ref == CELL_FULL) {
		lost_inc(LOST_CELLS_FULL);
	}
}

/* Counts the exit as started at now; returns the reference to keep until it completes. */
static __always_inline __u32 exit_begin(struct thread_state *ts, __u32 tgid, __u32 tid, __u32 isa,
					__u32 reason, __u64 now)
{
	__u32 ref = cell_ref(ts, tgid, tid, isa, reason);

	exit_count(ref, cell_get(ref), now);
	return ref;
}

/* An exit that will never complete (overwritten, or its thread gone) is no longer in flight. */
static __always_inline void exit_drop(__u32 ref)
{
	struct cell *c = cell_get(ref);

	if (c)
		c->inflight_ts = 0;
}

/*
 * An exit's time off CPU: what the thread's sums grew by since the exit began. Clamped to its
 * latency (clocks of two CPUs may disagree by a few ns), so that on CPU is never negative and
 * the three parts add up to the latency exactly.
 */
static __always_inline void split_of(struct exit_split *s, __u64 lat, __u64 blocked, __u64 runq)
{
	if (blocked > lat)
		blocked = lat;
	if (runq > lat - blocked)
		runq = lat - blocked;
	s->blocked = blocked;
	s->runq = runq;
}

static __always_inline void cell_split(struct cell *c, __u64 lat, const struct exit_split *s)
{
	c->blocked_ns += s->blocked;
	c->runq_ns += s->runq;
	c->oncpu_ns += lat - s->blocked - s->runq;
}

/* Stream records are shorter without --split and keys: the fields not asked are not sent. */
static __always_inline struct vmexit_event *event_reserve(void)
{
	struct vmexit_event *ev;

	if (key_mode)
		ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);
	else if (split_enabled)
		ev = bpf_ringbuf_reserve(&events, VMEXIT_EVENT_SPLIT_LEN, 0);
	else
		ev = bpf_ringbuf_reserve(&events, VMEXIT_EVENT_BASE_LEN, 0);
	if (!ev)
		lost_inc(LOST_RINGBUF_FULL);
	return ev;
}

static __always_inline void event_submit(struct vmexit_event *ev)
{
	__u64 flags = 0, pending, len;

	if (stream_wake_shift && stream_wake_now) {
		stream_wake_now = false;
		flags = BPF_RB_FORCE_WAKEUP;
	} else if (stream_wake_shift) {
		/* What is unread, this record (reserved, so counted) included. */
		pending = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA);
		len = BPF_RINGBUF_HDR_SZ + vmexit_event_len(split_enabled, key_mode);
		flags = pending >> stream_wake_shift != (pending - len) >> stream_wake_shift ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	}
	bpf_ringbuf_submit(ev, flags);
}

/* For records that are not exits: everything 0 but what the caller fills in. */
static __always_inline struct vmexit_event *event_reserve_zeroed(void)
{
	struct vmexit_event *ev = event_reserve();

	if (!ev)
		return NULL;
	__builtin_memset(ev, 0, VMEXIT_EVENT_BASE_LEN);
	if (split_enabled || key_mode) {
		ev->oncpu_ns = 0;
		ev->blocked_ns = 0;
		ev->runq_ns = 0;
	}
	if (key_mode)
		ev->key = (struct key_note){};
	return ev;
}

static __always_inline void cell_complete(struct cell *c, __u64 lat, __u32 b)
{
	__u32 ep = epoch;

	lat_add(&c->count, &c->total_ns, &c->min_ns, &c->max_ns, c->hist, lat, b);
	if (c->iv_epoch != ep) {
		c->iv_epoch = ep;
		c->iv_min_ns = lat;
		c->iv_max_ns = lat;
	} else {
		if (lat < c->iv_min_ns)
			c->iv_min_ns = lat;
		if (lat > c->iv_max_ns)
			c->iv_max_ns = lat;
	}
}

/* The stream's filters (--min-latency, --sample), in the kernel: whether to emit this exit. */
static __always_inline bool stream_wanted(struct thread_state *ts, __u64 lat)
{
	if (lat < stream_min_latency_ns)
		return false;
	return stream_sample_every <= 1 || !(ts->sample_ctr++ % stream_sample_every);
}

/* Fills the record of an exit of ts begun at start, about key: every field but cpu. */
static __always_inline void stream_fill(struct vmexit_event *ev, struct thread_state *ts,
					__u32 tgid, __u32 tid, __u64 start, __u64 lat, __u16 type,
					const struct exit_split *s, const struct key_note *key)
{
	if (split_enabled) {
		ev->blocked_ns = s->blocked;
		ev->runq_ns = s->runq;
		ev->oncpu_ns = lat - s->blocked - s->runq;
	} else if (key_mode) {
		ev->blocked_ns = 0;
		ev->runq_ns = 0;
		ev->oncpu_ns = 0;
	}
	if (key_mode)
		ev->key = *key;
	ev->ts_ns = start;
	ev->latency_ns = lat;
	ev->tgid = tgid;
	ev->tid = tid;
	ev->vcpu = ts->vcpu;
	ev->type = type;
	if ((type & ~VMEXIT_EV_IN_FLIGHT) == VMEXIT_EV_EXIT) {
		ev->rip = ts->exit.rip;
		ev->info1 = ts->exit.info1;
		ev->info2 = ts->exit.info2;
		ev->intr_info = ts->exit.intr_info;
		ev->error_code = ts->exit.error_code;
		ev->isa = ts->exit.isa;
		ev->reason = ts->exit.reason;
	} else {
		/* The guest exit in flight led to this one: its RIP (report --by rip, as stat's). */
		bool from_guest = ts->exit_cell != CELL_NONE;

		ev->rip = from_guest ? ts->exit.rip : 0;
		ev->info1 = (__u64)ts->uexit_errno;
		ev->info2 = 0;
		ev->intr_info = 0;
		ev->error_code = from_guest ? VMEXIT_UEXIT_RIP : 0;
		ev->isa = VMEXIT_ISA_USER;
		ev->reason = ts->uexit_reason;
	}
}

/* Ring-buffer record for a completed exit (or, with VMEXIT_EV_IN_FLIGHT in type, one its thread
 * left unfinished) that passed the stream filters. */
static __always_inline void stream_send(struct thread_state *ts, __u32 tgid, __u32 tid, __u64 start,
					__u64 lat, __u16 type, const struct exit_split *s,
					const struct key_note *key)
{
	struct vmexit_event *ev = event_reserve();

	if (!ev)
		return;
	ids_fill(&tgid, &tid);
	stream_fill(ev, ts, tgid, tid, start, lat, type, s, key);
	ev->cpu = bpf_get_smp_processor_id();
	event_submit(ev);
}

/* The same after the stream filters. */
static __always_inline void stream_emit(struct thread_state *ts, __u32 tgid, __u32 tid, __u64 start,
					__u64 lat, __u16 type, const struct exit_split *s,
					const struct key_note *key)
{
	if (stream_wanted(ts, lat))
		stream_send(ts, tgid, tid, start, lat, type, s, key);
}

/*
 * What an exit's end does to its cell, begun at start, its split s: its latency (bucket b,
 * hist_bucket(now - start), as lat_add() takes it), and stat --stuck's longest.
 */
static __always_inline void cell_end(struct cell *c, __u64 start, __u64 now,
				     const struct exit_split *s, __u32 b)
{
	cell_complete(c, now - start, b);
	/* Its longest exit of stuck_min_ns or more in the interval: one stuck between two samples
	 * is listed too. Count last: a reader that sees it sees one such exit. */
	if (stuck_min_ns && now - start >= stuck_min_ns) {
		__u32 ep = epoch;

		if (c->stuck_epoch != ep || now - start > c->stuck_lat_ns) {
			c->stuck_epoch = ep;
			c->stuck_ts = start;
			c->stuck_lat_ns = now - start;
			c->stuck_blocked_ns = s->blocked;
			c->stuck_runq_ns = s->runq;
		}
		c->stuck_done++;
	}
}

#include "cpu_exit_slot.bpf.h"

/* kvm_exit's thread state, or NULL when the thread is not watched (another VMM, -p). */
static __always_inline struct thread_state *exit_thread(__u32 tgid, __u32 tid)
{
	struct thread_state *ts = thread_get(tgid, tid, true);

	return ts && !(ts->flags & TS_IGNORED) ? ts : NULL;
}

/*
 * kvm_exit of a watched thread (exit_thread()): the guest left; the exit completes at this
 * thread's next kvm_entry. x->vcpu < 0 keeps the vCPU the thread had.
 */
static __always_inline void exit_start(struct thread_state *ts, __u64 now, __u32 tgid, __u32 tid,
				       const struct exit_info *x)
{
	struct cell *c, *pc;
	__u32 prev, ref;

	if (x->vcpu >= 0)
		ts->vcpu = x->vcpu;
	if (filter_vcpu >= 0 && ts->vcpu != filter_vcpu)
		return;
	prev = ts->exit_cell;
	ref = cell_ref(ts, tgid, tid, x->isa, x->reason);
	c = cell_get(ref);
	/*
	 * The thread's last exit, if still in flight, is overwritten. Mostly it was of the same
	 * reason, so its cell is this one: found once. Asked before this exit's start is stamped.
	 */
	pc = prev == ref ? c : cell_get(prev);
	if (exit_live_in(prev, pc)) {
		lost_inc(LOST_OVERWRITTEN_EXIT);
		if (pc)
			pc->inflight_ts = 0;
	}
	exit_count(ref, c, now);
	ts->exit_cell = ref;
	/* Keys first: the slot notes the exit's key entry when it is known already. */
	if (key_mode)
		key_exit_start(ts, x);
	if (cpu_slot_enabled) {
		/* Named for cpu_slot_exit(); the thread's exit_key is this exit's, not the cell's. */
		if (pc && pc != c)
			pc->exit_named = 0;
		if (c) {
			c->exit_named = 1;
			if (key_mode)
				c->slot_keyed = 0;
			if (!ts->slot_task)
				slot_self(&ts->slot_task, &ts->slot_born);
			cpu_slot_note(SLOT_CPU(), ts, ref, now, x,
				      key_mode ? key_slot_final(ts, ref) : 0);
		}
	}
	if (split_enabled) {
		ts->exit_blocked0 = ts->blocked_sum;
		ts->exit_runq0 = ts->runq_sum;
	}
	if (stream_enabled)
		ts->exit = *x;
}

static __always_inline void handle_kvm_exit(__u64 now, __u32 tgid, __u32 tid,
					    const struct exit_info *x)
{
	struct thread_state *ts = exit_thread(tgid, tid);

	if (ts)
		exit_start(ts, now, tgid, tid, x);
}

/*
 * Ends the exit in flight held in *ref, begun with the thread's off-CPU sums at blocked0 and
 * runq0: its latency, its split, and its stream record.
 */
static __always_inline void exit_end(struct thread_state *ts, __u32 *ref, __u64 now,
				     __u64 blocked0, __u64 runq0, __u32 tgid, __u32 tid, __u16 type,
				     const struct key_note *key)
{
	__u32 r = *ref;
	struct cell *c = cell_get(r);
	struct exit_split s = {};
	bool keyed_later = false;
	__u64 start;

	*ref = CELL_NONE;
	if (!c)
		return;		/* filtered out, or counted lost when it began */
	start = c->inflight_ts;
	c->inflight_ts = 0;	/* the one store in-flight tracking adds per exit */
	if (split_enabled) {
		split_of(&s, now - start, ts->blocked_sum - blocked0, ts->runq_sum - runq0);
		cell_split(c, now - start, &s);
	}
	cell_end(c, start, now, &s, hist_bucket(now - start));
	/* An IO exit to the VMM waits for its key: its stream record too. */
	if (key_mode)
		keyed_later = key_exit_done(ts, r, c, key, start, now - start, &s,
					    type == VMEXIT_EV_USER_EXIT);
	/* It is settled by the next kvm_exit at the latest (key_exit_start()), which a CPU's
	 * slot must not begin then: it would skip the settling (cpu_slot_exit()). */
	if (keyed_later && cpu_slot_enabled)
		exit_unname(ts->exit_cell);
	if (stream_enabled && !keyed_later)
		stream_emit(ts, tgid, tid, start, now - start, type, &s, key);
}

static __always_inline void handle_kvm_entry(__u64 now, __u32 tgid, __u32 tid)
{
	struct thread_state *ts;

	if (cpu_slot_enabled) {
		ids_fill(&tgid, &tid);
		if (cpu_slot_end(SLOT_CPU(), tid, now))
			return;
	}
	ts = thread_get(tgid, tid, false);
	if (!ts) {
		/* A vCPU's very first entry, or one that was in flight when we attached. */
		ids_fill(&tgid, &tid);
		if (pid_wanted(tgid))
			lost_inc(LOST_UNMATCHED_ENTRY);
		return;
	}
	if (ts->flags & TS_IGNORED)
		return;
	/* The exit_cell no longer names an exit in flight: nor may a CPU slot begin one there. */
	if (cpu_slot_enabled)
		exit_unname(ts->exit_cell);
	if (!exit_live(ts->exit_cell)) {
		ts->exit_cell = CELL_NONE;
		if (filter_vcpu < 0 || ts->vcpu == filter_vcpu)
			lost_inc(LOST_UNMATCHED_ENTRY);
		return;
	}
	if (key_mode == KEY_MODE_DEVICE && ts->vec_vcpu)
		key_vector_late(ts);
	exit_end(ts, &ts->exit_cell, now, ts->exit_blocked0, ts->exit_runq0, tgid, tid,
		 VMEXIT_EV_EXIT, exit_key_now(ts));
}

/* kvm_userspace_exit: KVM_RUN returns to the VMM; VMM time lasts until the next KVM_RUN. */
static __always_inline void handle_user_exit(__u64 now, __u32 tgid, __u32 tid, __u32 reason,
					     __s32 err)
{
	struct thread_state *ts;
	__u32 prev;

	if (err < 0)
		reason = VMEXIT_UREASON_ERRNO | (__u32)-err;
	if (user_half_on() && cpu_slot_user_exit(SLOT_CPU(), now, reason))
		return;
	ts = thread_get(tgid, tid, true);
	if (!ts || (ts->flags & TS_IGNORED))
		return;
	if (filter_vcpu >= 0 && ts->vcpu >= 0 && ts->vcpu != filter_vcpu)
		return;
	prev = ts->uexit_cell;
	if (exit_live(prev)) {
		lost_inc(LOST_UNMATCHED_RUN);
		exit_drop(prev);
	}
	ts->uexit_cell = exit_begin(ts, tgid, tid, VMEXIT_ISA_USER, reason, now);
	/* The key first: the slot notes its entry when it is final and known. With run_keys
	 * the one the put noted from kvm_run (run_key_note()), final. */
	if (run_keys)
		run_key_take_cpu(SLOT_CPU(), reason, &ts->uexit_key);
	else if (key_mode)
		key_user_exit(ts, reason);
	if (user_half_on())
		cpu_slot_user_note(SLOT_CPU(), ts, prev, ts->uexit_cell, reason, now);
	if (split_enabled) {
		ts->uexit_blocked0 = ts->blocked_sum;
		ts->uexit_runq0 = ts->runq_sum;
	}
	if (stream_enabled) {
		ts->uexit_reason = reason;
		ts->uexit_errno = err;
	}
}

/*
 * The KVM_RUN ioctl that ends the VMM time of the thread's last userspace exit. With run_keys
 * one ended here leaves its cell named and the thread's uexit_cell on it, as an end from the
 * slot does, and the CPU's half takes its key and entry (cpu_slot_user_keyed()): the thread's
 * next exit of that key, begun and ended there, looks up no state.
 */
static __always_inline void handle_kvm_run(__u64 now, __u32 tgid, __u32 tid)
{
	struct thread_state *ts;
	struct key_note k;
	struct cell *c;
	__u32 ref;

	if (user_half_on() && cpu_slot_run(SLOT_CPU(), now))
		return;
	ts = thread_get(tgid, tid, false);
	if (!ts || (ts->flags & TS_IGNORED) || ts->uexit_cell == CELL_NONE)
		return;		/* the thread's first KVM_RUN: nothing to complete */
	if (user_half_on()) {
		/* Ended from a CPU's slot already (a KVM_RUN with no userspace exit before it). */
		if (!exit_live(ts->uexit_cell))
			return;
		/* Ended here: uexit_cell no longer names it, nor may a CPU's slot begin one there
		 * (but with run_keys, below). */
		if (!run_keys)
			exit_unname(ts->uexit_cell);
	}
	if (!run_keys || !user_half_on()) {
		exit_end(ts, &ts->uexit_cell, now, ts->uexit_blocked0, ts->uexit_runq0, tgid, tid,
			 VMEXIT_EV_USER_EXIT, uexit_key_now(ts));
		return;
	}
	ref = ts->uexit_cell;
	c = cell_get(ref);
	k = *uexit_key_now(ts);
	exit_end(ts, &ts->uexit_cell, now, ts->uexit_blocked0, ts->uexit_runq0, tgid, tid,
		 VMEXIT_EV_USER_EXIT, &k);
	if (c) {
		ts->uexit_cell = ref;
		cpu_slot_user_keyed(SLOT_CPU(), ts, ref, c->key.reason, &k,
				    key_cached_slot(ts, ref, &k));
	}
}

/* Most cells one thread can own: a dense slot each, and reasons outside them (other_cells). */
#define THREAD_CELLS_MAX	(NR_RSLOTS + 256)

/*
 * One cell of an exiting thread (tid): out of other_cells, stamped and marked ended, last.
 * Returns the next cell of the chain. A global function, so the verifier checks it once
 * instead of once per turn of the loop in handle_thread_exit().
 */
__noinline int thread_cell_end(__u32 ref, __u32 tid, __u64 now)
{
	struct cell *c = cell_get(ref);
	struct other_key okey;
	__u32 next;

	if (!c)
		return 0;
	next = c->thread_next;
	if (next & THREAD_NEXT_OTHER) {
		okey.tid = tid;
		okey.isa = c->key.isa;
		okey.reason = c->key.reason;
		bpf_map_delete_elem(&other_cells, &okey);
	}
	c->ended_ts = now;
	/* Last: from here on userspace may zero the cell and hand it out again. */
	__sync_fetch_and_add(&c->ended, 1);
	return next & THREAD_NEXT_REF;
}

/* The stream record of an exit the thread leaves unfinished: its age so far as latency. */
static __always_inline void stream_left(struct thread_state *ts, __u32 ref, __u64 now,
					      __u64 blocked0, __u64 runq0, __u32 tgid, __u32 tid,
					      __u16 type, const struct key_note *key)
{
	struct cell *c = cell_get(ref);
	struct exit_split s = {};
	__u64 start;

	if (!c || !c->inflight_ts)
		return;
	start = c->inflight_ts;
	if (split_enabled)
		split_of(&s, now - start, ts->blocked_sum - blocked0, ts->runq_sum - runq0);
	stream_emit(ts, tgid, tid, start, now - start, type | VMEXIT_EV_IN_FLIGHT, &s, key);
}

/*
 * The thread is exiting (sched_process_exit runs in do_exit(), after its last KVM_RUN): its
 * exits in flight never complete. The stream gets them now, marked in flight, with their age
 * as latency; each of its cells is marked ended, last, so that userspace reads the final
 * values and recycles it. Its state goes, so that a new thread (the same task storage cannot
 * come back; a reused tid can, in the hash) starts with cells of its own.
 */
static __always_inline void handle_thread_exit(__u64 now, __u32 tgid, __u32 tid)
{
	struct thread_state *ts = thread_get(tgid, tid, false);
	__u32 ref, i;

	if (!ts)
		return;
	if (!(ts->flags & TS_IGNORED)) {
		if (stream_enabled) {
			stream_left(ts, ts->exit_cell, now, ts->exit_blocked0,
					  ts->exit_runq0, tgid, tid, VMEXIT_EV_EXIT, &ts->exit_key);
			stream_left(ts, ts->uexit_cell, now, ts->uexit_blocked0,
					  ts->uexit_runq0, tgid, tid, VMEXIT_EV_USER_EXIT,
					  &ts->uexit_key);
		}
		if (key_mode && ts->late_ref)
			key_settle(ts);
		if (key_mode) {
			key_left(ts, ts->exit_cell, exit_key_now(ts), now);
			key_left(ts, ts->uexit_cell, uexit_key_now(ts), now);
		}
		ids_fill(&tgid, &tid);
		ref = ts->last_cell;
		for (i = 0; i < THREAD_CELLS_MAX && ref; i++)
			ref = thread_cell_end(ref, tid, now);
	}
	if (use_task_storage)
		bpf_task_storage_delete(&thread_storage, bpf_get_current_task_btf());
	else
		bpf_map_delete_elem(&thread_hash, &tid);
}

/* Where the task last ran (task_cpu()). */
static __always_inline __u32 task_last_cpu(struct task_struct *t)
{
	if (bpf_core_field_exists(t->thread_info.cpu))
		return BPF_CORE_READ(t, thread_info.cpu);
	return BPF_CORE_READ((struct task_struct___pre516 *)t, cpu);
}

/*
 * The end of a stream: one exit of a thread still in flight when tracing stopped, written to
 * the iterator's output with its age at flush_ns as latency, and no longer in flight, so that
 * the thread's end (if its program still runs) does not emit it again.
 */
static __always_inline void flush_left(struct seq_file *seq, struct thread_state *ts, __u32 *ref,
				       __u64 blocked0, __u64 runq0, struct task_struct *task,
				       __u16 type, const struct key_note *key)
{
	struct cell *c = cell_get(*ref);
	struct exit_split s = {};
	struct vmexit_event ev = {};
	__u64 start, lat, blocked = ts->blocked_sum, runq = ts->runq_sum;

	*ref = CELL_NONE;
	if (!c || !c->inflight_ts)
		return;
	start = c->inflight_ts;
	lat = flush_ns > start ? flush_ns - start : 0;
	if (!stream_wanted(ts, lat))
		return;
	if (split_enabled) {
		/* Off CPU when tracing stopped: that period has not reached the sums yet. */
		if (ts->off_ts && flush_ns > ts->off_ts) {
			if (ts->flags & TS_OFF_RUNQ)
				runq += flush_ns - ts->off_ts;
			else
				blocked += flush_ns - ts->off_ts;
		}
		split_of(&s, lat, blocked - blocked0, runq - runq0);
	}
	stream_fill(&ev, ts, BPF_CORE_READ(task, tgid), BPF_CORE_READ(task, pid), start, lat,
		    type | VMEXIT_EV_IN_FLIGHT, &s, key);
	ev.cpu = task_last_cpu(task);
	bpf_seq_write(seq, &ev, vmexit_event_len(split_enabled, key_mode));
}

/*
 * --keys: an IO exit to the VMM that completed but still waited for its key (key_settle) when
 * tracing stopped: its record, with the key it has.
 */
static __always_inline void flush_late(struct seq_file *seq, struct thread_state *ts,
				       struct task_struct *task)
{
	struct vmexit_event ev = {};

	if (!ts->late_stream)
		return;
	ts->late_stream = 0;
	stream_fill(&ev, ts, BPF_CORE_READ(task, tgid), BPF_CORE_READ(task, pid), ts->late_start,
		    ts->late_lat, VMEXIT_EV_USER_EXIT, &ts->late_split, &ts->late_key);
	ev.cpu = task_last_cpu(task);
	bpf_seq_write(seq, &ev, vmexit_event_len(split_enabled, key_mode));
}

static __always_inline struct thread_state *switch_state(struct task_struct *t);

/* The flush_in_flight iterator, once per task on the host, after tracing stopped. */
static __always_inline void handle_flush_task(struct seq_file *seq, struct task_struct *task)
{
	struct thread_state *ts = switch_state(task);

	if (!ts || (ts->flags & TS_IGNORED))
		return;
	if (key_mode && ts->late_ref)
		flush_late(seq, ts, task);
	flush_left(seq, ts, &ts->exit_cell, ts->exit_blocked0, ts->exit_runq0, task,
		   VMEXIT_EV_EXIT, &ts->exit_key);
	flush_left(seq, ts, &ts->uexit_cell, ts->uexit_blocked0, ts->uexit_runq0, task,
		   VMEXIT_EV_USER_EXIT, &ts->uexit_key);
}

/*
 * --split, a context switch: the thread leaves the CPU. Only a thread with an exit in flight
 * (split_leaving(), which the caller tests) starts an off-CPU period; runnable says whether it
 * was preempted (it waits for a CPU) or went to sleep.
 */
static __always_inline bool split_leaving(const struct thread_state *ts)
{
	return ts->exit_cell != CELL_NONE || ts->uexit_cell != CELL_NONE;
}

/* One exit in flight's split so far into its cell, for userspace (cell.if_split_ts). */
static __always_inline void split_publish_one(const struct thread_state *ts, __u32 ref,
					      __u64 blocked0, __u64 runq0)
{
	struct cell *c = cell_get(ref);

	if (!c || !c->inflight_ts)
		return;
	c->if_blocked_ns = ts->blocked_sum - blocked0;
	c->if_runq_ns = ts->runq_sum - runq0;
	c->if_off_ts = ts->off_ts;
	c->if_off_runq = !!(ts->flags & TS_OFF_RUNQ);
	c->if_split_ts = c->inflight_ts;
}

/*
 * After each change of the thread's off-CPU state: a stuck vCPU that sleeps is a different
 * alarm from one on CPU or waiting for one, and the exit's own end comes too late to tell.
 */
static __always_inline void split_publish(const struct thread_state *ts)
{
	split_publish_one(ts, ts->exit_cell, ts->exit_blocked0, ts->exit_runq0);
	split_publish_one(ts, ts->uexit_cell, ts->uexit_blocked0, ts->uexit_runq0);
}

static __always_inline void split_switch_out(struct thread_state *ts, __u64 now, bool runnable)
{
	ts->off_ts = now;
	if (runnable)
		ts->flags |= TS_OFF_RUNQ;
	else
		ts->flags &= ~TS_OFF_RUNQ;
	split_publish(ts);
}

/*
 * A sleeping thread is woken: it was blocked until now, and from now on it waits for a CPU
 * (a halted vCPU woken by an interrupt, then kept off its CPU by a busy neighbour). A wakeup
 * not seen (attached mid-sleep) leaves the whole period blocked. Only for a thread that
 * split_asleep() (the caller tests it, before reading the clock).
 */
static __always_inline bool split_asleep(const struct thread_state *ts)
{
	return ts->off_ts && !(ts->flags & TS_OFF_RUNQ);
}

static __always_inline void split_wakeup(struct thread_state *ts, __u64 now)
{
	__u64 off = ts->off_ts;

	if (now > off) {
		ts->blocked_sum += now - off;
		ts->off_ts = now;
	}
	ts->flags |= TS_OFF_RUNQ;
	split_publish(ts);
}

/*
 * The thread is back on a CPU: its off-CPU period goes to the sums (runq since its wakeup or
 * preemption, else blocked). A period that began before we attached was not seen (off_ts 0)
 * and counts as on CPU. Only for a thread with off_ts set (the caller tests it).
 */
static __always_inline void split_switch_in(struct thread_state *ts, __u64 now)
{
	__u64 off = ts->off_ts;

	ts->off_ts = 0;
	if (now >= off) {
		if (ts->flags & TS_OFF_RUNQ)
			ts->runq_sum += now - off;
		else
			ts->blocked_sum += now - off;
	}
	split_publish(ts);
}

/*
 * --split. Every context switch on the host comes here, so the common case must cost nothing:
 * a task that never had BPF task storage (every task but vCPU threads, unless another tool uses
 * task storage too) is told by one load from its task_struct, with no helper call. The field
 * came with task storage itself ("bpf: Implement task local storage", Linux 5.11); the hash
 * fallback of older kernels looks up both threads by tid.
 */
static __always_inline struct thread_state *switch_state(struct task_struct *t)
{
	if (!use_task_storage) {
		__u32 tid = t->pid;

		return bpf_map_lookup_elem(&thread_hash, &tid);
	}
	if (bpf_core_field_exists(t->bpf_storage) && !t->bpf_storage)
		return NULL;
	return bpf_task_storage_get(&thread_storage, t, 0, 0);
}

/* Still runnable: preempted, or woken before it could sleep. */
static __always_inline bool task_runnable(struct task_struct *t)
{
	/* "sched: Change task_struct::state" (Linux 5.14) renamed state to __state. */
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state) == 0;
	return BPF_CORE_READ((struct task_struct___pre514 *)t, state) == 0;
}

/* The sched_wakeup program: only a thread asleep during an exit reads the clock. */
static __always_inline void handle_sched_wakeup(struct task_struct *p)
{
	struct thread_state *ts = switch_state(p);

	if (ts && split_asleep(ts))
		split_wakeup(ts, bpf_ktime_get_ns());
}

#include "stacks.bpf.h"

/*
 * The sched_switch program (the bench runs it with the current task as both). ctx is the
 * program's, for --stacks' bpf_get_stackid().
 */
static __always_inline void handle_sched_switch(void *ctx, bool preempt, struct task_struct *prev,
						struct task_struct *next)
{
	struct thread_state *out = switch_state(prev), *in = switch_state(next);
	__u64 now = 0;

	/* vCPU threads with no exit in flight (in the guest, or idle) read no clock either. */
	if (out && split_leaving(out)) {
		now = bpf_ktime_get_ns();
		split_switch_out(out, now, preempt || task_runnable(prev));
		if (stacks_enabled)
			stack_switch_out(ctx, out, now);
	}
	if (in && in->off_ts) {
		if (!now)
			now = bpf_ktime_get_ns();
		split_switch_in(in, now);
		if (stacks_enabled && in->stack_off_ts)
			stack_switch_in(in, now);
	}
}

static __always_inline void handle_tsc_offset(__u64 now, __u32 tgid, __u32 tid, __s32 vcpu,
					      __u64 prev, __u64 next)
{
	struct vmexit_event *ev;

	if (!stream_enabled || !pid_wanted(tgid))
		return;
	if (filter_vcpu >= 0 && vcpu != filter_vcpu)
		return;
	ev = event_reserve_zeroed();
	if (!ev)
		return;
	ev->ts_ns = now;
	ev->tgid = tgid;
	ev->tid = tid;
	ev->vcpu = vcpu;
	ev->cpu = bpf_get_smp_processor_id();
	ev->info1 = prev;
	ev->info2 = next;
	ev->isa = VMEXIT_ISA_USER;
	ev->type = VMEXIT_EV_TSC_OFFSET;
	event_submit(ev);
}

/*
 * One record of the other kvm tracepoints (--kvm-events), already packed into the slots of a
 * vmexit_event as include/vmexit.h lays them out per event. The *_decode() functions below fill
 * it from the tracepoint's record; they are shared with the test object, which hands them
 * records built at the running kernel's offsets.
 */
struct kvm_ev {
	__u64 info1;
	__u64 info2;
	__u64 rip;
	__u32 intr_info;
	__u32 error_code;
	__u32 id;		/* enum vmexit_kvm_event */
	__s32 vcpu;		/* -1 unless the record says */
};

static __always_inline void kvm_pio_decode(const struct trace_event_raw_kvm_pio *r,
					   struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_PIO;
	k->info1 = r->port;
	k->info2 = r->val;
	k->rip = r->count;
	k->intr_info = r->rw;
	k->error_code = r->size;
}

static __always_inline void kvm_mmio_decode(const struct trace_event_raw_kvm_mmio *r,
					    struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_MMIO;
	k->info1 = r->gpa;
	k->info2 = r->val;
	k->intr_info = r->type;
	k->error_code = r->len;
}

static __always_inline void kvm_msr_decode(const struct trace_event_raw_kvm_msr *r,
					   struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_MSR;
	k->info1 = r->ecx;
	k->info2 = r->data;
	k->intr_info = r->write;
	k->error_code = r->exception;
}

/* CPUID results are 32-bit (the record widens them to unsigned long): two to a slot. */
static __always_inline void kvm_cpuid_decode(const struct trace_event_raw_kvm_cpuid *r,
					     struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_CPUID;
	k->info1 = r->function;
	k->info2 = (__u64)(__u32)r->rbx << 32 | (__u32)r->rax;
	k->rip = (__u64)(__u32)r->rdx << 32 | (__u32)r->rcx;
	k->intr_info = r->index;
	k->error_code = (r->found ? 1 : 0) | (r->used_max_basic ? 2 : 0);
}

static __always_inline void kvm_inj_virq_decode(const struct trace_event_raw_kvm_inj_virq *r,
						struct kvm_ev *k)
{
	const struct trace_event_raw_kvm_inj_virq___pre519 *old = (const void *)r;

	k->id = VMEXIT_KVM_INJ_VIRQ;
	/*
	 * "KVM: x86: Differentiate Soft vs. Hard IRQs vs. reinjected in tracepoint" (Linux 5.19)
	 * renamed irq to vector and added soft and reinjected; before, they read as 0.
	 */
	if (bpf_core_field_exists(r->vector)) {
		k->info1 = r->vector;
		k->intr_info = r->soft;
		k->error_code = r->reinjected;
	} else {
		/* A helper read: a plain load here lets clang share one ctx + 8 pointer between
		 * the branches, and the verifier refuses loads through a moved ctx pointer. */
		k->info1 = BPF_CORE_READ(old, irq);
	}
}

static __always_inline void kvm_page_fault_decode(const struct trace_event_raw_kvm_page_fault *r,
						  struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_PAGE_FAULT;
	k->info1 = r->fault_address;
	k->info2 = r->error_code;
	k->error_code = (__u32)k->info2;
	/* vcpu_id and guest_rip: "KVM: x86: Add extra information in kvm_page_fault trace
	 * point" (Linux 6.1). */
	if (bpf_core_field_exists(r->vcpu_id)) {
		k->vcpu = r->vcpu_id;
		k->rip = r->guest_rip;
	}
}

static __always_inline void
kvm_msi_set_irq_decode(const struct trace_event_raw_kvm_msi_set_irq *r, struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_MSI_SET_IRQ;
	k->info1 = r->address;
	k->info2 = r->data;
}

static __always_inline void
kvm_apic_accept_irq_decode(const struct trace_event_raw_kvm_apic_accept_irq *r, struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_APIC_ACCEPT_IRQ;
	k->info1 = r->apicid;
	k->info2 = r->vec;
	k->intr_info = r->dm;
	k->error_code = r->tm;
}

static __always_inline void
kvm_halt_poll_ns_decode(const struct trace_event_raw_kvm_halt_poll_ns *r, struct kvm_ev *k)
{
	k->id = VMEXIT_KVM_HALT_POLL_NS;
	k->info1 = r->new;
	k->info2 = r->old;
	k->intr_info = r->grow;
	k->vcpu = r->vcpu_id;
}

/* Not an exit: the -r, --min-latency and --sample filters of the stream do not apply. */
static __always_inline void handle_kvm_event(__u64 now, __u32 tgid, __u32 tid,
					     const struct kvm_ev *k)
{
	struct thread_state *ts;
	struct vmexit_event *ev;
	__s32 vcpu = k->vcpu;

	if ((!stream_enabled && !kvm_events_enabled) || !pid_wanted(tgid))
		return;
	/*
	 * Counted as exits are (count_gated): from when every program is attached. top counts
	 * these beside the exits of its intervals; one sent before would have no exit beside it.
	 */
	if (count_gated && !counting)
		return;
	/* Most of these records do not say which vCPU: the thread's last kvm_exit did. */
	if (vcpu < 0) {
		ts = thread_get(tgid, tid, false);
		if (ts)
			vcpu = ts->vcpu;
	}
	/* As for user exits, a thread whose vCPU is unknown passes -c: userspace decides. */
	if (filter_vcpu >= 0 && vcpu >= 0 && vcpu != filter_vcpu)
		return;
	ev = event_reserve_zeroed();
	if (!ev)
		return;
	ev->ts_ns = now;
	ev->tgid = tgid;
	ev->tid = tid;
	ev->vcpu = vcpu;
	ev->cpu = bpf_get_smp_processor_id();
	ev->info1 = k->info1;
	ev->info2 = k->info2;
	ev->rip = k->rip;
	ev->intr_info = k->intr_info;
	ev->error_code = k->error_code;
	ev->reason = k->id;
	ev->type = VMEXIT_EV_KVM_EVENT;
	event_submit(ev);
}

static __always_inline void handle_fork(__u32 parent, __u32 child)
{
	__u8 one = 1;

	if (follow_forks && bpf_map_lookup_elem(&pid_filter, &parent))
		bpf_map_update_elem(&pid_filter, &child, &one, BPF_ANY);
}

/*
 * A followed process has ended (its last thread is exiting): its pid leaves the filter, or a
 * later, unrelated process given the same pid (pid_max wraps; 32768 by default) would be traced
 * as a child of the command. Threads already running keep their verdict (TS_INIT).
 */
static __always_inline void handle_process_gone(__u32 tgid)
{
	if (follow_forks)
		bpf_map_delete_elem(&pid_filter, &tgid);
}

#endif /* VMEXIT_HANDLERS_BPF_H */
