// SPDX-License-Identifier: GPL-2.0
/*
 * stat --wake: interrupt delivery latency and HLT anatomy (include/wake.h). A skeleton of its
 * own, loaded only when asked for: without --wake none of these hooks exists and the exit path
 * costs what it did.
 *
 * A delivery starts at kvm_apic_accept_irq (the interrupt is in the target's IRR) and ends at
 * the target vCPU's next kvm_entry. The target is (the sender's tgid, the tracepoint's apicid,
 * which __apic_accept_irq() fills with vcpu->vcpu_id): every sender KVM traces from (a vCPU, the
 * VMM's ioctl, an irqfd written by the VMM's threads) is in the guest's process. What the
 * vCPU was doing then decides the delivery's parts; a halt is known only when it ends
 * (kvm_vcpu_wakeup says how long it was and whether the thread slept), so deliveries pending
 * during an exit are classed then.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "wake.h"
#include "hist.h"

/* The LVT timer register's offset in the APIC page (APIC_LVTT). */
#define APIC_LVTT_OFF	0x320

/*
 * Only what is read: the vCPU's local APIC, its register page and its timer's hrtimer (x86,
 * kvm module's BTF). Of the hrtimer, its address and its callback (wake_timer_expiry()).
 */
struct hrtimer___wake {
	void *function;
} __attribute__((preserve_access_index));

struct kvm_timer___wake {
	struct hrtimer___wake timer;
} __attribute__((preserve_access_index));

struct kvm_lapic___wake {
	void *regs;
	struct kvm_timer___wake lapic_timer;
} __attribute__((preserve_access_index));

struct kvm_vcpu_arch___wake {
	struct kvm_lapic___wake *apic;
} __attribute__((preserve_access_index));

struct kvm_vcpu___wake {
	int vcpu_id;
	struct kvm_vcpu_arch___wake arch;
} __attribute__((preserve_access_index));

/* x86's vector is 8 bits: the APIC's. */
#define PEND_SRC_SHIFT		8
#define PEND_STATE_SHIFT	12
#define PEND_VECTOR		0xff

/* kvm_apic_accept_irq's apicid: __apic_accept_irq() fills it with vcpu->vcpu_id. */
static __always_inline __s32 wake_vcpu_index(struct kvm_vcpu___wake *vcpu)
{
	return BPF_CORE_READ(vcpu, vcpu_id);
}

/*
 * A macro, not an inline function: expanded in place, its locals keep the stack slots the entry
 * and exit programs had (an inlined function's moved them: the streams differed).
 */
#define WAKE_VCPU_TRACK(t, tid, vk, vcpu)						\
	do {										\
		struct kvm_lapic___wake *apic = BPF_CORE_READ(vcpu, arch.apic);		\
											\
		bpf_map_update_elem(&wake_vcpus, &(vk), &(tid), BPF_ANY);		\
		/* No in-kernel APIC (the VMM emulates it): no LAPIC timer to watch. */	\
		if (apic) {								\
			__u64 timer = (__u64)&apic->lapic_timer.timer;			\
											\
			bpf_map_update_elem(&wake_timers, &timer, &(tid), BPF_ANY);	\
			(t)->timer_key = timer;						\
			(t)->arch_ptr = (__u64)BPF_CORE_READ(apic, regs);		\
		}									\
	} while (0)

#include "wake_common.bpf.h"

/* x86's kvm_entry and kvm_exit pass the vCPU. */
SEC("tp_btf/kvm_entry")
int BPF_PROG(wake_entry, struct kvm_vcpu___wake *vcpu)
{
	return wake_vcpu_entry(bpf_get_current_pid_tgid(), vcpu);
}

SEC("tp_btf/kvm_exit")
int BPF_PROG(wake_exit, struct kvm_vcpu___wake *vcpu)
{
	return wake_vcpu_exit(bpf_get_current_pid_tgid(), vcpu);
}

static __always_inline void note(__u32 source, __u32 vector)
{
	struct wake_note n = { .source = source, .vector = vector };

	note_put((__u32)bpf_get_current_pid_tgid(), &n);
}

/* The sender's notes: each delivery that follows in the same thread with the vector is theirs. */
SEC("tp_btf/kvm_apic_ipi")
int BPF_PROG(wake_ipi, __u32 icr_low, __u32 dest_id)
{
	note(WAKE_SRC_IPI, icr_low & 0xff);
	return 0;
}

SEC("tp_btf/kvm_msi_set_irq")
int BPF_PROG(wake_msi, __u64 address, __u64 data)
{
	note(WAKE_SRC_MSI, data & 0xff);
	return 0;
}

SEC("tp_btf/kvm_ioapic_set_irq")
int BPF_PROG(wake_ioapic, __u64 e, int pin, bool coalesced)
{
	note(WAKE_SRC_IOAPIC, e & 0xff);
	return 0;
}

/* A GSI: where it goes is KVM's routing; an IOAPIC or MSI note that follows replaces this. */
SEC("tp_btf/kvm_set_irq")
int BPF_PROG(wake_line, unsigned int gsi, int level, int irq_source_id)
{
	note(WAKE_SRC_LINE, ~0u);
	return 0;
}


/*
 * stream --wake: an untimed delivery's event (VMEXIT_EV_WAKE_UNTIMED): no record of its vCPU's
 * thread, so the vCPU is the one KVM names and the source what KVM's note said, if any.
 */
static __always_inline void untimed_emit(const struct vcpu_id_key *vk, __u32 source, __u8 vec)
{
	struct vmexit_event *ev = ring_take_for(vk->tgid, vk->vcpu, VMEXIT_EV_WAKE_UNTIMED,
						bpf_ktime_get_ns(), 0);
	int i;

	if (!ev)
		return;
	for (i = 0; i < NR_WAKE_PARTS; i++)
		*wake_event_part(ev, i) = 0;
	ev->intr_info = vec;
	ev->error_code = 0;
	ev->reason = source;
	ring_send(ev);
}

SEC("tp_btf/kvm_apic_accept_irq")
int BPF_PROG(wake_pending, __u32 apicid, __u16 dm, __u16 tm, __u8 vec)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct vcpu_id_key vk = { .tgid = id >> 32, .vcpu = apicid };
	__u32 tid = (__u32)id, target, src, *target_tid;
	struct wake_note *n = note_of(tid);
	struct wake_thread *t = thread_find(tid);

	/*
	 * Most deliveries are made in the target's own thread (its LAPIC timer's, injected once
	 * its halt ends; self-IPIs): its record, an array slot, names it, and the hash of the
	 * vCPUs is not looked up. A record names the vCPU its thread runs now, or none
	 * (thread_of() takes the vCPU from a thread it left).
	 */
	if (t && t->tgid == vk.tgid && t->vcpu >= 0 && t->vcpu == vk.vcpu) {
		target = tid;
	} else {
		target_tid = bpf_map_lookup_elem(&wake_vcpus, &vk);
		if (!target_tid) {
			/* Said (wake_untimed), not lost: no vCPU to time it on. */
			if (pid_wanted(vk.tgid) && (filter_vcpu < 0 || vk.vcpu == filter_vcpu)) {
				__sync_fetch_and_add(&wake_untimed, 1);
				if (emit_events)
					untimed_emit(&vk, n && (n->vector == ~0u || n->vector == vec) ?
						     n->source : WAKE_SRC_UNKNOWN, vec);
			}
			return 0;
		}
		target = *target_tid;
		t = thread_find(target);
		if (!t)
			return 0;
	}
	if (n && (n->vector == ~0u || n->vector == vec)) {
		src = n->source;
	} else if (tid == target) {
		/* Local: the LVT timer when the vector is its own. */
		void *regs = (void *)t->arch_ptr;
		__u32 lvtt = 0;

		if (regs)
			bpf_probe_read_kernel(&lvtt, sizeof(lvtt), regs + APIC_LVTT_OFF);
		src = regs && (lvtt & 0xff) == vec ? WAKE_SRC_TIMER : WAKE_SRC_LOCAL;
		if (src == WAKE_SRC_TIMER && t->timer_ts)
			return timer_pending(t, vec);
	} else {
		src = WAKE_SRC_OTHER;
	}
	return pend_start(t, src, vec);
}


/*
 * A posted delivery in its cell (the key a timed one of the same source and vector has): a
 * count, no time. In the sender's thread, while the vCPU's may add to the same cell at its
 * entry: atomic. stream --wake: and an event of its own (VMEXIT_EV_WAKE_POSTED).
 */
static __always_inline void posted_count(struct wake_thread *t, __u64 info)
{
	struct wake_key k = { .tgid = t->tgid, .vcpu = t->vcpu, .proc_start = t->proc_start,
			      .source = (info >> PEND_SRC_SHIFT) & 0xf,
			      .vector = info & PEND_VECTOR };
	__u64 p[NR_WAKE_PARTS] = {};
	struct wake_cell *c;

	if (emit_events)
		wake_emit(t, &k, bpf_ktime_get_ns(), 0, p, VMEXIT_EV_WAKE_POSTED);
	c = cell_find(&wake_cells, &k, WAKE_ZERO_WC, WAKE_LOST_CELLS);
	if (c)
		__sync_fetch_and_add(&c->posted, 1);
}

/*
 * KVM posted the interrupt (APICv, AVIC): vmx_deliver_interrupt() and the SVM side trace this
 * right after kvm_apic_accept_irq, in the same call (Linux 5.17, "KVM: x86: Move delivery of
 * non-APICv interrupt into vendor code"). To a vCPU in guest mode the CPU delivers it with no
 * exit (the notification IPI, AVIC's doorbell), so wake_pending()'s slot would wait for
 * whatever entry came next and charge it all to "guest": freed, and counted as posted instead,
 * in its cell (posted_count()) and in the total.
 * Not in guest mode, the vCPU takes it from the PIR at its next entry, as any other: left be.
 */
SEC("tp_btf/kvm_apicv_accept_irq")
int BPF_PROG(wake_posted_irq, __u32 apicid, __u16 dm, __u16 tm, __u8 vec)
{
	struct vcpu_id_key vk = { .tgid = bpf_get_current_pid_tgid() >> 32, .vcpu = apicid };
	__u32 *tid = bpf_map_lookup_elem(&wake_vcpus, &vk);
	struct wake_thread *t = tid ? thread_find(*tid) : NULL;
	__u64 want = PEND_USED | (__u64)PEND_GUEST << PEND_STATE_SHIFT | vec, info = 0, newest = 0;
	struct pend_slot *got = NULL;
	int i;

	if (!t || !t->in_guest)
		return 0;
	/* The newest slot of this vector taken in guest mode: the one kvm_apic_accept_irq took. */
	for (i = 0; i < WAKE_PENDING_SLOTS; i++) {
		struct pend_slot *s = &t->pend[i];
		__u64 si = s->info, ts = s->ts;

		if ((si & ~(0xfull << PEND_SRC_SHIFT)) == want && ts > newest) {
			newest = ts;
			info = si;
			got = s;
		}
	}
	if (!got)
		return 0;
	/* ts first, as wake_entry() frees a slot, and only if still this delivery's. */
	if (__sync_val_compare_and_swap(&got->ts, newest, 0) != newest ||
	    __sync_val_compare_and_swap(&got->info, info, 0) != info)
		return 0;
	__sync_fetch_and_add(&wake_posted, 1);
	posted_count(t, info);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
