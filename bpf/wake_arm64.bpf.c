// SPDX-License-Identifier: GPL-2.0
/*
 * stat --wake on arm64: interrupt delivery latency and WFI (halt) anatomy, as bpf/wake.bpf.c
 * does for x86 (include/wake.h), from arm64 KVM's hooks. The build makes this file the arm64
 * wake.bpf.o (Makefile: one program set per architecture), so none of x86's APIC hooks is needed.
 *
 * A delivery starts at kvm:vgic_update_irq_pending with level 1 (kvm_vgic_inject_irq(): a PPI of
 * the vCPU's own, an SPI from the VMM's KVM_IRQ_LINE or an irqfd) and ends at the target vCPU's
 * next kvm_entry. The target is (the sender's tgid, the tracepoint's vcpu_id, which is the vCPU's
 * index: kvm_get_vcpu() in 6.1, vcpu->vcpu_idx since "KVM: arm64: vgic: Make
 * kvm_vgic_inject_irq() take a vcpu pointer", Linux 6.8), but for an SPI: KVM_IRQ_LINE and irqfds
 * pass no vCPU for one (vcpu_id 0 in 6.1 and 6.12), and the vGIC sends it to its vgic_irq's
 * target_vcpu (GICD_IROUTER), read through any vCPU of the sender's VM (spi_target()). Its
 * source, as x86's mean: TIMER for the arch timer's PPI (kvm:kvm_timer_update_irq just before, in
 * the same thread), IPI for an SGI, LOCAL for another PPI, LINE for an SPI, MSI for an LPI; its
 * vector is the INTID. KVM's timer says
 * level 1 again at each vcpu_load while its condition holds (kvm_timer_vcpu_load_gic()), also after
 * the interrupt was delivered and before the guest took it: an update that finds the vGIC's line
 * already high (vgic_line_rises()), or the INTID's delivery still pending, starts none.
 *
 * The timer of a vCPU blocked in WFI: kvm_timer_vcpu_put() arms the vCPU's bg_timer; its expiry
 * wakes the thread, whose vcpu_load then updates the line. As x86's LAPIC timer, that delivery
 * counts from the hrtimer's expiry (hrtimer_expire_entry on bg_timer), so its parts say how long
 * it slept and waited to run. An SGI (a vCPU's IPI to a sibling, source IPI) is made pending
 * without the tracepoint (vgic_v3_dispatch_sgi()): wake_sgi() sees it where it is queued. Not
 * seen (said in the README): LPIs (the ITS injects them without the tracepoint too), and the
 * emulated timers' updates made from an hrtimer in another process's context.
 *
 * arm64's kvm_entry and kvm_exit carry no vCPU pointer (vcpu_pc, and ret/esr_ec): the vCPU is
 * found from the thread (running_vcpu()).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "wake.h"
#include "hist.h"

/*
 * What BPF_KPROBE reads its arguments from on arm64 (bpf_tracing.h: x0-x7 in regs[]): the UAPI
 * layout (asm/ptrace.h) at the start of the kernel's pt_regs, which this vmlinux.h leaves out.
 */
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};

/* The GIC's INTID ranges (SGIs 0-15, PPIs 16-31, SPIs to 1019, LPIs from 8192). */
#define GIC_PPI_FIRST	16
#define GIC_SPI_FIRST	32
#define GIC_LPI_FIRST	8192

struct kvm_vcpu___wake;

/*
 * Only what is read: the vCPU's index and its arch timer's bg_timer (kvm_vcpu.arch.timer_cpu, as
 * in 6.1 and 6.12); of the hrtimer, its address and its callback (wake_timer_expiry()).
 */
struct hrtimer___wake {
	void *function;
} __attribute__((preserve_access_index));

struct arch_timer_cpu___wake {
	struct hrtimer___wake bg_timer;
} __attribute__((preserve_access_index));

/*
 * The vGIC's state of an INTID, read before kvm_vgic_inject_irq() changes it (the tracepoint comes
 * first): a level-sensitive line already high is not made pending again (vgic_validate_injection()),
 * nor one still queued on a vCPU (vgic_queue_irq_unlock(): irq->vcpu), where a mapped level line
 * reads low once in a list register (vgic_v3_populate_lr()) until the guest has taken it.
 */
enum vgic_irq_config___wake {
	VGIC_CONFIG_EDGE___wake = 0,
	VGIC_CONFIG_LEVEL___wake,
};

struct vgic_irq___wake {
	__u32 intid;
	bool pending_latch;	/* an edge's (an SGI's) pending state */
	bool enabled;
	void *vcpu;		/* the vCPU whose ap_list holds it (queued, in a list register) */
	struct kvm_vcpu___wake *target_vcpu;	/* an SPI's: where GICD_IROUTER routes it */
	bool line_level;
	enum vgic_irq_config___wake config;
} __attribute__((preserve_access_index));

/* A vCPU's SGIs and PPIs: an array up to 6.10, allocated on demand since ("KVM: arm64: vgic:
 * Allocate private interrupts on demand", Linux 6.11). */
struct vgic_cpu___wake {
	struct vgic_irq___wake private_irqs[32];
} __attribute__((preserve_access_index));

struct vgic_cpu___wake_ptr {
	struct vgic_irq___wake *private_irqs;
} __attribute__((preserve_access_index));

struct vgic_dist___wake {
	int nr_spis;
	struct vgic_irq___wake *spis;
} __attribute__((preserve_access_index));

struct kvm_arch___wake {
	struct vgic_dist___wake vgic;
} __attribute__((preserve_access_index));

struct kvm___wake {
	struct kvm_arch___wake arch;
} __attribute__((preserve_access_index));

struct kvm_vcpu_arch___wake {
	struct arch_timer_cpu___wake timer_cpu;
	struct vgic_cpu___wake vgic_cpu;
} __attribute__((preserve_access_index));

struct kvm_vcpu_arch___wake_ptr {
	struct vgic_cpu___wake_ptr vgic_cpu;
} __attribute__((preserve_access_index));

struct kvm_vcpu___wake_ptr {
	struct kvm_vcpu_arch___wake_ptr arch;
} __attribute__((preserve_access_index));

struct hlist_node___wake {
	void *next;
} __attribute__((preserve_access_index));

struct preempt_notifier___wake {
	struct hlist_node___wake link;
} __attribute__((preserve_access_index));

struct kvm_vcpu___wake {
	int vcpu_idx;
	struct kvm___wake *kvm;
	struct preempt_notifier___wake preempt_notifier;
	struct kvm_vcpu_arch___wake arch;
} __attribute__((preserve_access_index));

struct hlist_head___wake {
	struct hlist_node___wake *first;
} __attribute__((preserve_access_index));

struct task_struct___wake {
	struct hlist_head___wake preempt_notifiers;
} __attribute__((preserve_access_index));

/* A delivery waiting for its entry; info 0 is a free slot. The INTID needs 13 bits and more. */
#define PEND_SRC_SHIFT		32
#define PEND_STATE_SHIFT	36
#define PEND_VECTOR		0xffffffffull

/*
 * vgic_update_irq_pending's vcpu_id: the vCPU's index, kvm_get_vcpu() in 6.1, vcpu->vcpu_idx
 * since Linux 6.8 (the header comment).
 */
static __always_inline __s32 wake_vcpu_index(struct kvm_vcpu___wake *vcpu)
{
	return BPF_CORE_READ(vcpu, vcpu_idx);
}

/* Every vCPU has its arch timer's bg_timer. A macro, as x86's: see there why. */
#define WAKE_VCPU_TRACK(t, tid, vk, vcpu)						\
	do {										\
		__u64 timer = (__u64)&(vcpu)->arch.timer_cpu.bg_timer;			\
											\
		bpf_map_update_elem(&wake_vcpus, &(vk), &(tid), BPF_ANY);		\
		bpf_map_update_elem(&wake_timers, &timer, &(tid), BPF_ANY);		\
		(t)->timer_key = timer;							\
	} while (0)

#include "wake_common.bpf.h"

/*
 * The vGIC's vgic_irq of intid for the vCPU vcpu, or NULL (an LPI, or one this kernel lays out
 * otherwise). A function of its own: inlined in wake_entry's loop, clang hoisted the other
 * layout's access above its bpf_core_field_exists() test, and libbpf's poisoned instruction for
 * it (the layout this kernel has not) was then reached: the program did not load.
 */
static __noinline struct vgic_irq___wake *vgic_irq_of(struct kvm_vcpu___wake *vcpu, __u32 intid)
{
	__u64 size = bpf_core_type_size(struct vgic_irq___wake);
	struct vgic_irq___wake *base = NULL;
	__u32 i = intid;

	if (intid < GIC_SPI_FIRST) {
		if (bpf_core_field_exists(struct vgic_cpu___wake, private_irqs))
			base = (void *)&vcpu->arch.vgic_cpu.private_irqs;
		else if (bpf_core_field_exists(struct vgic_cpu___wake_ptr, private_irqs))
			base = BPF_CORE_READ((struct kvm_vcpu___wake_ptr *)vcpu,
					     arch.vgic_cpu.private_irqs);
	} else if (intid < GIC_LPI_FIRST) {
		i = intid - GIC_SPI_FIRST;
		if (i >= (__u32)BPF_CORE_READ(vcpu, kvm, arch.vgic.nr_spis))
			return NULL;
		base = BPF_CORE_READ(vcpu, kvm, arch.vgic.spis);
	}
	return base ? (void *)base + i * size : NULL;
}

/* Whether KVM will take a level-1 update of intid as a new pending interrupt. */
static __always_inline bool vgic_line_rises(struct kvm_vcpu___wake *vcpu, __u32 intid)
{
	struct vgic_irq___wake *irq = vgic_irq_of(vcpu, intid);

	if (!irq)
		return true;
	if (BPF_CORE_READ(irq, vcpu))
		return false;
	return BPF_CORE_READ(irq, config) != VGIC_CONFIG_LEVEL___wake ||
	       !BPF_CORE_READ(irq, line_level);
}

/*
 * The vCPU this thread runs, or NULL. vcpu_load() registers the vCPU's preempt notifier on its
 * thread until vcpu_put(), and KVM is the only user of preempt notifiers, so at kvm_entry and
 * kvm_exit the thread's first one is its vCPU's. (kvm_running_vcpu, KVM's per-CPU pointer, is in
 * BTF but not in a kernel's kallsyms without CONFIG_KALLSYMS_ALL, as Debian's arm64 6.1: the
 * program would not load.)
 */
static __always_inline struct kvm_vcpu___wake *running_vcpu(void)
{
	struct task_struct___wake *task = (void *)bpf_get_current_task();
	struct hlist_node___wake *first = BPF_CORE_READ(task, preempt_notifiers.first);

	if (!first)
		return NULL;
	return (void *)first - bpf_core_field_offset(struct kvm_vcpu___wake, preempt_notifier.link);
}

SEC("tp_btf/kvm_entry")
int BPF_PROG(wake_entry, unsigned long vcpu_pc)
{
	return wake_vcpu_entry(bpf_get_current_pid_tgid(), running_vcpu());
}

SEC("tp_btf/kvm_exit")
int BPF_PROG(wake_exit, int ret, unsigned int esr_ec, unsigned long vcpu_pc)
{
	__u64 id = bpf_get_current_pid_tgid();

	return wake_vcpu_exit(id, running_vcpu());
}

/* The arch timer raises its line: the vgic_update_irq_pending that follows here is its. */
SEC("tp_btf/kvm_timer_update_irq")
int BPF_PROG(wake_timer_line, unsigned long vcpu_id, __u32 irq, int level)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct wake_note n = { .source = WAKE_SRC_TIMER, .vector = irq };

	if (level)
		note_put(tid, &n);
	return 0;
}

/* How many vCPU indexes spi_target() tries for one of the VM's (see there). */
#define SPI_VCPU_PROBES	64

/*
 * The index of the vCPU an SPI is routed to, or -1: any tracked vCPU of the sender's process
 * leads to the VM's vGIC, whose vgic_irq names the target. The lowest index still tracked, not
 * vCPU 0 alone: a vCPU whose thread has ended is forgotten, and the others still take SPIs (9 of
 * vCPU 1's 40 went uncounted so in the arm64 bed). One VM per process, as QEMU's: in a process
 * with several, the first one found is taken. Read before kvm_vgic_inject_irq() takes the irq's
 * lock: a GICD_IROUTER write racing it charges the delivery to the vCPU routed to just before.
 */
static __always_inline __s32 spi_target(__u32 tgid, __u32 intid)
{
	struct vcpu_id_key vk0 = { .tgid = tgid };
	struct kvm_vcpu___wake *target;
	struct vgic_irq___wake *irq;
	struct wake_thread *t0 = NULL;
	__u32 *tid0, i;

	for (i = 0; i < SPI_VCPU_PROBES && !t0; i++) {
		vk0.vcpu = i;
		tid0 = bpf_map_lookup_elem(&wake_vcpus, &vk0);
		if (tid0)
			t0 = thread_find(*tid0);
	}
	if (!t0)
		return -1;
	irq = vgic_irq_of((void *)t0->vcpu_ptr, intid);
	if (!irq)
		return -1;
	target = BPF_CORE_READ(irq, target_vcpu);
	return target ? wake_vcpu_index(target) : -1;
}

/* Whether the vCPU t has a delivery of intid still waiting for its entry. */
static __always_inline bool intid_pending(struct wake_thread *t, __u32 intid)
{
	int i;

	for (i = 0; i < WAKE_PENDING_SLOTS; i++) {
		__u64 info = t->pend[i].info;

		if ((info & PEND_USED) && (info & PEND_VECTOR) == intid)
			return true;
	}
	return false;
}

/*
 * intid made pending for the vCPU vk by the thread tid, from the source src: a delivery starts,
 * unless one of it still waits for the vCPU's entry or the vGIC will not take it as new.
 */
static __always_inline int pend_mark(const struct vcpu_id_key *vk, __u32 tid, __u32 intid,
				     __u32 src)
{
	__u32 target, *target_tid;
	struct wake_thread *t;

	/* The target's own thread (its timer's, its PPIs) first, as x86's wake_pending(). */
	t = thread_find(tid);
	if (t && t->tgid == vk->tgid && t->vcpu >= 0 && t->vcpu == vk->vcpu) {
		target = tid;
	} else {
		target_tid = bpf_map_lookup_elem(&wake_vcpus, vk);
		if (!target_tid)
			return 0;
		target = *target_tid;
		t = thread_find(target);
	}
	if (!t || intid_pending(t, intid) || !vgic_line_rises((void *)t->vcpu_ptr, intid))
		return 0;
	if (src == WAKE_SRC_TIMER && t->timer_ts && tid == target)
		return timer_pending(t, intid);
	return pend_start(t, src, intid);
}

SEC("tp_btf/vgic_update_irq_pending")
int BPF_PROG(wake_pending, unsigned long vcpu_id, __u32 irq, bool level)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct vcpu_id_key vk = { .tgid = id >> 32, .vcpu = vcpu_id };
	__u32 tid = (__u32)id, src;
	struct wake_note *n;

	if (!level)
		return 0;
	if (irq >= GIC_SPI_FIRST && irq < GIC_LPI_FIRST) {
		__s32 target = spi_target(vk.tgid, irq);

		if (target < 0)
			return 0;
		vk.vcpu = target;
	}
	n = note_of(tid);
	if (n && n->vector == irq) {
		src = n->source;
		bpf_map_delete_elem(&wake_notes, &tid);
	} else {
		src = irq < GIC_PPI_FIRST ? WAKE_SRC_IPI : irq < GIC_SPI_FIRST ? WAKE_SRC_LOCAL :
		      irq < GIC_LPI_FIRST ? WAKE_SRC_LINE : WAKE_SRC_MSI;
	}
	return pend_mark(&vk, tid, irq, src);
}

/*
 * An SGI made pending: the guest's ICC_SGI1R_EL1 write traps (kvm:kvm_sys_access sees it, but
 * not its value, nor so which vCPUs it targets), access_gic_sgi() hands it to
 * vgic_v3_dispatch_sgi(), which sets the SGI's pending_latch in each target vCPU's own vgic_irq
 * and queues it with vgic_queue_irq_unlock(), in the sender's thread: there the vgic_irq says
 * its INTID and its vCPU (target_vcpu: a private interrupt's owner). No tracepoint on the way, up
 * to at least 6.12, so a kprobe (fentry is refused on some kernels: src/kernel/hooks.c). Other
 * interrupts pass here too (kvm_vgic_inject_irq(), after vgic_update_irq_pending: counted there),
 * and SGIs the guest or the VMM made pending through GICR_ISPENDR0, counted as IPIs as well.
 * One whose vgic_irq is already queued (irq->vcpu) or disabled is not queued by this call
 * (vgic_target_oracle() finds no vCPU): the call that queues it once enabled counts it.
 */
SEC("kprobe/vgic_queue_irq_unlock")
int BPF_KPROBE(wake_sgi, void *kvm, struct vgic_irq___wake *irq)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct vcpu_id_key vk = { .tgid = id >> 32 };
	struct kvm_vcpu___wake *target;
	__u32 intid = BPF_CORE_READ(irq, intid);

	if (intid >= GIC_PPI_FIRST || !BPF_CORE_READ(irq, pending_latch) ||
	    !BPF_CORE_READ(irq, enabled))
		return 0;
	target = BPF_CORE_READ(irq, target_vcpu);
	if (!target)
		return 0;
	vk.vcpu = wake_vcpu_index(target);
	return pend_mark(&vk, (__u32)id, intid, WAKE_SRC_IPI);
}

char LICENSE[] SEC("license") = "GPL";
