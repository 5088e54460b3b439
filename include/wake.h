/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interrupt delivery latency and HLT anatomy (stat --wake): the types bpf/wake.bpf.c keeps and
 * userspace reads. Plain __u32/__u64 only, as include/vmexit.h.
 */
#ifndef VMEXIT_WAKE_H
#define VMEXIT_WAKE_H

#include "vmexit.h"

/*
 * Who made an interrupt pending, as far as KVM says: X(ID, name). The number is the key's
 * (never renumber). IPI: kvm_apic_ipi before the delivery in the same thread, with the same
 * vector; MSI: kvm_msi_set_irq; IOAPIC: kvm_ioapic_set_irq; LINE: kvm_set_irq (a GSI routed to
 * something that says nothing more); TIMER: delivered in the target vCPU's own thread with its
 * LVT timer's vector; LOCAL: the target's own thread, another LVT (PMI, LINT) or unknown.
 * OTHER: another thread, and no note from KVM. UNKNOWN: untimed deliveries only
 * (VMEXIT_EV_WAKE_UNTIMED), no note from KVM and no record of the target vCPU's thread, so its
 * own thread (TIMER, LOCAL) cannot be told from another (OTHER).
 */
#define WAKE_SOURCES(X)		\
	X(OTHER, other)		\
	X(IPI, ipi)		\
	X(MSI, msi)		\
	X(IOAPIC, ioapic)	\
	X(LINE, line)		\
	X(TIMER, timer)		\
	X(LOCAL, local)		\
	X(UNKNOWN, unknown)

enum wake_source {
#define WAKE_SRC_ENUM(ID, name) WAKE_SRC_##ID,
	WAKE_SOURCES(WAKE_SRC_ENUM)
#undef WAKE_SRC_ENUM
	NR_WAKE_SOURCES
};

/* The event types whose reason is a source and intr_info a vector: a delivery's, timed or not. */
static inline int wake_event_type(__u16 type)
{
	return type == VMEXIT_EV_WAKE || type == VMEXIT_EV_WAKE_POSTED ||
	       type == VMEXIT_EV_WAKE_UNTIMED;
}

/*
 * What a delivery's time was spent on, decided by what the target vCPU was doing when the
 * interrupt became pending: X(ID, name). They sum exactly to the delivery's latency (pending
 * to the vCPU's next kvm_entry). GUEST: in guest mode (the kick, its exit, the entry). EXIT: in
 * an exit that was not a halt at that time. POLLED: halted, and KVM's halt-polling saw it.
 * SLEPT: halted asleep, up to the scheduler's wake-up of the vCPU thread; RUNQ: from that
 * wake-up until the thread ran; ONCPU: from then to the entry.
 */
#define WAKE_PARTS(X)		\
	X(GUEST, guest)		\
	X(EXIT, exit)		\
	X(POLLED, polled)	\
	X(SLEPT, slept)		\
	X(RUNQ, runq)		\
	X(ONCPU, oncpu)

enum wake_part {
#define WAKE_PART_ENUM(ID, name) WAKE_PART_##ID,
	WAKE_PARTS(WAKE_PART_ENUM)
#undef WAKE_PART_ENUM
	NR_WAKE_PARTS
};

/*
 * An exit that halted (one or more kvm_vcpu_wakeup in it), from kvm_exit to kvm_entry:
 * X(ID, name), summing exactly to the exit's time. POLL: halt-polling (successful or not);
 * SLEEP: asleep, from the first sleep of a halt to the scheduler's wake-up; RUNQ: wake-up to
 * on CPU; OTHER: the rest (the exit's handling before the halt, on CPU to kvm_vcpu_wakeup,
 * then to the entry).
 */
#define HLT_PARTS(X)		\
	X(POLL, poll)		\
	X(SLEEP, sleep)		\
	X(RUNQ, runq)		\
	X(OTHER, other)

enum hlt_part {
#define HLT_PART_ENUM(ID, name) HLT_PART_##ID,
	HLT_PARTS(HLT_PART_ENUM)
#undef HLT_PART_ENUM
	NR_HLT_PARTS
};

/*
 * Where a VMEXIT_EV_WAKE record (stream --wake) keeps each part: the one map of its layout,
 * for the kernel that fills it and every output that reads it.
 */
static inline __u64 *wake_event_part(struct vmexit_event *ev, int part)
{
	switch (part) {
	case WAKE_PART_GUEST:	return &ev->rip;
	case WAKE_PART_EXIT:	return &ev->info1;
	case WAKE_PART_POLLED:	return &ev->info2;
	case WAKE_PART_SLEPT:	return &ev->blocked_ns;
	case WAKE_PART_RUNQ:	return &ev->runq_ns;
	default:		return &ev->oncpu_ns;
	}
}

/* Where a VMEXIT_EV_HALT or VMEXIT_EV_HLT record keeps each enum hlt_part, likewise. */
static inline __u64 *hlt_event_part(struct vmexit_event *ev, int part)
{
	switch (part) {
	case HLT_PART_POLL:	return &ev->rip;
	case HLT_PART_SLEEP:	return &ev->info1;
	case HLT_PART_RUNQ:	return &ev->info2;
	default:		return &ev->oncpu_ns;
	}
}

/*
 * A cell's VMM is its pid and the process's start time (group_leader->start_time, as
 * cell_key.proc_start): a pid reused by a new VMM starts cells of its own, never adding to
 * those of the ended one.
 */
struct wake_key {
	__u32 tgid;
	__s32 vcpu;
	__u32 source;	/* enum wake_source */
	__u32 vector;
	__u64 proc_start;
};

struct wake_cell {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 parts[NR_WAKE_PARTS];	/* ns, summed over the deliveries */
	__u64 hist[NR_BUCKETS];		/* latency, include/hist.h */
	/*
	 * Interrupts of this key KVM posted (APICv/AVIC) to the vCPU in guest mode: taken with no
	 * exit, so not timed and in none of the fields above (bpf/wake.bpf.c's wake_posted_irq).
	 */
	__u64 posted;
};

struct hlt_key {
	__u32 tgid;
	__s32 vcpu;
	__u64 proc_start;	/* as wake_key's */
};

struct hlt_cell {
	__u64 exits;		/* exits with at least one halt */
	__u64 halts;		/* kvm_vcpu_wakeup events */
	__u64 polled;		/* halts that ended while polling (waited == 0) */
	__u64 poll_slept;	/* polled, then slept */
	__u64 slept;		/* slept without polling */
	__u64 invalid;		/* wake-ups KVM calls not valid (nothing to deliver) */
	__u64 sum_ns;		/* the halted exits' time, kvm_exit to kvm_entry */
	__u64 halt_ns;		/* kvm_vcpu_wakeup's own ns: KVM's time halted */
	__u64 wake_sum_ns;	/* the halts' start-to-wake-up times (hist below), summed */
	/* kvm_vcpu_wakeup's ns of the halts that slept (halt_ns less it: those that did not):
	 * KVM's own clock reads, so it equals its halt_wait_ns + halt_poll_fail_ns exactly. */
	__u64 slept_halt_ns;
	__u64 parts[NR_HLT_PARTS];
	/*
	 * Per halt: time from its start to the wake-up (the end of a successful poll, or the
	 * scheduler's wake-up of the sleeping thread): what a poll window would have had to be
	 * to catch it (halt-poll advice).
	 */
	__u64 hist[NR_BUCKETS];
};

/* Counted in the kernel, reported at the end, never silent. */
enum wake_lost {
	WAKE_LOST_SLOTS,	/* more pending interrupts for one vCPU than it keeps */
	WAKE_LOST_CELLS,	/* the cell maps were full */
	WAKE_LOST_THREADS,	/* the thread map was full */
	NR_WAKE_LOST,		/* the kernel's wake_lost[] ends here */
	/*
	 * stream and record only: deliveries the event ring they share with the exits refused
	 * (bpf/wake.bpf.c's events_lost), said with the others rather than hidden among the
	 * exits' ringbuf_full. stat, top and serve read cells, never that ring.
	 */
	WAKE_LOST_RING = NR_WAKE_LOST,
	NR_WAKE_LOSSES
};

/*
 * Where a delivery starts, as the build's program set has it (Makefile: WAKE_BPF_SRC_*): the
 * tracepoint named in the outputs' headings.
 */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define WAKE_PENDING_HOOK	"vgic_update_irq_pending"
#else
#define WAKE_PENDING_HOOK	"kvm_apic_accept_irq"
#endif

#define WAKE_MAX_CELLS		4096
#define WAKE_MAX_THREADS	4096
#define WAKE_PENDING_SLOTS	8

#endif /* VMEXIT_WAKE_H */
