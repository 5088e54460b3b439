/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs and userspace. Plain __u32/__u64 only: this header is
 * compiled both with -target bpf (against vmlinux/) and by the host compiler.
 */
#ifndef VMEXIT_H
#define VMEXIT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Where an exit reason comes from; 1 and 2 are the kernel's KVM_ISA_VMX / KVM_ISA_SVM. */
#define VMEXIT_ISA_VMX		1
#define VMEXIT_ISA_SVM		2
#define VMEXIT_ISA_USER		3	/* KVM_EXIT_* handed to the VMM by kvm_userspace_exit */
#define VMEXIT_ISA_ARM64	4	/* AArch64 host: see VMEXIT_ARM64_EXC below */

/*
 * An arm64 kvm_exit says what kind of exception left the guest (ret: ARM_EXCEPTION_* of the
 * kernel's asm/kvm_asm.h) and, for traps only, the exception class (esr_ec: ESR_ELx.EC,
 * 0..0x3f). The reason of a trap is its EC; every other kind is VMEXIT_ARM64_EXC | ret, a
 * code space no EC reaches: 0x100 IRQ (a host interrupt), 0x101 EL1_SERROR, 0x103 IL
 * (illegal exception return), 0x100 | 0xbadca11 HYP_GONE.
 */
#define VMEXIT_ARM64_EXC	0x100u
#define VMEXIT_ARM64_TRAP	2	/* ARM_EXCEPTION_TRAP: the one kind that has an EC */

/* An arm64 kvm_exit's (ret, esr_ec) as one reason: by the BPF side and by capture imports. */
static inline __u32 vmexit_arm64_reason(__u32 ret, __u32 esr_ec)
{
	return ret == VMEXIT_ARM64_TRAP ? esr_ec : VMEXIT_ARM64_EXC | ret;
}

/*
 * A kvm_userspace_exit with errno < 0 carries no KVM_EXIT_* reason (the run was interrupted
 * or failed); it is accounted as reason VMEXIT_UREASON_ERRNO | -errno.
 */
#define VMEXIT_UREASON_ERRNO	0x80000000u

/*
 * The arguments of the raw kvm_exit tracepoint (its prototype, read from the kernel's BTF by
 * src/kernel/hooks.c), which the fast path reads instead of the classic record.
 */
enum vmexit_exit_shape {
	EXIT_SHAPE_NONE,		/* unknown: no fast path */
	EXIT_SHAPE_VCPU_ISA,		/* x86 since 5.16: (vcpu, isa), the reason in the vCPU */
	EXIT_SHAPE_REASON_VCPU_ISA,	/* x86 before 5.16: (exit_reason, vcpu, isa) */
	EXIT_SHAPE_ARM64,		/* arm64: (ret, esr_ec, vcpu_pc) */
};

/* What the start-up check of the fast path saw (bpf/hook_check.bpf.c, src/kernel/hooks.c). */
struct check_result {
	__u64 matched;		/* exits both read the same (isa, reason, vCPU) */
	__u64 mismatched;
	__u64 unpaired;		/* exits or entries the classic side saw and the fast path not */
	/*
	 * Exits or entries only the fast path saw. Not held against it: a classic tracepoint's
	 * program is skipped while any kprobe/tracepoint BPF program or a bpf() map syscall
	 * (bpf_disable_instrumentation(), preemptible) holds this CPU's bpf_prog_active, which
	 * tp_btf programs do not look at. vmexit's own start-up makes such syscalls.
	 */
	__u64 classic_missed;
	__u64 unreadable;	/* exits whose reason the fast path could not read */
	__u64 entries;		/* entries both saw */
	__u64 seen;		/* exits the classic side saw while armed, judged or not */
	__u64 vector_mismatched; /* --by key on VMX: of mismatched, the interrupt vectors differed */
	__u32 bad_isa;		/* the first mismatch, for the message */
	__u32 bad_raw;
	__u32 bad_classic;
	__u32 __pad;
};

/*
 * Log-linear latency histogram. Values below HIST_EXACT ns get a bucket each; above, every
 * power of two is cut into HIST_SUB buckets, so a bucket is at most 1/8 of its lower bound wide
 * and any percentile read from it is within 12.5 % (6.25 % when the bucket middle is used).
 * The last bucket collects everything from 2^HIST_MAX_POW ns (137 s) up.
 */
#define HIST_SUB_BITS		3
#define HIST_SUB		(1u << HIST_SUB_BITS)
#define HIST_EXACT		(2u * HIST_SUB)
#define HIST_MIN_POW		(HIST_SUB_BITS + 1)	/* log2(HIST_EXACT) */
#define HIST_MAX_POW		37
#define NR_BUCKETS		(HIST_EXACT + (HIST_MAX_POW - HIST_MIN_POW) * HIST_SUB + 1)
/* Array length rounded up to even so that struct cell stays 8-byte sized (mmap stride). */
#define HIST_SLOTS		((NR_BUCKETS + 1) & ~1u)

/*
 * Identity of one statistics cell. A cell belongs to one thread (the vCPU thread that
 * made the exits), so exactly one writer ever touches it; userspace merges cells that
 * share (tgid, vcpu, isa, reason). vcpu is -1 when the kernel did not say (userspace exits
 * before the thread's first kvm_exit): userspace then names it from the thread name.
 */
struct cell_key {
	__u32 tgid;
	__u32 tid;
	__s32 vcpu;
	__u32 isa;
	__u32 reason;
	__u32 ready;		/* set last, when the key above is complete */
	char comm[16];		/* the thread's name when the cell was made ("CPU 3/KVM") */
	/* When the VMM process started (its leader's start_time): a pid reused by a new VMM is
	 * told from the old one by it. */
	__u64 proc_start;
};

/* One key of one exit, and of one key table entry. */
struct key_note {
	__u64 key;
	__u16 kind;		/* enum vmexit_key_kind */
	__u16 dir;		/* enum vmexit_key_dir */
	__u32 __pad;
};

/* The per-CPU exit slot's ways (struct cpu_exit_slot): a power of two. */
#define CPU_SLOT_WAYS 4

struct cell {
	struct cell_key key;
	__u64 started;		/* exits seen (kvm_exit / kvm_userspace_exit) */
	__u64 count;		/* exits completed: matched with the next entry / KVM_RUN */
	__u64 total_ns;		/* sum of completed exits' latency */
	__u64 min_ns;
	__u64 max_ns;
	__u64 iv_min_ns;	/* min/max of the exits completed while iv_epoch was current */
	__u64 iv_max_ns;
	__u32 iv_epoch;
	/*
	 * Set (last) by the kernel when the owner thread has exited: nobody writes the cell any
	 * more, its values are final. Userspace reads them, zeroes the cell and hands its index
	 * back through the free_cells queue, so a host that starts and stops VMs for months
	 * does not run out of cells.
	 */
	__u32 ended;
	/* CLOCK_MONOTONIC ns when this cell's exit in flight began (0: none); after `ended`,
	 * the exit the thread was in when it exited, which never completes. */
	__u64 inflight_ts;
	__u64 ended_ts;		/* when the owner thread exited */
	__u32 thread_next;	/* kernel only: the owner thread's previous cell (a reference) */
	__u32 if_off_runq;	/* --split: if_off_ts began runnable (preempted or woken) */
	/*
	 * --split: total_ns divided by what the thread was doing. blocked: asleep (a halted vCPU,
	 * a VMM waiting on I/O); runq: runnable but preempted; oncpu: the rest, so the three add
	 * up to the total of the exits that completed with the split on. Zero without --split.
	 */
	__u64 oncpu_ns;
	__u64 blocked_ns;
	__u64 runq_ns;
	/*
	 * --split, the exit in flight so far: its blocked and runq time up to the thread's last
	 * context switch, and since when the thread has been off CPU (0: on CPU). Written at the
	 * thread's context switches only, not per exit: they belong to the exit that began at
	 * if_split_ts (written last), and an exit with another inflight_ts has not been off CPU.
	 */
	__u64 if_split_ts;
	__u64 if_blocked_ns;
	__u64 if_runq_ns;
	__u64 if_off_ts;
	/*
	 * stat --stuck (stuck_min_ns): exits that completed after stuck_min_ns or more, and the
	 * start, latency (and --split parts) of the longest of them while stuck_epoch was
	 * current, so that an exit stuck between two samples is listed, not only one still stuck
	 * at a sample. Zero otherwise.
	 */
	__u32 stuck_epoch;
	/*
	 * Kernel only: the owner thread's exit_cell names this cell, so that kvm_exit may begin
	 * its exit here from its CPU's slot without the thread's state (bpf/cpu_exit_slot.bpf.h);
	 * a userspace exit's cell (isa VMEXIT_ISA_USER, never a kernel exit's), its uexit_cell,
	 * for kvm_userspace_exit alike. In what was padding.
	 */
	__u32 exit_named;
	/*
	 * Kernel only, keys: the key of the exit (a kernel exit's, or a userspace exit's in a
	 * userspace exit's cell) a CPU's slot began here, which never touches the thread's state,
	 * when slot_keyed (0: the thread's exit_key is this exit's, as the exit
	 * began through the thread's state, which clears it). Read wherever the thread's exit key
	 * is (cpu_exit_slot.bpf.h exit_key_now()). A flag of its own, not the key's kind: a
	 * slot-begun exit's key may be none until a key event names it (an IO exit's port).
	 */
	__u32 slot_keyed;
	__u32 slot_pad;
	struct key_note slot_key;
	__u64 stuck_done;
	__u64 stuck_ts;
	__u64 stuck_lat_ns;
	__u64 stuck_blocked_ns;
	__u64 stuck_runq_ns;
	__u32 hist[HIST_SLOTS];	/* wraps after 2^32; userspace takes deltas modulo 2^32 */
};

/*
 * The exit in flight on one CPU (bpf/cpu_exit_slot.bpf.h): kvm_exit's thread, cell reference and
 * start. Here so that the slot's tests read what the programs wrote.
 */
struct cpu_exit_slot {
	__u32 tid;
	__u32 ref;
	__u64 start;
	/* The thread that wrote the slot, and its exit's (isa, reason): kvm_exit's slot path. */
	__u64 task;
	__u64 born;
	__u32 isa;
	__u32 reason;
	/*
	 * Keys: the exit's key entry in key_slots + 1; 0: its end needs the thread's state. kref:
	 * the cell kslot is for, which kvm_entry compares with ref. A key event may note the entry
	 * (cpu_slot_keyed()) where it can be preempted, and another thread's kvm_exit write the
	 * slot in the middle: the two are stored as one (kpair), so a pair is always one writer's.
	 */
	union {
		struct {
			__u32 kslot;
			__u32 kref;
		};
		__u64 kpair;
	};
	/*
	 * Keys: a key event through the thread's state noted kslot (cpu_slot_keyed()): kvm_entry,
	 * ending the exit here, puts (cell, key) -> kslot in a way for the next such event
	 * (cpu_slot_key()). Any other slot-ended exit began from a way that holds it already.
	 */
	__u32 kfill;
	__u32 kpad;
	/*
	 * Keys: the slot's thread's key entries lately charged from this CPU, (cell, final key) ->
	 * kslot, so that kvm_exit begins an exit of any of them from the slot, alternating keys
	 * too, and kvm_userspace_exit one of its userspace exit's cell; a way of (ref + key +
	 * kind) mod CPU_SLOT_WAYS. Cleared when another thread writes
	 * the slot: they are only ever the writer's (cpu_exit_slot.bpf.h).
	 */
	struct cpu_slot_way {
		__u64 key;
		__u32 ref;
		__u16 kind;
		__u16 dir;
		__u32 kslot;
		__u32 pad1;
	} way[CPU_SLOT_WAYS];
	/*
	 * The userspace exit in flight: kvm_userspace_exit's thread (as task and born above, but
	 * its own: a kernel exit of another thread on this CPU must not make it this one's),
	 * cell reference, reason and start; the next KVM_RUN on this CPU ends it from here.
	 */
	__u64 utask;
	__u64 uborn;
	__u64 ustart;
	/*
	 * Keys: ukslot, the userspace exit's key entry in key_slots + 1 (0: its KVM_RUN reads the
	 * thread's state), as kslot for the kernel exit; stored with uref as one (upair) where a
	 * preempted writer could otherwise leave its entry beside another thread's cell.
	 */
	union {
		struct {
			__u32 uref;
			__u32 ukslot;
		};
		__u64 upair;
	};
	__u32 ureason;
	/*
	 * run_keys (bpf/run_key.bpf.h): the key ukslot is the entry of, in cell uref, written with
	 * the thread's name around it as the rest of the half: an exit of that key begun here is
	 * charged here by its KVM_RUN.
	 */
	__u16 ukind;
	__u16 udir;
	__u64 ukey;
	/*
	 * run_keys: the key of the exit to the VMM kvm_run describes at the end of a KVM_RUN
	 * (kvm_fpu's put), of reason rreason (RUN_KEY_UNREAD: none read), for the
	 * kvm_userspace_exit that follows on this CPU; named (rtask, rborn) as the user half,
	 * stamped with the thread's context switches (rswitches), cleared by the taker.
	 */
	__u64 rtask;
	__u64 rborn;
	__u32 rreason;
	__u16 rkind;
	__u16 rdir;
	__u64 rkey;
	__u64 rswitches;
	__u64 upad[2];
};
/* Whole cache lines: CPUs write theirs at every exit, none sharing another's. */
_Static_assert(sizeof(struct cpu_exit_slot) % 64 == 0, "struct cpu_exit_slot: whole 64-byte lines");

/*
 * A VMM's command line as the kernel saw it when one of its threads first exited, NUL-separated
 * like /proc/PID/cmdline: the guest's name outlives a VMM that quits before userspace looks.
 */
#define PROC_ARGS_MAX		512

struct proc_args {
	__u64 start;		/* the process's start time: cell_key.proc_start */
	__u32 len;
	char args[PROC_ARGS_MAX];
};

/* Why an exit could not be recorded; kernel counters, reported by every front end. */
enum vmexit_lost {
	LOST_CELLS_FULL,	/* no free statistics cell (raise --max-cells) */
	LOST_THREADS_FULL,	/* no per-thread state (thread hash full) */
	LOST_UNMATCHED_ENTRY,	/* kvm_entry with no exit in flight (first run, or attach mid-exit) */
	LOST_OVERWRITTEN_EXIT,	/* kvm_exit while the thread's previous exit was still in flight */
	LOST_UNMATCHED_RUN,	/* user exit overwritten before the next KVM_RUN */
	LOST_RINGBUF_FULL,	/* stream record dropped: ring buffer full */
	/*
	 * Events the kernel did not hand to our programs: their recursion_misses (bpf_prog_info,
	 * 5.12+). A classic tracepoint's program is skipped while another kprobe/tracepoint
	 * program runs on that CPU, or while a task preempted inside a bpf() map syscall holds
	 * its bpf_prog_active. Userspace fills it in; the kernel side never counts it.
	 */
	LOST_BPF_SKIPPED,
	/*
	 * --stacks: an off-CPU period whose stack was not kept. Not exits: the exit itself is
	 * counted as usual. STACK_COLLISION: another stack holds its slot of the stack map
	 * (bpf_get_stackid -EEXIST), or the stack could not be read; STACKS_FULL: the stack map or
	 * the table of (guest, reason, stack) is full (raise --max-stacks).
	 */
	LOST_STACK_COLLISION,
	LOST_STACKS_FULL,
	LOST_KEYS_FULL,		/* exits charged to a key's `other` row: key table full (--max-keys) */
	/*
	 * --by key on the VMX fast path: an external interrupt or NMI exit whose interruption
	 * information KVM had not read when the exit ended (bpf/vmx_vector.bpf.h); charged to
	 * `none`, never to a vector read from another exit.
	 */
	LOST_KEY_VECTOR,
	/*
	 * --by key from kvm_run (bpf/run_key.bpf.h): an IO, MMIO, hypercall or MSR exit to the VMM
	 * whose KVM_RUN found no vCPU to read kvm_run from; charged to `none`.
	 */
	LOST_KEY_RUN,
	NR_LOST,
};

/*
 * Keys (--by key, --by rip): what an exit was about, noted while it is in flight (kvm_pio,
 * kvm_mmio, kvm_msr, ... or the exit's guest RIP) and charged with its latency, at completion,
 * to a bounded table of its own (bpf/keys.bpf.h). Record files keep these numbers: never
 * renumber.
 */
enum vmexit_key_kind {
	KEY_NONE,		/* an exit that no key event described */
	KEY_PORT,		/* x86 IO port */
	KEY_MMIO,		/* guest physical address of an MMIO access */
	KEY_GPA,		/* guest physical page of a stage-2 / EPT / NPT fault */
	KEY_MSR,
	KEY_CPUID,		/* leaf */
	KEY_HYPERCALL,		/* KVM hypercall number, Hyper-V call code (dir "hv"), or arm64
				 * SMCCC function id (dir "smccc") */
	KEY_VECTOR,
	KEY_RIP,		/* the guest RIP of the exit (--by rip) */
	KEY_OTHER,		/* the key table was full: counted under lost as keys_full */
	NR_KEY_KINDS,
};

enum vmexit_key_dir { KEY_DIR_NONE, KEY_DIR_IN, KEY_DIR_OUT, KEY_DIR_READ, KEY_DIR_WRITE,
		      KEY_DIR_HV, KEY_DIR_SMCCC, NR_KEY_DIRS };

/* What --by asks the kernel to key exits by (key_mode). */
enum vmexit_key_mode { KEY_MODE_OFF, KEY_MODE_DEVICE, KEY_MODE_RIP };

/*
 * A key table entry: the cell (the thread and reason) its exits were charged to, and the
 * thread's id, which tells an entry of a cell's earlier owner (the cell was recycled).
 */
struct key_id {
	__u32 cell;		/* cell reference (index + 1) */
	__u32 tid;
	struct key_note k;
};

/* Its statistics, with the cell's identity copied in: readable after the cell is reused. */
struct key_stats {
	struct cell_key id;
	__u64 count;		/* completed exits: in min, max and the histogram */
	__u64 total_ns;		/* theirs, and the age of the left ones at their thread's end */
	__u64 min_ns;
	__u64 max_ns;
	__u64 left;		/* exits their thread left in flight: counted as a cell's started */
	__u32 hist[HIST_SLOTS];
};

/* Ring-buffer / record-file event. Fixed size; every field little-endian host order. */
enum vmexit_event_type {
	VMEXIT_EV_EXIT = 1,	/* a kvm_exit completed by the same thread's kvm_entry */
	VMEXIT_EV_USER_EXIT = 2,/* a kvm_userspace_exit completed by the next KVM_RUN */
	VMEXIT_EV_TSC_OFFSET = 3,/* kvm_write_tsc_offset: info1 = previous, info2 = next offset */
	VMEXIT_EV_KVM_EVENT = 4,/* another kvm tracepoint (--kvm-events): reason = enum below */
	/*
	 * stream --wake (bpf/wake.bpf.c): an interrupt delivered to a vCPU, sent at the kvm_entry
	 * that delivered it. ts_ns: when it became pending; latency_ns: from then to that entry;
	 * reason: its source (enum wake_source, include/wake.h); intr_info: its vector; the
	 * parts (enum wake_part), summing exactly to latency_ns: rip guest, info1 exit, info2
	 * polled, blocked_ns slept, runq_ns runq, oncpu_ns oncpu. isa 0; always the
	 * VMEXIT_EVENT_SPLIT_LEN bytes.
	 */
	VMEXIT_EV_WAKE = 5,
	/*
	 * stream --wake (bpf/wake.bpf.c): an interrupt KVM posted (APICv/AVIC) to a vCPU in guest
	 * mode, taken with no exit: sent when posted (ts_ns), latency_ns and the parts 0;
	 * reason: its source, intr_info: its vector, as EV_WAKE's; tid: the thread that posted
	 * it (the vCPU is vcpu). A type of its own, not a flag on EV_WAKE: a reader that does not
	 * know it never counts it as a delivery of 0 ns.
	 */
	VMEXIT_EV_WAKE_POSTED = 6,
	/*
	 * stream/record --wake: the HLT anatomy, each event what bpf/wake.bpf.c adds to a halted
	 * exit's cell (struct hlt_cell), so report rebuilds the cells exactly. The parts (enum
	 * hlt_part, at hlt_event_part() in include/wake.h) sum exactly to latency_ns; isa 0;
	 * VMEXIT_EVENT_SPLIT_LEN bytes.
	 * EV_HALT, one halt (kvm_vcpu_wakeup): ts_ns its start, latency_ns KVM's halt time, parts
	 * poll, sleep, runq and other (on CPU to the wake-up's tracepoint); error_code
	 * VMEXIT_HALT_WAITED | VMEXIT_HALT_VALID.
	 * EV_HLT, one halted exit, sent at its kvm_entry: ts_ns its kvm_exit, latency_ns to the
	 * entry, parts poll, sleep, runq (its halts') and other; intr_info its halts.
	 */
	VMEXIT_EV_HALT = 7,
	VMEXIT_EV_HLT = 8,
	/*
	 * stream --wake: an interrupt made pending (kvm_apic_accept_irq) for a vCPU vmexit never
	 * saw enter guest mode (halted since before vmexit started, or a KVM that traces no
	 * kvm_entry at all, as kvm_pvm): no entry to time it to, so counted, not timed. Sent when
	 * made pending (ts_ns), latency_ns and the parts 0; vcpu the target's (the APIC ID KVM
	 * names), tid the thread that made it pending, reason its source as far as known (enum
	 * wake_source: KVM's note, else UNKNOWN), intr_info its vector. A type of its own, as
	 * EV_WAKE_POSTED.
	 */
	VMEXIT_EV_WAKE_UNTIMED = 9,
	/*
	 * Flag on EV_EXIT / EV_USER_EXIT: the exit never completed (its thread exited, or the
	 * session ended first); latency_ns is its age at that moment.
	 */
	VMEXIT_EV_IN_FLIGHT = 0x100,
};

/*
 * EV_USER_EXIT's error_code: its rip is the guest RIP of the kvm_exit in flight that led to
 * it (0 and no flag where no kvm_exit was in flight, e.g. on hosts where it does not fire).
 */
#define VMEXIT_UEXIT_RIP	1u

/* EV_HALT's error_code: kvm_vcpu_wakeup's waited (the thread slept) and valid. */
#define VMEXIT_HALT_WAITED	1u
#define VMEXIT_HALT_VALID	2u

/* An event's type without the VMEXIT_EV_IN_FLIGHT flag. */
#define VMEXIT_EV_TYPE(type)	((type) & ~VMEXIT_EV_IN_FLIGHT)

/*
 * Which kvm tracepoint a VMEXIT_EV_KVM_EVENT came from (its reason; isa is 0). Names, in
 * userspace only: kvm_event_name() in src/model/reasons.c, the tracepoint being "kvm_" + name.
 * These events happen at an instant (latency_ns = 0) and their fields fill the slots below;
 * 32-bit values are zero-extended. Layout per event:
 *
 *            info1          info2                  rip                    intr_info  error_code
 * pio        port           val                    count                  rw (1 out) size
 * mmio       gpa            val                    0                      type (*)   len
 * msr        ecx (index)    data                   0                      write      exception
 * cpuid      function       ebx << 32 | eax        edx << 32 | ecx        index      found |
 *                                                                                    max_basic << 1
 * inj_virq   vector         0                      0                      soft       reinjected
 * page_fault fault_address  error_code (64 bits)   guest rip (6.1+, or 0) 0          error_code
 *                                                                                    (low 32)
 * msi_set_irq     address   data                   0                      0          0
 * apic_accept_irq apicid    vec                    0                      dm         tm
 * halt_poll_ns    new       old                    0                      grow       0
 *
 * (*) mmio type: 0 unsatisfied read, 1 read, 2 write (KVM_TRACE_MMIO_*). vcpu is the vCPU
 * the thread's last kvm_exit named (page_fault since 6.1 and halt_poll_ns carry their own),
 * else -1. msi_set_irq and apic_accept_irq fire on the thread that raises the interrupt (the
 * VMM, a sending vCPU, a kernel worker for irqfd), not on the vCPU that takes it.
 */
/*
 * The one list of these events: X(ID, id, name) gives VMEXIT_KVM_<ID> = id (record files keep
 * ids: never renumber), the tracepoint kvm:kvm_<name>, its BPF program kvm_<name> and decoder
 * kvm_<name>_decode() (bpf/), and the name every output and option uses. Adding one here and
 * its decoder and fields (src/model/reasons.c) is all it takes.
 */
#define VMEXIT_KVM_EVENTS(X)		\
	X(PIO, 1, pio)			\
	X(MMIO, 2, mmio)		\
	X(MSR, 3, msr)			\
	X(CPUID, 4, cpuid)		\
	X(INJ_VIRQ, 5, inj_virq)	\
	X(PAGE_FAULT, 6, page_fault)	\
	X(MSI_SET_IRQ, 7, msi_set_irq)	\
	X(APIC_ACCEPT_IRQ, 8, apic_accept_irq)	\
	X(HALT_POLL_NS, 9, halt_poll_ns)

enum vmexit_kvm_event {
#define VMEXIT_KVM_ENUM(ID, id, name) VMEXIT_KVM_##ID = id,
	VMEXIT_KVM_EVENTS(VMEXIT_KVM_ENUM)
#undef VMEXIT_KVM_ENUM
	VMEXIT_KVM_NR,		/* one past the last */
};

struct vmexit_event {
	__u64 ts_ns;		/* CLOCK_MONOTONIC ns when the guest left */
	__u64 latency_ns;	/* time until the thread's next entry (EV_EXIT) / KVM_RUN (EV_USER_EXIT) */
	__u64 rip;
	__u64 info1;		/* EV_USER_EXIT: errno of the run (0 on success) */
	__u64 info2;
	__u32 intr_info;
	__u32 error_code;
	__u32 tgid;
	__u32 tid;
	__s32 vcpu;		/* -1 when unknown */
	__u32 reason;
	__u32 cpu;
	__u16 isa;		/* VMEXIT_ISA_* */
	__u16 type;		/* enum vmexit_event_type */
	/*
	 * --split (EV_EXIT, EV_USER_EXIT): latency_ns as on CPU + blocked + runq, exactly. Without
	 * --split the kernel sends only the VMEXIT_EVENT_BASE_LEN bytes above.
	 */
	__u64 oncpu_ns;
	__u64 blocked_ns;
	__u64 runq_ns;
	/*
	 * stream/record --keys (EV_EXIT, EV_USER_EXIT): what the exit was about, as stat --by
	 * key charges it. With keys the kernel sends the whole record, split fields 0 without
	 * --split.
	 */
	struct key_note key;
};

#define VMEXIT_EVENT_BASE_LEN	72	/* struct vmexit_event up to type */
#define VMEXIT_EVENT_SPLIT_LEN	96	/* ... and the --split fields */

/* The bytes of each record the kernel sends: only the parts asked for. */
static inline __u32 vmexit_event_len(int split, int keys)
{
	return keys ? sizeof(struct vmexit_event) : split ? VMEXIT_EVENT_SPLIT_LEN :
	       VMEXIT_EVENT_BASE_LEN;
}

/*
 * --stacks: off-CPU time of vCPU threads during exits, by the kernel stack they left the CPU
 * with. The key's reason is the exit the thread was in: its userspace exit when one is in
 * flight (the VMM at work), else its guest exit.
 */
#define STACK_DEPTH_MAX		64	/* frames kept per stack: deeper ones are cut */

struct stack_key {
	__u32 tgid;
	__u32 isa;
	__u32 reason;
	__s32 stack_id;		/* in the stack map */
	__u64 proc_start;	/* cell_key.proc_start: a reused pid is another guest */
};

struct stack_val {
	__u64 ns;		/* off-CPU time, blocked and runq */
	__u64 count;		/* off-CPU periods */
};

/*
 * The kernel wakes the stream reader once 1/64 of the ring is pending (handlers.bpf.h,
 * stream_wake_shift): a batch of thousands of records in the default 16 MB, woken long before
 * the ring fills. The rest waits for the reader's clock (src/live/capture_clock.h).
 */
static inline __u32 stream_wake_shift_of(__u64 ring_bytes)
{
	return (__u32)__builtin_ctzll(ring_bytes) - 6;
}

#endif /* VMEXIT_H */
