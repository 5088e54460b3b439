// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit-guest-arm64: the arm64 twin of vmexit-guest, a tiny VMM whose guests leave guest mode
 * an exactly known number of times, so that tests can compare what vmexit saw with the truth.
 *
 * Usage:
 *   vmexit-guest-arm64 [--vcpus N] [--mmio N] [--touch N] [--hvc N] [--wfi N] [--sysreg N]
 *                      [--timer N] [--irq N] [--ipi N] [--name NAME] [--json]
 *   vmexit-guest-arm64 --symbols FILE
 *
 * One VM per process, as with QEMU: the process re-execs itself (same pid) with
 * "-name guest=NAME,debug-threads=on" first on its command line, so tools that name VMs from
 * /proc/PID/cmdline see what they would see with QEMU, and every vCPU is a thread named
 * "CPU <i>/KVM". No in-kernel interrupt controller (the guest never takes an interrupt) unless
 * --timer asks for one (below).
 *
 * Every vCPU runs at EL1 with the MMU off from one 64 KiB memslot, its counts in x19-x22 and
 * x24 (set by the VMM, so the guest never touches that RAM with data accesses), and does, in
 * this order:
 *   --mmio N    strb to GPA 0x10000000 (no memslot)  kvm_exit DABT_LOW  -> KVM_EXIT_MMIO
 *   --touch N   strb to N pages of its own           kvm_exit DABT_LOW  (stage-2 faults to RAM)
 *   --hvc N     hvc #0, x0 = PSCI_VERSION             kvm_exit HVC64     (PSCI, in the kernel)
 *   --wfi N     wfi                                   kvm_exit WFx       (blocks; see below)
 *   --sysreg N  mrs ID_AA64PFR0_EL1 (HCR_EL2.TID3)    kvm_exit SYS64     (emulated in the kernel)
 *   --timer N   N EL1 virtual timer interrupts (CNTV, PPI 27) through an in-kernel vGICv3, each
 *               armed 1 ms ahead and waited for with wfi (see below)
 *   --irq N     N SPIs the VMM raises with KVM_IRQ_LINE while the vCPU waits in wfi (see below)
 *   --ipi N     vCPU 0 sends N SGIs to vCPU 1 (ICC_SGI1R_EL1) while vCPU 1 waits in wfi (below)
 * then one strb to the done address 0x10000008 (one more DABT_LOW and KVM_EXIT_MMIO), after which
 * the VMM stops running it. Without any kind option the mix is --mmio 1000.
 *
 * --touch: a memslot of its own at GPA 0x50000000 that the VMM never touches (no transparent
 * huge pages), in host pages (4 KiB on Debian's arm64 kernels): vCPU v writes one byte at the
 * start of pages v * N to v * N + N - 1 of it, each a first touch, so one stage-2 translation
 * fault (kvm:kvm_guest_fault, ipa = the page) handled in the kernel. vcpus x N <= 512.
 *
 * --symbols FILE writes the guest code's labels as a System.map at the guest addresses they
 * run at (guest_start, and each kind's exit instruction: guest_mmio, guest_touch, guest_hvc,
 * guest_wfi, guest_sysreg, guest_timer, guest_irq, guest_ipi_wait, guest_ipi, guest_done) and
 * exits without running a VM; the layout is the same for every mix. kvm_exit's vcpu_pc is the
 * exit's instruction, but for HVC64: the instruction after the hvc (ELR_EL2 of an HVC is its
 * return address), guest_hvc+0x4.
 *
 * Exact counts per vCPU:
 *   kvm_exit DABT_LOW = mmio + touch + 1   HVC64 = hvc   WFx = wfi   SYS64 = sysreg
 *   kvm_userspace_exit = KVM_RUN calls = "runs"; by reason MMIO = mmio + 1, INTR = "exits.INTR"
 * plus, not exact, IABT_LOW for the first fetch from the code page (once per VM, or once per
 * vCPU when they race for it) and IRQ for host interrupts. WFx is one less for each WFI that
 * meets a host interrupt already pending (see below): that one is an IRQ exit at the next pc.
 *
 * --timer: the VMM creates a vGICv3 (KVM_DEV_TYPE_ARM_VGIC_V3, distributor at GPA 0x8000000,
 * redistributors from 0x80a0000), enables group 1 and PPI 27 in it through the device's register
 * attributes (so the guest makes no GIC MMIO exit), and the guest, its interrupts masked (PSTATE.I,
 * as KVM resets it: no vector table needed, wfi still wakes), opens its CPU interface (ICC_PMR_EL1,
 * ICC_IGRPEN1_EL1), then N times: CNTV_CVAL = CNTVCT + 1 ms, CNTV_CTL = enable; wfi until
 * ICC_IAR1_EL1 acknowledges INTID 27 (another wake-up reads 1023 and waits again); CNTV_CTL = 0
 * (the line drops); ICC_EOIR1_EL1. Its tally of acknowledged timer interrupts (x28) is the JSON's
 * "timer" per vCPU, and must be N. Each is one kvm:vgic_update_irq_pending (irq 27, level 1) that
 * makes it pending; the wfi traps (kvm_exit WFx) unless the interrupt is pending already. KVM
 * wakes the vCPU itself (no kicks), and no exit reaches the VMM but the done store.
 *
 * WFI: with nothing pending KVM blocks the vCPU thread in the kernel until something wakes it.
 * With no in-kernel GIC the guest's timer cannot (Linux 6.1 wakes such a vCPU for a signal, an
 * interrupt line raised by KVM_IRQ_LINE, or WFIT only), and a pending interrupt would turn WFI
 * into a no-op that does not trap at all (QEMU, and allowed by the architecture; a host interrupt
 * pending for EL2 as the guest reaches its wfi does that too, now and then). So while the
 * guest has WFIs to do, a per-thread timer sends its vCPU thread SIGUSR1 every millisecond: the
 * blocked WFI ends and KVM_RUN returns EINTR (KVM_EXIT_INTR). A signal that lands while the
 * guest runs elsewhere costs an IRQ exit and an EINTR too. Every KVM_RUN result, EINTR
 * included, is tallied, and the VMM fails (exit 1) on any exit it did not ask for.
 *
 * --irq: the same vGICv3 (created for --timer or --irq), in which vCPU v's own SPI, INTID
 * IRQ_INTID + v, is made group 1, edge-triggered, routed to v (GICD_IROUTER) and enabled, again
 * through the device's register attributes: no GIC MMIO exit. The guest opens its CPU interface,
 * computes its INTID from MPIDR_EL1 and stores 0 to 0x10000010 (an 8-byte KVM_EXIT_MMIO: "ready"),
 * then N times: wfi until ICC_IAR1_EL1 acknowledges its INTID; CNTVCT_EL0 read; ICC_EOIR1_EL1;
 * tally + 1 (x30); that CNTVCT stored to 0x10000010 (one more KVM_EXIT_MMIO: the handler's time,
 * and ready for the next). So MMIO = mmio + 1 + (irq + 1) per vCPU. An injector thread per vCPU
 * waits for each "ready", then until the vCPU thread sleeps in KVM's halt (state S and wchan
 * kvm_vcpu_block in /proc/self/task/TID: blocked in the wfi), reads the host's CNTVCT_EL0 and raises the SPI (KVM_IRQ_LINE, irq_type
 * KVM_ARM_IRQ_TYPE_SPI, level 1: an edge, one kvm:vgic_update_irq_pending with vcpu_id 0, the
 * index KVM_IRQ_LINE gives every SPI). The guest's and the host's counters differ by the VM's
 * offset, read once before the first run (KVM_REG_ARM_TIMER_CNT between two host reads), so each
 * delivery's latency is at most "irq_bound_ns": the handler's CNTVCT plus the largest offset the
 * two reads allow, minus the inject's, plus one tick for the reads' rounding, in ns.
 *
 * --ipi: needs --vcpus 2 or more; only vCPUs 0 and 1 take part. The same vGICv3, with SGI
 * IPI_INTID made group 1 and enabled in every vCPU's redistributor. vCPU 1 (the receiver; its count
 * in TPIDR_EL0, set by the VMM) opens its CPU interface, stores 0 to 0x10000018 ("ready", an
 * 8-byte KVM_EXIT_MMIO), then N times: wfi until ICC_IAR1_EL1 acknowledges IPI_INTID
 * (guest_ipi_wait); ICC_EOIR1_EL1; tally + 1 (x15); the same store (taken, ready for the next).
 * vCPU 0 (the sender; its count in TPIDR_EL1, ICC_SGI1R_EL1's value naming vCPU 1 by its MPIDR
 * in TPIDRRO_EL0) N times: stores 0 to 0x10000020 ("may I", an 8-byte KVM_EXIT_MMIO), which its
 * VMM thread holds until vCPU 1 has stored its next "ready" and its thread sleeps in KVM's halt
 * (as --irq's injector: 'H' below), then writes ICC_SGI1R_EL1 (guest_ipi: a SYS64 trap, one
 * kvm:kvm_sys_access write of it), tally + 1 (x15). So per --ipi: vCPU 0 has MMIO + ipi and
 * SYS64 + ipi, vCPU 1 MMIO + ipi + 1. As --irq's, a sender seen asleep elsewhere for ~1 s (or no
 * /proc) is counted "ipi_unsure" and sends all the same.
 *
 * Output: one summary line per VM on stderr; with --json one line on stdout:
 *   {"pid":P,"name":"NAME","mix":{"mmio":n,"hvc":n,"wfi":n,"sysreg":n},
 *    "vcpus":[{"vcpu":0,"tid":T,"runs":N,"ns":D,"exits":{"MMIO":n,"INTR":n}}]}
 * with --timer each vCPU also has "timer":n, the interrupts its guest acknowledged; with --irq,
 * "irq":n (its SPIs acknowledged), "irq_intid":I, "irq_bound_ns":[...] (per inject, above) and
 * "irq_unsure":n (raised without the thread seen in KVM's halt: no /proc, or asleep elsewhere);
 * with --ipi, vCPU 0 "ipi_sent":n (its SGI writes, x15) and "ipi_unsure":n, vCPU 1 "ipi":n (the
 * SGIs it acknowledged, x15), both "ipi_intid":I.
 * "exits" counts KVM_RUN results by run->exit_reason (what kvm:kvm_userspace_exit records),
 * EINTR returns included; "ns" is the wall time of the vCPU's run.
 *
 * Exit status: 0 success, 1 any KVM/system failure, 2 bad arguments.
 */
#ifndef __aarch64__
#error "vmexit-guest-arm64 runs arm64 guests: build it with make ARCH=arm64"
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROG		"vmexit-guest-arm64"

#define RAM_GPA		0x40000000ull
#define RAM_SIZE	0x10000ull
#define MMIO_GPA	0x10000000ull
#define DONE_GPA	(MMIO_GPA + 8)
#define TOUCH_GPA	0x50000000ull
#define MAX_TOUCH	512

#define MAX_VCPUS	64
#define MAX_NAME	64
#define MAX_COUNT	1000000000ull
#define NR_EXIT_NAMES	40
#define WFI_KICK_NS	1000000
/* --timer's vGICv3 (QEMU virt's layout), the EL1 virtual timer's PPI, its period. */
#define GICD_GPA	0x08000000ull
#define GICR_GPA	0x080a0000ull
#define TIMER_INTID	27
#define TIMER_PER_S	1000		/* 1 ms apart */
#define STR(x)		#x
#define XSTR(x)		STR(x)
#define GICD_CTLR	0x0000
#define GICD_CTLR_ENABLE_G1	(1u << 1)
#define GICR_SGI_IGROUPR0	0x10080		/* from the redistributor's base: its SGI frame */
#define GICR_SGI_ISENABLER0	0x10100
#define GICD_IGROUPR(i)		(0x0080 + 4 * ((i) / 32))
#define GICD_ISENABLER(i)	(0x0100 + 4 * ((i) / 32))
#define GICD_ICFGR(i)		(0x0c00 + 4 * ((i) / 16))
#define GICD_IROUTER(i)		(0x6000 + 8 * (i))
/* --irq: vCPU v's SPI is IRQ_INTID + v (KVM's default 224 SPIs reach INTID 255); its store. */
#define IRQ_INTID	48
#define IRQ_GPA		(MMIO_GPA + 16)
#define MAX_IRQ		100000ull
#define IRQ_POLL_NS	20000	/* the injector's look at the vCPU thread's state */
#define IRQ_SLEEP_TRIES	50000	/* looks at a thread asleep outside KVM's halt, ~1 s */
/* --ipi: the SGI vCPU 0 sends vCPU 1; the receiver's "ready" and the sender's "may I" stores. */
#define IPI_INTID	1
#define IPI_READY_GPA	(MMIO_GPA + 24)
#define IPI_ASK_GPA	(MMIO_GPA + 32)
#define SYS_TPIDR_EL0	ARM64_SYS_REG(3, 3, 13, 0, 2)
#define SYS_TPIDRRO_EL0	ARM64_SYS_REG(3, 3, 13, 0, 3)
#define SYS_TPIDR_EL1	ARM64_SYS_REG(3, 0, 13, 0, 4)

enum kind { K_MMIO, K_HVC, K_WFI, K_SYSREG, K_TOUCH, K_TIMER, K_IRQ, K_IPI, NR_KINDS };

static const char *const kind_opt[NR_KINDS] = { "mmio", "hvc", "wfi", "sysreg", "touch",
						  "timer", "irq", "ipi" };
/* The register that holds each kind's count (see guest_code); -1: --ipi's, per role (setup_ipi). */
static const int kind_reg[NR_KINDS] = { 19, 20, 21, 22, 24, 27, 29, -1 };

/* The labels of guest_code that --symbols writes: guest_<name>, at label_guest_<name>. */
#define GUEST_LABELS(X) X(start) X(mmio) X(touch) X(hvc) X(wfi) X(sysreg) X(timer) X(irq) \
	X(ipi_wait) X(ipi) X(done)
#define GUEST_LABEL_DECL(name) extern const uint32_t label_guest_##name[];
GUEST_LABELS(GUEST_LABEL_DECL)
#undef GUEST_LABEL_DECL

/*
 * The guest. x19-x22, x24 and x27 hold the counts, x23 the MMIO base, x25 the vCPU's first --touch
 * page and x26 the page size, x28 --timer's tally of timer interrupts (x18 its period, in the
 * counter's ticks, from CNTFRQ_EL0), x29 --irq's count, x30 its tally and x17 its INTID; hvc
 * may clobber x0-x17 (SMCCC), so nothing the loops need lives there: --ipi, last, keeps its
 * counts in system registers the VMM sets (TPIDR_EL0/EL1, TPIDRRO_EL0) and works in x15-x16.
 * Each loop is skipped when its count is 0. The label_guest_* are --symbols' labels.
 */
extern const uint32_t guest_code[], guest_code_end[];
__asm__(".pushsection .rodata\n"
	".balign 4\n"
	/* global: a local label would leave the C references to unrelocated GOT slots */
	".global guest_code, guest_code_end, label_guest_start, label_guest_mmio\n"
	".global label_guest_touch, label_guest_hvc, label_guest_wfi, label_guest_sysreg\n"
	".global label_guest_timer, label_guest_irq, label_guest_ipi_wait, label_guest_ipi\n"
	".global label_guest_done\n"
	"guest_code:\n"
	"label_guest_start:\n"
	"	cbz	x19, 2f\n"
	"1:\n"
	"label_guest_mmio:\n"
	"	strb	w0, [x23]\n"			/* MMIO: stage-2 data abort */
	"	subs	x19, x19, #1\n"
	"	b.ne	1b\n"
	"2:	cbz	x24, 12f\n"
	"11:\n"
	"label_guest_touch:\n"
	"	strb	w0, [x25]\n"			/* RAM, first touch: stage-2 fault */
	"	add	x25, x25, x26\n"
	"	subs	x24, x24, #1\n"
	"	b.ne	11b\n"
	"12:	cbz	x20, 4f\n"
	"3:	movz	x0, #0x8400, lsl #16\n"		/* PSCI_VERSION, 0x84000000 */
	"label_guest_hvc:\n"
	"	hvc	#0\n"
	"	subs	x20, x20, #1\n"
	"	b.ne	3b\n"
	"4:	cbz	x21, 6f\n"
	"5:\n"
	"label_guest_wfi:\n"
	"	wfi\n"
	"	subs	x21, x21, #1\n"
	"	b.ne	5b\n"
	"6:	cbz	x22, 8f\n"
	"7:\n"
	"label_guest_sysreg:\n"
	"	mrs	x0, id_aa64pfr0_el1\n"		/* ID register: TID3 trap */
	"	subs	x22, x22, #1\n"
	"	b.ne	7b\n"
	"8:	cbz	x27, 15f\n"
	"	mov	x0, #0xff\n"
	"	msr	icc_pmr_el1, x0\n"		/* every priority */
	"	mov	x0, #1\n"
	"	msr	icc_igrpen1_el1, x0\n"		/* group 1 on */
	"	mrs	x18, cntfrq_el0\n"
	"	mov	x0, #" XSTR(TIMER_PER_S) "\n"
	"	udiv	x18, x18, x0\n"
	"	isb\n"
	"13:	mrs	x0, cntvct_el0\n"
	"	add	x0, x0, x18\n"
	"	msr	cntv_cval_el0, x0\n"
	"	mov	x0, #1\n"
	"	msr	cntv_ctl_el0, x0\n"		/* enabled, not masked */
	"	isb\n"
	"14:\n"
	"label_guest_timer:\n"
	"	wfi\n"
	"	mrs	x0, icc_iar1_el1\n"		/* acknowledge */
	"	cmp	x0, #" XSTR(TIMER_INTID) "\n"
	"	b.ne	14b\n"				/* 1023: nothing yet */
	"	msr	cntv_ctl_el0, xzr\n"		/* the line drops */
	"	msr	icc_eoir1_el1, x0\n"
	"	isb\n"
	"	add	x28, x28, #1\n"
	"	subs	x27, x27, #1\n"
	"	b.ne	13b\n"
	"15:	cbz	x29, 18f\n"
	"	mov	x0, #0xff\n"
	"	msr	icc_pmr_el1, x0\n"		/* every priority */
	"	mov	x0, #1\n"
	"	msr	icc_igrpen1_el1, x0\n"		/* group 1 on */
	"	mrs	x0, mpidr_el1\n"		/* INTID = IRQ_INTID + Aff0 + 16 x Aff1 */
	"	and	x1, x0, #0xff\n"
	"	ubfx	x2, x0, #8, #8\n"
	"	add	x1, x1, x2, lsl #4\n"
	"	add	x17, x1, #" XSTR(IRQ_INTID) "\n"
	"	isb\n"
	"	str	xzr, [x23, #16]\n"		/* ready: MMIO exit */
	"16:\n"
	"label_guest_irq:\n"
	"	wfi\n"
	"	mrs	x0, icc_iar1_el1\n"		/* acknowledge */
	"	cmp	x0, x17\n"
	"	b.ne	16b\n"				/* 1023: nothing yet */
	"	isb\n"
	"	mrs	x1, cntvct_el0\n"		/* the handler's time */
	"	msr	icc_eoir1_el1, x0\n"
	"	isb\n"
	"	add	x30, x30, #1\n"
	"	str	x1, [x23, #16]\n"		/* its time, ready for the next: MMIO exit */
	"	subs	x29, x29, #1\n"
	"	b.ne	16b\n"
	"18:	mrs	x16, tpidr_el0\n"		/* --ipi's receiver: its count */
	"	cbz	x16, 20f\n"
	"	mov	x15, #0\n"
	"	mov	x0, #0xff\n"
	"	msr	icc_pmr_el1, x0\n"		/* every priority */
	"	mov	x0, #1\n"
	"	msr	icc_igrpen1_el1, x0\n"		/* group 1 on */
	"	isb\n"
	"	str	xzr, [x23, #24]\n"		/* ready: MMIO exit */
	"19:\n"
	"label_guest_ipi_wait:\n"
	"	wfi\n"
	"	mrs	x0, icc_iar1_el1\n"		/* acknowledge */
	"	cmp	x0, #" XSTR(IPI_INTID) "\n"
	"	b.ne	19b\n"				/* 1023: nothing yet */
	"	msr	icc_eoir1_el1, x0\n"
	"	isb\n"
	"	add	x15, x15, #1\n"
	"	str	xzr, [x23, #24]\n"		/* taken, ready for the next: MMIO exit */
	"	subs	x16, x16, #1\n"
	"	b.ne	19b\n"
	"20:	mrs	x16, tpidr_el1\n"		/* --ipi's sender: its count */
	"	cbz	x16, 22f\n"
	"	mov	x15, #0\n"
	"	mrs	x1, tpidrro_el0\n"		/* ICC_SGI1R_EL1's value: the SGI, to vCPU 1 */
	"21:	str	xzr, [x23, #32]\n"		/* may I: MMIO exit, held until vCPU 1 sleeps */
	"label_guest_ipi:\n"
	"	msr	icc_sgi1r_el1, x1\n"		/* traps: SYS64 */
	"	isb\n"
	"	add	x15, x15, #1\n"
	"	subs	x16, x16, #1\n"
	"	b.ne	21b\n"
	"22:\n"
	"label_guest_done:\n"
	"	strb	w0, [x23, #8]\n"		/* done */
	"9:	b	9b\n"
	"guest_code_end:\n"
	".popsection\n");

struct opts {
	unsigned long vcpus;
	uint64_t count[NR_KINDS];
	const char *name;
	const char *vm_name;	/* from "-name guest=...": this process is the VM */
	const char *symbols;	/* --symbols FILE: write the code's labels there, run nothing */
	bool json;
};

struct vcpu {
	const struct opts *o;
	int index;
	int vm_fd;
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	pid_t tid;
	uint64_t runs;
	uint64_t exits[NR_EXIT_NAMES + 1];	/* last slot: reasons beyond the table */
	uint64_t ns;
	uint64_t timer_irqs;	/* --timer: what the guest acknowledged (x28) */
	uint64_t mpidr;
	bool failed;
	bool done;		/* the vCPU thread has ended (atomic: the injector reads it) */
	/* --irq: the guest's "ready" stores seen (atomic), the handler's CNTVCT of each, the host's
	 * CNTVCT at each inject, the VM's counter offset's upper bound and the guest's tally. */
	uint64_t irq_stores;
	uint64_t *irq_ack;
	uint64_t *irq_inject;
	uint64_t cnt_off_hi;
	uint64_t irqs;
	uint64_t irq_unsure;	/* SPIs raised without having seen the thread in KVM's halt */
	pthread_t injector;
	/* --ipi: vCPU 0's peer (vCPU 1), the receiver's "ready" stores seen (atomic), the guest's
	 * tally (x15: sent on vCPU 0, taken on vCPU 1), SGIs let go without vCPU 1 seen halted. */
	struct vcpu *peer;
	uint64_t ipi_stores;
	uint64_t ipi_asks;
	uint64_t ipis;
	uint64_t ipi_unsure;
};

static const char *const exit_names[NR_EXIT_NAMES] = {
	[KVM_EXIT_UNKNOWN] = "UNKNOWN",
	[KVM_EXIT_EXCEPTION] = "EXCEPTION",
	[KVM_EXIT_HYPERCALL] = "HYPERCALL",
	[KVM_EXIT_DEBUG] = "DEBUG",
	[KVM_EXIT_MMIO] = "MMIO",
	[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
	[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
	[KVM_EXIT_INTR] = "INTR",
	[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
	[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
	[KVM_EXIT_ARM_NISV] = "ARM_NISV",
};

#include "vmexit_guest_cli.h"

static const char *exit_name(uint32_t reason, char *buf, size_t len)
{
	if (reason < NR_EXIT_NAMES && exit_names[reason])
		return exit_names[reason];
	snprintf(buf, len, "EXIT_%" PRIu32, reason);
	return buf;
}

/* ------------------------------------------------------------------ vCPUs */

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

#define CORE_REG(field) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
			 (offsetof(struct kvm_regs, field) / sizeof(uint32_t)))

static int set_reg(struct vcpu *v, uint64_t id, uint64_t val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uint64_t)(uintptr_t)&val };

	if (ioctl(v->fd, KVM_SET_ONE_REG, &reg) < 0) {
		errmsg("vCPU %d: KVM_SET_ONE_REG: %s", v->index, strerror(errno));
		return -1;
	}
	return 0;
}

static int get_reg(struct vcpu *v, uint64_t id, uint64_t *val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uint64_t)(uintptr_t)val };

	if (ioctl(v->fd, KVM_GET_ONE_REG, &reg) < 0) {
		errmsg("vCPU %d: KVM_GET_ONE_REG: %s", v->index, strerror(errno));
		return -1;
	}
	return 0;
}

static int setup_vcpu(int vm_fd, const struct kvm_vcpu_init *init, struct vcpu *v,
		      size_t run_size)
{
	v->fd = ioctl(vm_fd, KVM_CREATE_VCPU, v->index);
	if (v->fd < 0) {
		errmsg("KVM_CREATE_VCPU %d: %s", v->index, strerror(errno));
		return -1;
	}
	if (ioctl(v->fd, KVM_ARM_VCPU_INIT, init) < 0) {
		errmsg("vCPU %d: KVM_ARM_VCPU_INIT: %s", v->index, strerror(errno));
		return -1;
	}
	v->run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		errmsg("vCPU %d: mmap kvm_run: %s", v->index, strerror(errno));
		return -1;
	}
	if (set_reg(v, CORE_REG(regs.pc), RAM_GPA) || set_reg(v, CORE_REG(regs.regs[23]), MMIO_GPA) ||
	    set_reg(v, CORE_REG(regs.regs[25]),
		    TOUCH_GPA + (uint64_t)v->index * v->o->count[K_TOUCH] * page_size()) ||
	    set_reg(v, CORE_REG(regs.regs[26]), page_size()))
		return -1;
	for (int k = 0; k < NR_KINDS; k++) {
		if (kind_reg[k] >= 0 && set_reg(v, CORE_REG(regs.regs[kind_reg[k]]), v->o->count[k]))
			return -1;
	}
	/* MPIDR_EL1: its redistributor's name in the vGIC's register attributes. */
	return get_reg(v, ARM64_SYS_REG(3, 0, 0, 0, 5), &v->mpidr);
}

/* ------------------------------------------------------------------ --timer's vGICv3 */

static int gic_attr(int dev, uint32_t group, uint64_t attr, void *val, const char *what)
{
	struct kvm_device_attr a = { .group = group, .attr = attr,
				     .addr = (uint64_t)(uintptr_t)val };

	if (ioctl(dev, KVM_SET_DEVICE_ATTR, &a) < 0) {
		errmsg("vGICv3: cannot set %s: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

/* A redistributor register's attribute: the vCPU's affinity (Aff3.Aff2.Aff1.Aff0), the offset. */
static uint64_t redist_attr(const struct vcpu *v, uint32_t off)
{
	uint64_t m = v->mpidr, aff = (m & 0xffffff) | (m >> 32 & 0xff) << 24;

	return aff << KVM_DEV_ARM_VGIC_V3_MPIDR_SHIFT | off;
}

/* A distributor register's 32 bits: read, OR in bits, write back (SPIs of several vCPUs share). */
static int dist_set_bits(int dev, uint32_t off, uint32_t bits, const char *what)
{
	struct kvm_device_attr a = { .group = KVM_DEV_ARM_VGIC_GRP_DIST_REGS, .attr = off };
	uint32_t val = 0;

	a.addr = (uint64_t)(uintptr_t)&val;
	if (ioctl(dev, KVM_GET_DEVICE_ATTR, &a) < 0) {
		errmsg("vGICv3: cannot read %s: %s", what, strerror(errno));
		return -1;
	}
	val |= bits;
	return gic_attr(dev, KVM_DEV_ARM_VGIC_GRP_DIST_REGS, off, &val, what);
}

/*
 * --irq: vCPU v's SPI, IRQ_INTID + v, group 1, edge-triggered (so that each level-1 KVM_IRQ_LINE
 * is one interrupt and the VMM never lowers it), routed to v, enabled.
 */
static int setup_spi(int dev, const struct vcpu *v)
{
	uint32_t intid = IRQ_INTID + (uint32_t)v->index, bit = 1u << (intid % 32);
	uint64_t m = v->mpidr;
	uint32_t route = (uint32_t)(m & 0xffffff), aff3 = (uint32_t)(m >> 32 & 0xff);

	return dist_set_bits(dev, GICD_IGROUPR(intid), bit, "GICD_IGROUPR") ||
	       dist_set_bits(dev, GICD_ICFGR(intid), 2u << (2 * (intid % 16)), "GICD_ICFGR") ||
	       gic_attr(dev, KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_IROUTER(intid), &route,
			"GICD_IROUTER") ||
	       gic_attr(dev, KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_IROUTER(intid) + 4, &aff3,
			"GICD_IROUTER (Aff3)") ||
	       dist_set_bits(dev, GICD_ISENABLER(intid), bit, "GICD_ISENABLER");
}

/*
 * The in-kernel vGICv3, after the vCPUs (KVM ties a redistributor to each) and before their first
 * run: its frames, then its group 1 and each vCPU's timer PPI (and --irq's SPI, --ipi's SGI) on,
 * through the device's register attributes rather than the guest's MMIO, which would add exits
 * the counts do not expect.
 */
static int create_gic(int vm_fd, struct vcpu *vcpus, unsigned long n)
{
	struct kvm_create_device cd = { .type = KVM_DEV_TYPE_ARM_VGIC_V3 };
	uint64_t dist = GICD_GPA, redist = GICR_GPA;
	uint32_t ctlr = GICD_CTLR_ENABLE_G1, ppi = 1u << TIMER_INTID;

	if (vcpus[0].o->count[K_IPI])
		ppi |= 1u << IPI_INTID;	/* the SGI, in every redistributor: vCPU 1's takes it */

	if (ioctl(vm_fd, KVM_CREATE_DEVICE, &cd) < 0) {
		errmsg("KVM_CREATE_DEVICE vGICv3: %s (does the host's GIC do v3?)", strerror(errno));
		return -1;
	}
	if (gic_attr(cd.fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_DIST, &dist,
		     "the distributor's address") ||
	    gic_attr(cd.fd, KVM_DEV_ARM_VGIC_GRP_ADDR, KVM_VGIC_V3_ADDR_TYPE_REDIST, &redist,
		     "the redistributors' address") ||
	    gic_attr(cd.fd, KVM_DEV_ARM_VGIC_GRP_CTRL, KVM_DEV_ARM_VGIC_CTRL_INIT, NULL,
		     "KVM_DEV_ARM_VGIC_CTRL_INIT") ||
	    gic_attr(cd.fd, KVM_DEV_ARM_VGIC_GRP_DIST_REGS, GICD_CTLR, &ctlr, "GICD_CTLR"))
		return -1;
	for (unsigned long i = 0; i < n; i++) {
		if (gic_attr(cd.fd, KVM_DEV_ARM_VGIC_GRP_REDIST_REGS,
			     redist_attr(&vcpus[i], GICR_SGI_IGROUPR0), &ppi, "GICR_IGROUPR0") ||
		    gic_attr(cd.fd, KVM_DEV_ARM_VGIC_GRP_REDIST_REGS,
			     redist_attr(&vcpus[i], GICR_SGI_ISENABLER0), &ppi, "GICR_ISENABLER0"))
			return -1;
		if (vcpus[i].o->count[K_IRQ] && setup_spi(cd.fd, &vcpus[i]))
			return -1;
	}
	return 0;
}

/*
 * --ipi's roles, in system registers the guest reads (guest_code): every vCPU's are set, as KVM
 * resets them to a poison value, not 0. vCPU 1 receives (TPIDR_EL0 = N), vCPU 0 sends (TPIDR_EL1
 * = N; TPIDRRO_EL0 = the ICC_SGI1R_EL1 value that sends IPI_INTID to vCPU 1's MPIDR: Aff3, Aff2,
 * Aff1, the range selector Aff0 / 16, the target list's bit Aff0 % 16).
 */
static int setup_ipi(struct vcpu *vcpus, unsigned long n)
{
	uint64_t count = vcpus[0].o->count[K_IPI], m = n > 1 ? vcpus[1].mpidr : 0;
	uint64_t sgi = (m >> 32 & 0xff) << 48 | (m >> 16 & 0xff) << 32 |
		       (uint64_t)IPI_INTID << 24 | (m >> 8 & 0xff) << 16 | (m >> 4 & 0xf) << 44 |
		       1ull << (m & 0xf);

	for (unsigned long i = 0; i < n; i++) {
		bool send = count && i == 0, take = count && i == 1;

		if (set_reg(&vcpus[i], SYS_TPIDR_EL1, send ? count : 0) ||
		    set_reg(&vcpus[i], SYS_TPIDR_EL0, take ? count : 0) ||
		    set_reg(&vcpus[i], SYS_TPIDRRO_EL0, send ? sgi : 0))
			return -1;
	}
	if (count)
		vcpus[0].peer = &vcpus[1];
	return 0;
}

/* ------------------------------------------------------------------ --irq's injector */

/* The host's virtual counter (the kernel lets EL0 read it: the vDSO's clock). */
static uint64_t host_cntvct(void)
{
	uint64_t c;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(c) :: "memory");
	return c;
}

static uint64_t cnt_freq(void)
{
	uint64_t f;

	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	return f;
}

/*
 * The upper bound of (host CNTVCT - the guest's CNTVCT), from the guest's counter
 * (KVM_REG_ARM_TIMER_CNT) read between two of the host's: before the first run, as the ioctl
 * waits for a running vCPU's mutex.
 */
static int read_cnt_offset(struct vcpu *v)
{
	uint64_t g, h1;

	if (get_reg(v, KVM_REG_ARM_TIMER_CNT, &g))
		return -1;
	h1 = host_cntvct();
	v->cnt_off_hi = h1 - g;
	return 0;
}

/* A /proc/self/task/TID file's start, NUL-terminated, or -1. */
static ssize_t task_file(pid_t tid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/*
 * The vCPU thread's scheduler state from /proc: 'H' asleep in KVM's halt (state S, and wchan a
 * kvm_vcpu_* function: kvm_vcpu_block), 'S' asleep elsewhere, 0 without /proc. State S alone
 * was not enough: in the arm64 bed (6.1) one SPI of 80 was raised on it after a WFx exit, yet
 * KVM's halt began 24 ms later (kvm_vcpu_wakeup's time): a delivery in an exit, not a halted one.
 * A kernel without wchan's names (it reads "0") leaves S alone to go by.
 */
static char thread_state(pid_t tid)
{
	char buf[512], *p;
	char st;

	if (task_file(tid, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');	/* the name may hold spaces and parentheses */
	st = p && p[1] == ' ' ? p[2] : 0;
	if (st != 'S')
		return st;
	if (task_file(tid, "wchan", buf, sizeof(buf)) <= 0 || !strcmp(buf, "0") ||
	    !strncmp(buf, "kvm_vcpu_", 9))
		return 'H';
	return st;
}

static void nap(long ns)
{
	struct timespec ts = { .tv_nsec = ns };

	nanosleep(&ts, NULL);
}

/*
 * Until the vCPU v's thread sleeps in KVM's halt ('H'). No /proc, or asleep elsewhere for ~1 s:
 * 1 ms more, one more *unsure, and go on all the same rather than hang. -1 once v has ended.
 */
static int wait_halted(struct vcpu *v, uint64_t *unsure)
{
	pid_t tid = __atomic_load_n(&v->tid, __ATOMIC_ACQUIRE);
	char st;

	for (unsigned int tries = 0; (st = thread_state(tid)) != 'H'; tries++) {
		if (!st || (st == 'S' && tries > IRQ_SLEEP_TRIES)) {
			(*unsure)++;
			nap(1000000);
			break;
		}
		if (__atomic_load_n(&v->done, __ATOMIC_ACQUIRE))
			return -1;
		nap(IRQ_POLL_NS);
	}
	return 0;
}

/*
 * One per vCPU with --irq: for each SPI, wait for the guest's "ready", then for its thread to
 * sleep in the wfi (no /proc: 1 ms, and the guest copes with an interrupt already pending), then
 * raise it. A vCPU thread that ended (failed) ends this too; a failed raise ends the VM.
 */
static void *injector_thread(void *arg)
{
	struct vcpu *v = arg;
	uint64_t n = v->o->count[K_IRQ];
	struct kvm_irq_level irq = {
		.irq = KVM_ARM_IRQ_TYPE_SPI << KVM_ARM_IRQ_TYPE_SHIFT |
		       (IRQ_INTID + (uint32_t)v->index) << KVM_ARM_IRQ_NUM_SHIFT,
		.level = 1,
	};

	for (uint64_t k = 0; k < n; k++) {
		while (__atomic_load_n(&v->irq_stores, __ATOMIC_ACQUIRE) <= k) {
			if (__atomic_load_n(&v->done, __ATOMIC_ACQUIRE))
				return NULL;
			nap(IRQ_POLL_NS);
		}
		if (wait_halted(v, &v->irq_unsure))
			return NULL;
		v->irq_inject[k] = host_cntvct();
		if (ioctl(v->vm_fd, KVM_IRQ_LINE, &irq) < 0) {
			/* the guest would wait in its wfi for it forever */
			errmsg("vCPU %d: KVM_IRQ_LINE SPI %u: %s", v->index,
			       IRQ_INTID + v->index, strerror(errno));
			exit(1);
		}
	}
	return NULL;
}

/*
 * --ipi, vCPU 0's "may I": wait for vCPU 1's next "ready" (it took the SGI before, and opened its
 * CPU interface), then for its thread to sleep in KVM's halt, and let the guest send. -1: vCPU 1
 * ended first (failed: it would never take the SGI).
 */
static int ipi_wait_peer(struct vcpu *v)
{
	struct vcpu *p = v->peer;
	uint64_t k = v->ipi_asks++;

	while (__atomic_load_n(&p->ipi_stores, __ATOMIC_ACQUIRE) <= k) {
		if (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE))
			goto ended;
		nap(IRQ_POLL_NS);
	}
	if (!wait_halted(p, &v->ipi_unsure))
		return 0;
ended:
	errmsg("vCPU %d: vCPU %d ended before taking SGI %" PRIu64 " of %" PRIu64, v->index,
	       p->index, k + 1, v->o->count[K_IPI]);
	return -1;
}

static void on_kick(int sig)
{
	(void)sig;	/* only there to make a blocked KVM_RUN return EINTR */
}

/* The WFI waker: SIGUSR1 to this thread every WFI_KICK_NS. */
static int start_kicks(struct vcpu *v, timer_t *t)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR1 };
	struct itimerspec its = { .it_value.tv_nsec = WFI_KICK_NS,
				  .it_interval.tv_nsec = WFI_KICK_NS };

	/* glibc 2.36 has no sigev_notify_thread_id macro (2.41 adds it) */
	sev._sigev_un._tid = v->tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, t) < 0 || timer_settime(*t, 0, &its, NULL) < 0) {
		errmsg("vCPU %d: cannot start the WFI timer: %s", v->index, strerror(errno));
		return -1;
	}
	return 0;
}

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)(b->tv_sec - a->tv_sec) * 1000000000ull + b->tv_nsec - a->tv_nsec;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct kvm_run *r = v->run;
	uint64_t mmio = 0;
	struct timespec t0, t1;
	timer_t kick;
	bool kicking = false;
	char tname[16], buf[32];

	__atomic_store_n(&v->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	/* QEMU's vCPU thread name with debug-threads=on; tracers map it to a vCPU index. */
	snprintf(tname, sizeof(tname), "CPU %d/KVM", v->index);
	pthread_setname_np(pthread_self(), tname);
	if (v->o->count[K_WFI]) {
		if (start_kicks(v, &kick))
			goto fail;
		kicking = true;
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int rc = ioctl(v->fd, KVM_RUN, 0);

		if (rc < 0 && errno != EINTR) {
			errmsg("vCPU %d: KVM_RUN: %s", v->index, strerror(errno));
			goto fail;
		}
		v->runs++;
		v->exits[r->exit_reason < NR_EXIT_NAMES ? r->exit_reason : NR_EXIT_NAMES]++;
		if (rc < 0)
			continue;
		if (r->exit_reason == KVM_EXIT_MMIO && r->mmio.is_write && r->mmio.len == 1 &&
		    r->mmio.phys_addr == MMIO_GPA) {
			mmio++;
		} else if (r->exit_reason == KVM_EXIT_MMIO && r->mmio.is_write &&
			   r->mmio.len == 8 && r->mmio.phys_addr == IRQ_GPA &&
			   v->irq_stores <= v->o->count[K_IRQ]) {
			/* the first is "ready", each later one the handler's CNTVCT */
			if (v->irq_stores)
				memcpy(&v->irq_ack[v->irq_stores - 1], r->mmio.data, 8);
			__atomic_store_n(&v->irq_stores, v->irq_stores + 1, __ATOMIC_RELEASE);
		} else if (r->exit_reason == KVM_EXIT_MMIO && r->mmio.is_write &&
			   r->mmio.len == 8 && r->mmio.phys_addr == IPI_READY_GPA && v->index == 1 &&
			   v->ipi_stores <= v->o->count[K_IPI]) {
			__atomic_store_n(&v->ipi_stores, v->ipi_stores + 1, __ATOMIC_RELEASE);
		} else if (r->exit_reason == KVM_EXIT_MMIO && r->mmio.is_write &&
			   r->mmio.len == 8 && r->mmio.phys_addr == IPI_ASK_GPA && v->peer &&
			   v->ipi_asks < v->o->count[K_IPI]) {
			if (ipi_wait_peer(v))
				goto fail;
		} else if (r->exit_reason == KVM_EXIT_MMIO && r->mmio.is_write &&
			   r->mmio.len == 1 && r->mmio.phys_addr == DONE_GPA) {
			if (mmio != v->o->count[K_MMIO]) {
				errmsg("vCPU %d: %" PRIu64 " MMIO exits, expected %" PRIu64,
				       v->index, mmio, v->o->count[K_MMIO]);
				goto fail;
			}
			if (v->o->count[K_TIMER] &&
			    get_reg(v, CORE_REG(regs.regs[28]), &v->timer_irqs))
				goto fail;
			if (v->o->count[K_IRQ] && get_reg(v, CORE_REG(regs.regs[30]), &v->irqs))
				goto fail;
			if (v->o->count[K_IPI] && v->index <= 1 &&
			    get_reg(v, CORE_REG(regs.regs[15]), &v->ipis))
				goto fail;
			break;
		} else {
			errmsg("vCPU %d: unexpected exit %s (%u)%s", v->index,
			       exit_name(r->exit_reason, buf, sizeof(buf)), r->exit_reason,
			       r->exit_reason == KVM_EXIT_MMIO ? " at another address" : "");
			goto fail;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	v->ns = ns_between(&t0, &t1);
	if (kicking)
		timer_delete(kick);
	__atomic_store_n(&v->done, true, __ATOMIC_RELEASE);
	return NULL;
fail:
	if (kicking)
		timer_delete(kick);
	v->failed = true;
	__atomic_store_n(&v->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* ------------------------------------------------------------------ output */

/*
 * The k-th inject's latency bound: the handler's CNTVCT in the host's counter (its largest
 * offset) minus the inject's, one tick more for the reads' rounding, in ns (rounded up).
 */
static uint64_t irq_bound_ns(const struct vcpu *v, uint64_t k)
{
	uint64_t f = cnt_freq(), ticks = v->irq_ack[k] + v->cnt_off_hi - v->irq_inject[k] + 1;

	return (uint64_t)(((unsigned __int128)ticks * 1000000000u + f - 1) / f);
}

static void print_json(const struct opts *o, const struct vcpu *vcpus)
{
	char *line = NULL, buf[32];
	size_t len = 0;
	FILE *f = open_memstream(&line, &len);

	if (!f) {
		errmsg("out of memory");
		return;
	}
	/* NAME is restricted to [A-Za-z0-9._-] by the argument parser: no escaping needed. */
	fprintf(f, "{\"pid\":%d,\"name\":\"%s\",\"mix\":{", (int)getpid(), o->vm_name);
	for (int k = 0; k < NR_KINDS; k++)
		fprintf(f, "%s\"%s\":%" PRIu64, k ? "," : "", kind_opt[k], o->count[k]);
	fprintf(f, "},\"vcpus\":[");
	for (unsigned long i = 0; i < o->vcpus; i++) {
		const struct vcpu *v = &vcpus[i];
		const char *sep = "";

		fprintf(f, "%s{\"vcpu\":%d,\"tid\":%d,\"runs\":%" PRIu64 ",\"ns\":%" PRIu64,
			i ? "," : "", v->index, (int)v->tid, v->runs, v->ns);
		if (o->count[K_TIMER])
			fprintf(f, ",\"timer\":%" PRIu64, v->timer_irqs);
		if (o->count[K_IRQ]) {
			fprintf(f, ",\"irq\":%" PRIu64 ",\"irq_intid\":%d,\"irq_unsure\":%" PRIu64
				",\"irq_bound_ns\":[", v->irqs, IRQ_INTID + v->index, v->irq_unsure);
			for (uint64_t k = 0; k < o->count[K_IRQ]; k++)
				fprintf(f, "%s%" PRIu64, k ? "," : "", irq_bound_ns(v, k));
			fprintf(f, "]");
		}
		if (o->count[K_IPI] && i == 0)
			fprintf(f, ",\"ipi_sent\":%" PRIu64 ",\"ipi_unsure\":%" PRIu64
				",\"ipi_intid\":%d", v->ipis, v->ipi_unsure, IPI_INTID);
		else if (o->count[K_IPI] && i == 1)
			fprintf(f, ",\"ipi\":%" PRIu64 ",\"ipi_intid\":%d", v->ipis, IPI_INTID);
		fprintf(f, ",\"exits\":{");
		for (uint32_t r = 0; r <= NR_EXIT_NAMES; r++) {
			/* MMIO and INTR always, so a reader need not default them. */
			if (!v->exits[r] && r != KVM_EXIT_MMIO && r != KVM_EXIT_INTR)
				continue;
			fprintf(f, "%s\"%s\":%" PRIu64, sep,
				r == NR_EXIT_NAMES ? "OTHER" : exit_name(r, buf, sizeof(buf)),
				v->exits[r]);
			sep = ",";
		}
		fprintf(f, "}}");
	}
	fprintf(f, "]}\n");
	if (fclose(f)) {
		errmsg("out of memory");
		free(line);
		return;
	}
	/* One write, so that the lines of concurrent VM processes do not interleave. */
	for (size_t off = 0; off < len;) {
		ssize_t n = write(STDOUT_FILENO, line + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			errmsg("cannot write the --json line: %s",
			       n < 0 ? strerror(errno) : "short write");
			break;
		}
		off += n;
	}
	free(line);
}

/* ------------------------------------------------------------------ the VM */

/*
 * --touch: the pages' own memslot, which the VMM never touches, so that each first store of
 * the guest faults at stage 2 (and in the host). No transparent huge page: one would let KVM
 * map many of the pages with one fault.
 */
static int add_touch_slot(int vm_fd, const struct opts *o)
{
	uint64_t size = o->vcpus * o->count[K_TOUCH] * page_size();
	void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct kvm_userspace_memory_region region = {
		.slot = 1, .guest_phys_addr = TOUCH_GPA, .memory_size = size,
		.userspace_addr = (uint64_t)(uintptr_t)mem,
	};

	if (mem == MAP_FAILED) {
		errmsg("mmap --touch memory: %s", strerror(errno));
		return -1;
	}
	if (madvise(mem, size, MADV_NOHUGEPAGE))
		errmsg("note: MADV_NOHUGEPAGE: %s", strerror(errno));
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		errmsg("KVM_SET_USER_MEMORY_REGION (--touch): %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* --symbols: guest_code's labels as a System.map (ADDRESS TYPE NAME, by address). */
static int write_symbols(const char *path)
{
	static const struct { const char *name; const uint32_t *at; } labels[] = {
#define GUEST_LABEL(name) { "guest_" #name, label_guest_##name },
		GUEST_LABELS(GUEST_LABEL)
#undef GUEST_LABEL
	};
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!f) {
		errmsg("--symbols %s: %s", path, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		fprintf(f, "%016llx %c %s\n",
			RAM_GPA + (unsigned long long)((const char *)labels[i].at -
						      (const char *)guest_code),
			i ? 't' : 'T', labels[i].name);
	if (ferror(f) | fclose(f)) {
		errmsg("--symbols %s: cannot write: %s", path, strerror(errno));
		rc = 1;
	}
	return rc;
}

static int run_vm(const struct opts *o)
{
	struct vcpu vcpus[MAX_VCPUS] = { 0 };
	struct kvm_vcpu_init init = { 0 };
	/* SA_RESTART for our other syscalls: KVM_RUN itself returns EINTR all the same. */
	struct sigaction sa = { .sa_handler = on_kick, .sa_flags = SA_RESTART };
	unsigned long started = 0;
	int kvm_fd, vm_fd, mmap_size, rc = 0;
	uint64_t runs = 0, mmio = 0, intr = 0, ns = 0, timer = 0, irqs = 0, sgis;
	void *mem;

	/* Re-exec'd through /proc/self/exe, the main thread would otherwise be named "exe". */
	pthread_setname_np(pthread_self(), PROG);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0) {
		errmsg("/dev/kvm: %s (is KVM enabled and are you allowed to use it?)",
		       strerror(errno));
		return 1;
	}
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0) {
		errmsg("KVM_CREATE_VM: %s", strerror(errno));
		return 1;
	}
	mmap_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (mmap_size < (int)sizeof(struct kvm_run)) {
		errmsg("KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
		return 1;
	}
	mem = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		errmsg("mmap guest RAM: %s", strerror(errno));
		return 1;
	}
	memcpy(mem, guest_code, (const char *)guest_code_end - (const char *)guest_code);
	struct kvm_userspace_memory_region region = {
		.slot = 0, .guest_phys_addr = RAM_GPA, .memory_size = RAM_SIZE,
		.userspace_addr = (uint64_t)(uintptr_t)mem,
	};
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		errmsg("KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
		return 1;
	}
	if (o->count[K_TOUCH] && add_touch_slot(vm_fd, o))
		return 1;
	if (ioctl(vm_fd, KVM_ARM_PREFERRED_TARGET, &init) < 0) {
		errmsg("KVM_ARM_PREFERRED_TARGET: %s", strerror(errno));
		return 1;
	}
	/* PSCI 0.2 or later, so that PSCI_VERSION is a valid call. */
	init.features[0] |= 1u << KVM_ARM_VCPU_PSCI_0_2;
	for (unsigned long i = 0; i < o->vcpus; i++) {
		vcpus[i].o = o;
		vcpus[i].index = (int)i;
		vcpus[i].vm_fd = vm_fd;
		if (setup_vcpu(vm_fd, &init, &vcpus[i], mmap_size))
			return 1;
	}
	if ((o->count[K_TIMER] || o->count[K_IRQ] || o->count[K_IPI]) &&
	    create_gic(vm_fd, vcpus, o->vcpus))
		return 1;
	if (setup_ipi(vcpus, o->vcpus))
		return 1;
	for (unsigned long i = 0; o->count[K_IRQ] && i < o->vcpus; i++) {
		vcpus[i].irq_ack = calloc(o->count[K_IRQ], sizeof(uint64_t));
		vcpus[i].irq_inject = calloc(o->count[K_IRQ], sizeof(uint64_t));
		if (!vcpus[i].irq_ack || !vcpus[i].irq_inject) {
			errmsg("out of memory");
			return 1;
		}
		if (read_cnt_offset(&vcpus[i]))
			return 1;
	}
	for (; started < o->vcpus; started++) {
		struct vcpu *v = &vcpus[started];
		int e = pthread_create(&v->thread, NULL, vcpu_thread, v);

		if (!e && o->count[K_IRQ]) {
			e = pthread_create(&v->injector, NULL, injector_thread, v);
			if (e) {	/* the vCPU would wait for its SPIs forever */
				errmsg("pthread_create: %s", strerror(e));
				exit(1);
			}
		}
		if (e) {
			errmsg("pthread_create: %s", strerror(e));
			rc = 1;
			break;
		}
	}
	for (unsigned long i = 0; i < started; i++) {
		pthread_join(vcpus[i].thread, NULL);
		if (o->count[K_IRQ])
			pthread_join(vcpus[i].injector, NULL);
		rc |= vcpus[i].failed;
		runs += vcpus[i].runs;
		mmio += vcpus[i].exits[KVM_EXIT_MMIO];
		intr += vcpus[i].exits[KVM_EXIT_INTR];
		ns = vcpus[i].ns > ns ? vcpus[i].ns : ns;
		timer += vcpus[i].timer_irqs;
		irqs += vcpus[i].irqs;
	}
	if (rc)
		return 1;
	sgis = o->count[K_IPI] ? vcpus[1].ipis : 0;
	errmsg("%s (pid %d): %lu vCPU(s): %" PRIu64 " KVM_RUN, MMIO %" PRIu64 " INTR %" PRIu64
	       ", hvc %" PRIu64 " wfi %" PRIu64 " sysreg %" PRIu64 " touch %" PRIu64
	       " (no exit to the VMM), timer interrupts taken %" PRIu64 ", SPIs taken %" PRIu64
	       ", SGIs taken %" PRIu64 ", %.3f s",
	       o->vm_name, (int)getpid(), o->vcpus, runs, mmio, intr,
	       o->vcpus * o->count[K_HVC], o->vcpus * o->count[K_WFI],
	       o->vcpus * o->count[K_SYSREG], o->vcpus * o->count[K_TOUCH], timer, irqs, sgis,
	       ns / 1e9);
	if (o->json)
		print_json(o, vcpus);
	return 0;
}

/* ------------------------------------------------------------------ arguments */

static void parse_args(int argc, char **argv, struct opts *o)
{
	bool kind_given = false;

	*o = (struct opts){ .vcpus = 1, .name = "demo" };
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val;
		char opt[32];
		int k;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			printf("usage: " PROG " [--vcpus N] [--mmio N] [--touch N] [--hvc N] "
			       "[--wfi N] [--sysreg N]\n"
			       "       [--timer N] [--irq N] [--ipi N] [--name NAME] [--json]\n"
			       "       " PROG " --symbols FILE\n"
			       "  --timer N       N EL1 virtual timer interrupts (PPI %d, 1 ms apart)"
			       " through\n"
			       "                  an in-kernel vGICv3, each waited for with wfi\n"
			       "  --irq N         N SPIs (INTID %d + the vCPU's index, at most %llu)"
			       " raised\n"
			       "                  by the VMM (KVM_IRQ_LINE) while the vCPU waits in"
			       " wfi\n"
			       "  --ipi N         N SGIs (INTID %d) vCPU 0 sends vCPU 1 (ICC_SGI1R_EL1)"
			       " while\n"
			       "                  vCPU 1 waits in wfi (needs --vcpus 2 or more)\n"
			       "  --touch N       store to N pages of the vCPU's own at GPA 0x%llx:\n"
			       "                  N first touches, stage-2 faults (vcpus x N <= %d)\n"
			       "  --symbols FILE  write the guest code's labels to FILE as a "
			       "System.map\n"
			       "                  (for vmexit --by rip --guest-symbols), run nothing\n"
			       "See the comment at the top of tools/vmexit-guest-arm64.c for the exact "
			       "exit counts.\n", TIMER_INTID, IRQ_INTID, MAX_IRQ, IPI_INTID, TOUCH_GPA,
			       MAX_TOUCH);
			exit(0);
		}
		if (!strcmp(arg, "--json")) {
			o->json = true;
			continue;
		}
		val = option_value(argc, argv, &i, opt, sizeof(opt));
		k = option_index(opt, kind_opt, NR_KINDS);
		if (k < NR_KINDS) {
			o->count[k] = parse_count(opt, val, 0, MAX_COUNT);
			kind_given = true;
		} else if (!strcmp(opt, "--vcpus")) {
			o->vcpus = parse_count(opt, val, 1, MAX_VCPUS);
		} else if (!strcmp(opt, "--name")) {
			o->name = parse_name(val);
		} else if (!strcmp(opt, "--symbols")) {
			o->symbols = val;
		} else if (!strcmp(opt, "-name")) {
			o->vm_name = parse_qemu_name(val);
		} else {
			usage_error("unknown option '%s' (see --help)", opt);
		}
	}
	if (!kind_given)
		o->count[K_MMIO] = 1000;
	if (o->count[K_IRQ] > MAX_IRQ)
		usage_error("--irq %" PRIu64 ": at most %llu (each is kept for its bound)",
			    o->count[K_IRQ], MAX_IRQ);
	if (o->count[K_IPI] && o->vcpus < 2)
		usage_error("--ipi %" PRIu64 ": vCPU 0 sends to vCPU 1: use --vcpus 2 or more",
			    o->count[K_IPI]);
	if (o->vcpus * o->count[K_TOUCH] > MAX_TOUCH)
		usage_error("--touch %" PRIu64 " x %lu vCPU(s): at most %d pages in all",
			    o->count[K_TOUCH], o->vcpus, MAX_TOUCH);
}

/* Re-execs this program as the VM process: QEMU's "-name" first, every option explicit. */
static void exec_vm(const char *argv0, const struct opts *o)
{
	char namebuf[MAX_NAME + 64], num[NR_KINDS + 1][24], opt[NR_KINDS][16];
	char *args[2 * (NR_KINDS + 2) + 3];
	int n = 0;

	snprintf(namebuf, sizeof(namebuf), "guest=%s,debug-threads=on", o->name);
	args[n++] = (char *)argv0;
	args[n++] = "-name";
	args[n++] = namebuf;
	snprintf(num[NR_KINDS], sizeof(num[0]), "%lu", o->vcpus);
	args[n++] = "--vcpus";
	args[n++] = num[NR_KINDS];
	for (int k = 0; k < NR_KINDS; k++) {
		snprintf(opt[k], sizeof(opt[k]), "--%s", kind_opt[k]);
		snprintf(num[k], sizeof(num[k]), "%" PRIu64, o->count[k]);
		args[n++] = opt[k];
		args[n++] = num[k];
	}
	if (o->json)
		args[n++] = "--json";
	args[n] = NULL;
	fflush(NULL);
	execv("/proc/self/exe", args);
	/* No /proc (a bare initramfs): fall back to how we were started. */
	if (strchr(argv0, '/'))
		execv(argv0, args);
	else
		execvp(argv0, args);
	errmsg("cannot re-exec myself: %s", strerror(errno));
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_args(argc, argv, &o);
	if (o.symbols)
		return write_symbols(o.symbols);
	if (o.vm_name)
		return run_vm(&o);
	exec_vm(argv[0], &o);
	return 1;
}
