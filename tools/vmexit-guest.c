// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit-guest: a tiny VMM whose guests leave guest mode an exactly known number of times,
 * so that vmexit's demo, tests and benchmarks can compare what the tracer saw with the truth.
 *
 * Usage:
 *   vmexit-guest [--vms N] [--vcpus N] [--io N] [--in N] [--mmio N] [--hlt N] [--cpuid N]
 *                [--msr N]
 *                [--wrmsr N] [--cr N] [--vmcall N] [--ud N] [--timer N]
 *                [--msi N] [--msi-spin N] [--msi-delay-us US] [--msi-asleep]
 *                [--msi-busy-us US]
 *                [--ipi N] [--ipi-delay-us US]
 *                [--seconds S] [--linger S] [--name NAME] [--ring 0|3] [--json]
 *                [--io-sleep-us US] [--io-spin-us US] [--symbols FILE]
 *                [--guest-trace-out FILE] [--tsc-offset TICKS] [--touch N]
 *                [--uffd-delay-us US] [--hold-until PATH] [--stats-fds]
 *
 * Each VM is one process, as with QEMU. The process carries a QEMU-style name on its command
 * line, "-name guest=NAME,debug-threads=on" (NAME-<i> with --vms > 1), so tools that name VMs
 * from /proc/PID/cmdline see what they would see with QEMU. With --vms 1 the program re-execs
 * itself in place (same pid); with --vms N it forks and execs N such processes and waits for
 * them. Every vCPU is a thread named "CPU <i>/KVM" and runs the same mix.
 *
 * One pass of the guest, per vCPU, runs the kinds in this order, each exactly N times:
 *   --io N     out dx,al to port 0xe9               -> KVM_EXIT_IO (out, 1 byte)
 *   --in N     in al,dx from port 0xe8              -> KVM_EXIT_IO (in, 1 byte)
 *   --mmio N   mov [0x10000000],al (no memslot)     -> KVM_EXIT_MMIO (write, 1 byte)
 *   --hlt N    hlt (no in-kernel irqchip)           -> KVM_EXIT_HLT
 *   --cpuid N  cpuid, leaves 0x80000001 and 0 in turn -> handled in the kernel, no KVM_EXIT
 *              (N = 5: 0x80000001, 0, 0x80000001, 0, 0x80000001)
 *   --msr N    rdmsr MSR_IA32_UCODE_REV (0x8b)      -> handled in the kernel, no KVM_EXIT
 *   --wrmsr N  wrmsr MSR_IA32_UCODE_REV (0x8b)      -> accepted and ignored in the kernel
 *   --cr N     mov rax,cr8; mov cr8,rax; flip CR0.MP -> in the kernel (VMX: 3 CR_ACCESS exits)
 *   --vmcall N vmcall (vmmcall on AMD), rax 0x7fff  -> unknown hypercall, -KVM_ENOSYS
 *   --ud N     ud2                                  -> #UD intercepted, reflected to the guest
 *   --timer N  one-shot x2APIC timer, sti; hlt       -> in-kernel APIC, interrupt to the guest
 *              (--timer-us US: the timer's period in guest time, default 100)
 *   --msi N    out 0xec, sti; hlt: the VMM's own       -> KVM_SIGNAL_MSI (vector 0x41) to the
 *              thread injects an MSI --msi-delay-us     halted vCPU, in-kernel APIC
 *              (default 200) later; --msi-asleep:
 *              and only once the vCPU's thread sleeps
 *              (is halted), however late that is;
 *              --msi-busy-us US: then the injector
 *              keeps its CPU US more at SCHED_FIFO
 *   --msi-spin N  out 0xed, then spinning with         -> KVM_SIGNAL_MSI (vector 0x42): the MSI
 *              interrupts on instead of halting         finds the vCPU in guest mode
 *              (no vCPU spins before every vCPU has
 *              asked once in that pass: spin_line())
 *   --ipi N    vCPU 1: out 0xef (announce), sti;    -> fixed IPIs (vector 0x43), vCPU 0 to
 *              hlt; vCPU 0: out 0xee (the VMM waits    vCPU 1, made pending in vCPU 0's thread
 *              for the announcement, then              (kvm_apic_ipi, kvm_apic_accept_irq) and
 *              --ipi-delay-us, default 200), wrmsr     waking halted vCPU 1; needs --vcpus 2+
 *              x2APIC ICR
 *   --touch N  mov [page],al on N pages of its own   -> the first pass's N first touches fault
 *              (vCPU i: N pages from 0x200000 + i*N*4K,  in the host (SVM NPF, VMX EPT
 *              a memslot of their own; vcpus*N <= 512)   violation), handled in the kernel
 *              (--uffd-delay-us US: that memory is userfaultfd's, each fault answered US
 *              microseconds late; vmexit_guest_uffd.h)
 * then "out dx,al" to the done port 0xea (one more KVM_EXIT_IO) and jumps back to its start.
 * Without any kind option the mix is --io 1000. Without --seconds each vCPU makes one pass;
 * with --seconds S it resumes the guest for further passes until S seconds have gone by (the
 * clock is checked at each done exit, so a pass is never cut short).
 *
 * How the VMM spends the time of an --io exit (vmexit's --split tells these apart):
 *   --io-sleep-us US  sleeps US microseconds (nanosleep) before the next KVM_RUN: off CPU,
 *                     blocked;
 *   --io-spin-us US   spins until the thread has used US microseconds of CPU time: on
 *                     CPU that long, however long a busy host makes it wait for a CPU.
 * Both may be given: the sleep comes first. The done exit is not delayed.
 *
 * --guest-trace-out FILE and --tsc-offset TICKS: the guest's TSC around each --io exit as a
 * Chrome trace, with a known TSC offset, for report --guest-trace (vmexit_guest_stamps.h).
 *
 * Exact counts per vCPU, P = passes (1 without --seconds; reported in the output), I = ipi on
 * vCPUs 0 (its out 0xee per IPI) and 1 (its out 0xef), 0 on the others:
 *   KVM_RUN calls = kvm:kvm_userspace_exit = P * (io + in + 1 + msi + msi-spin + I + mmio + hlt)
 *   KVM_EXIT_IO = kvm:kvm_pio = P * (io + in + 1 + msi + msi-spin + I)
 *   KVM_EXIT_MMIO = P * mmio   KVM_EXIT_HLT = P * hlt
 * and per VM: kvm:kvm_apic_ipi = P * ipi, all of them vCPU 0's, each followed in the same
 * thread by one kvm:kvm_apic_accept_irq for vCPU 1 (apicid 1, vector 0x43); with --timer,
 * --msi and --msi-spin too, kvm_apic_accept_irq = P * (timer + msi + msi-spin) per vCPU
 * + P * ipi.
 * On an SVM host (the nested test bed) kvm:kvm_exit additionally shows, exactly:
 *   IOIO (0x7b) = P * (io + in + 1)   CPUID (0x72) = P * cpuid   HLT (0x78) = P * hlt
 *   MSR (0x7c) = P * msr
 * and NPF (0x400) = P * mmio plus a handful for the first touches of guest RAM, plus whatever
 * host interrupts (INTR 0x60) happen to land; those two are not exact.
 * The VMM tallies every KVM_RUN result and fails (exit 1) unless each pass produced exactly
 * the requested IO/MMIO/HLT exits at the expected port/address and nothing else. The guest
 * counts itself too (struct tally_slot, per vCPU): the VMM checks that tally after each pass
 * and prints it with --json; on VMX it is the expected kvm_exit count (tools/vmexit-guest.md).
 * Its interrupts: irq counts every one handled (timer, MSI, IPI), ipi the IPIs among them
 * (vCPU 1) and ipi_sent the ICR writes (vCPU 0): after P passes both are P * ipi.
 *
 * --hold-until PATH: the VM and its vCPUs are created (TSC offsets set) and then wait, without
 * ever having run, until PATH exists; "held until PATH" on stderr says they are there. So a
 * tracer can start with the guest already running, as a production guest is (report
 * --guest-trace of a guest started before record).
 *
 * --symbols FILE writes the guest code's labels as a System.map (guest_cpuid, guest_hlt, ...:
 * each kind's exit instruction, at its guest address) and exits without running a VM:
 * vmexit stat --by rip --guest-symbols NAME=FILE names each exit's RIP with them.
 *
 * --stats-fds: the VMM opens KVM's binary statistics (KVM_GET_STATS_FD) of its VM and of each
 * vCPU and holds them, as a VMM that exports its own statistics does: vmexit --source kvm
 * copies them (pidfd_getfd) and reads them per vCPU. Only the VMM can make them.
 *
 * Rings. --ring 0 (the default) runs the guest as a kernel would: every kind works, here and
 * on SVM/VMX. --ring 3 runs it as user code (CPL 3, IOPL 3), like the reference PVM probe:
 * io, mmio and cpuid work; hlt and rdmsr would #GP and, with no IDT, triple-fault the guest
 * (KVM_EXIT_SHUTDOWN, seen here), so --hlt/--msr with --ring 3 are refused (exit status 2).
 *
 * Found on the development host, whose KVM is the software backend kvm_pvm (kvm_exit and
 * kvm_entry never fire there), with perf stat on the kvm: tracepoints:
 *   - both rings run; the KVM_EXIT and kvm_userspace_exit/kvm_pio/kvm_mmio counts are exact.
 *   - ring 0 is not run natively: KVM's x86 emulator executes every guest instruction
 *     (one kvm:kvm_emulate_insn per instruction, ~3 per loop iteration), and cpuid/rdmsr
 *     fire kvm:kvm_cpuid/kvm:kvm_msr once each. It is still faster than ring 3 (~9 us vs
 *     ~32 us per userspace exit) since no world switch happens until a userspace exit.
 *   - ring 3 runs natively; out and the MMIO store trap and are emulated (one
 *     kvm_emulate_insn each), but cpuid does not trap at all: no kvm_cpuid, no event.
 *   - kvm:kvm_mmio fires once per MMIO store (a write; no "unsatisfied" read events).
 *
 * Output: on success one line per VM on stderr. With --json, one line per VM process on stdout:
 *   {"pid":P,"name":"NAME","ring":R,"mix":{"io":n,"mmio":n,"hlt":n,"cpuid":n,"msr":n},
 *    "vcpus":[{"vcpu":0,"tid":T,"passes":P,"runs":N,"ns":D,"exits":{"IO":n,"MMIO":n,"HLT":n},
 *              "tally":{...},"kvm":{"exits":n,"io_exits":n,"mmio_exits":n,"halt_exits":n}}]}
 * "kvm": KVM's own counters of the vCPU at the end, those this kernel has (none before 5.14's
 * binary statistics): vmexit_guest_kvm_stats.h.
 * "runs" counts KVM_RUN calls (= kvm:kvm_userspace_exit events of that thread); "exits" counts
 * their results by KVM_EXIT_* name without the prefix. IO, MMIO and HLT are always present;
 * the only other key a successful run can show is "EINTR": a KVM_RUN cut short by a signal
 * (counted in runs, retried; nothing here sends one). "ns" is the wall time from the vCPU's
 * first KVM_RUN to its last done exit. Nothing is printed on stdout for a failed VM.
 * "-name guest=NAME[,...]" is accepted as an option too: it makes the process run one VM
 * named NAME directly (that is how the re-exec'd VM processes are started).
 *
 * Exit status: 0 success, 1 any KVM/system failure (or any VM failed), 2 bad arguments.
 */
#include <errno.h>
#include <cpuid.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define PROG			"vmexit-guest"

/* Guest physical layout: one 2 MiB memslot at 0, identity mapped by one 2 MiB page. */
#define MEM_SIZE		0x200000ull
#define CODE_GPA		0x1000ull
#define PML4_GPA		0x2000ull
#define PDPT_GPA		0x3000ull
#define PD_GPA			0x4000ull
#define PARAM_GPA		0x5000ull
#define GDT_GPA			0x6000ull
#define IDT_GPA			0x7000ull
/* Per-vCPU tally of what the guest did (struct tally), TALLY_SIZE bytes each. */
#define TALLY_GPA		0x8000ull
#define TALLY_SIZE		128ull
/* Per-vCPU stacks (exceptions and interrupts push frames), growing down from MEM_SIZE. */
#define STACK_SIZE		0x1000ull
/* --touch: a memslot of its own, mapped by the guest's second 2 MiB page. */
#define DATA_GPA		0x200000ull
#define DATA_SIZE		0x200000ull
#define DATA_PAGE		0x1000ull
/* Mapped by the guest page tables but outside every memslot, so a store there is MMIO. */
#define MMIO_GPA		0x10000000ull

#define IO_PORT			0xe9
#define IN_PORT			0xe8	/* --in: read by the guest, answered by the VMM */
#define MSI_PORT		0xec	/* --msi: the guest asks for one MSI */
#define MSI_SPIN_PORT		0xed	/* --msi-spin: the same, another vector */
#define IPI_PORT		0xee	/* --ipi: vCPU 0 waits in the VMM for vCPU 1, then sends */
#define IPI_READY_PORT		0xef	/* --ipi: vCPU 1 is about to halt for the next IPI */
#define DONE_PORT		0xea
/* An exception the guest does not expect: its vector goes out on this port and the VMM fails. */
#define EXC_PORT		0xeb
#define MSR_IA32_APICBASE	0x1b
/*
 * Intercepted on SVM and VMX (neither passes it through), and handled in the kernel: reads give
 * the microcode revision, writes from the guest are accepted and ignored (kvm_set_msr_common).
 */
#define MSR_IA32_UCODE_REV	0x8b
#define APICBASE_EN_EXTD	0xc00	/* x2APIC mode */
#define X2APIC_EOI		0x80b
#define X2APIC_SVR		0x80f
#define X2APIC_ICR		0x830
#define X2APIC_LVTT		0x832
#define X2APIC_TMICT		0x838
#define X2APIC_TDCR		0x83e
#define TIMER_VECTOR		0x40
#define MSI_VECTOR		0x41	/* the VMM's KVM_SIGNAL_MSI to a halted vCPU (--msi) */
#define MSI_SPIN_VECTOR		0x42	/* and to a spinning one (--msi-spin) */
#define IPI_VECTOR		0x43	/* vCPU 0's fixed IPIs to halted vCPU 1 (--ipi) */
/* Fixed delivery, physical destination, edge, level "assert" (required set for a fixed IPI). */
#define ICR_FIXED_ASSERT	0x4000
#define SPURIOUS_VECTOR		0xff
/* One-shot timer, divide by 1: KVM's APIC bus runs at 1 GHz, so a count per ns of guest time. */
#define TIMER_COUNTS_PER_US	1000
/* An unknown hypercall number: KVM answers -KVM_ENOSYS in rax, in the kernel. */
#define HC_UNKNOWN		0x7fff
#define UD_VECTOR		6

#define CR0_PE			(1ull << 0)
#define CR0_ET			(1ull << 4)
#define CR0_WP			(1ull << 16)
#define CR0_PG			(1ull << 31)
#define CR4_PAE			(1ull << 5)
#define EFER_LME		(1ull << 8)
#define EFER_LMA		(1ull << 10)
#define PTE_P			(1ull << 0)
#define PTE_RW			(1ull << 1)
#define PTE_US			(1ull << 2)
#define PTE_PS			(1ull << 7)
/* IF=1 as in any idle-capable guest, IOPL=3 so "out" is legal in ring 3 too. */
#define GUEST_RFLAGS		0x3202ull

#define DEFAULT_RING		0
#define MAX_VMS			256
#define MAX_VCPUS		256
#define MAX_NAME		64
#define MAX_COUNT		1000000000000ull
#define NR_EXIT_NAMES		64

#include "vmexit_guest_cli.h"
#include "vmexit_guest_uffd.h"
#include "vmexit_guest_kvm_stats.h"

/* Per-kind repeat counts, read by the guest from PARAM_GPA at the start of every pass. */
enum kind { K_IO, K_MMIO, K_HLT, K_CPUID, K_MSR, K_WRMSR, K_CR, K_VMCALL, K_UD, K_TIMER, K_IN,
	    K_TOUCH, K_MSI, K_MSI_SPIN, K_IPI, NR_KINDS };

static const char *const kind_opt[NR_KINDS] = {
	"io", "mmio", "hlt", "cpuid", "msr", "wrmsr", "cr", "vmcall", "ud", "timer", "in", "touch",
	"msi", "msi-spin", "ipi",
};

/*
 * What the guest counts itself, per vCPU, at TALLY_GPA + vcpu * TALLY_SIZE: each counter is
 * incremented right before the instruction it counts (or in the handler, for irq and ud).
 */
enum tally_slot { T_OUT, T_MMIO, T_HLT, T_CPUID, T_RDMSR, T_WRMSR, T_CR_READ, T_CR_WRITE,
		  T_VMCALL, T_UD, T_IRQ, T_IN, T_TOUCH, T_IPI_SENT, T_IPI, NR_TALLY };

static const char *const tally_name[NR_TALLY] = {
	"out", "mmio", "hlt", "cpuid", "rdmsr", "wrmsr", "cr_read", "cr_write", "vmcall", "ud",
	"irq", "in", "touch", "ipi_sent", "ipi",
};

struct opts {
	unsigned long vms;
	unsigned long vcpus;
	uint64_t count[NR_KINDS];
	bool kind_given;
	double seconds;
	double linger;		/* seconds the VM process stays after its vCPUs are done */
	const char *name;
	int ring;
	bool ring_given;
	bool json;
	bool stats_fds;		/* --stats-fds: hold the VM's and vCPUs' KVM stats fds */
	const char *vm_name;	/* from "-name guest=...": this process is one VM */
	bool amd;		/* the host CPU is AMD: vmmcall instead of vmcall */
	uint64_t io_sleep_ns;	/* per --io exit, in the VMM: asleep, then spinning */
	uint32_t timer_us;	/* --timer's period */
	uint32_t msi_delay_us;	/* --msi-delay-us: from the guest's request to the MSI */
	uint32_t ipi_delay_us;	/* --ipi-delay-us: vCPU 0's wait in the VMM before each IPI */
	bool msi_asleep;	/* --msi-asleep: each --msi MSI only once its vCPU's thread sleeps */
	uint32_t msi_busy_us;	/* --msi-busy-us: the injector's CPU kept after each --msi MSI */
	uint64_t io_spin_ns;
	const char *symbols;	/* --symbols FILE: write the code's labels there, run nothing */
	const char *trace_out;	/* --guest-trace-out: the guest's TSC stamps as a Chrome trace */
	bool tsc_offset_given;
	int64_t tsc_offset;	/* --tsc-offset */
	const char *hold;	/* --hold-until PATH */
	bool uffd;		/* --uffd-delay-us given */
	uint64_t uffd_delay_ns;
};

struct vcpu {
	struct vm *vm;
	int index;
	int fd;
	int stats_fd;		/* --stats-fds: the vCPU's, held; else -1 */
	struct kvm_run *run;
	pthread_t thread;
	pid_t tid;
	uint64_t runs;
	uint64_t passes;
	uint64_t eintr;
	uint64_t exits[NR_EXIT_NAMES + 1];	/* last slot: reasons beyond the table */
	uint64_t ns;
	uint64_t spin_asks;	/* --msi-spin requests in this pass */
	uint64_t started;	/* passes begun (pass_again()) */
	bool failed;
};

struct vm {
	const struct opts *o;
	const char *name;
	int kvm_fd;
	int vm_fd;
	size_t run_size;
	uint8_t *mem;
	uint8_t *data;		/* --touch: DATA_GPA's memslot */
	struct uffd uffd;	/* --uffd-delay-us */
	struct kvm_cpuid2 *cpuid;
	struct timespec deadline;
	struct vcpu *vcpus;
	int msi_pipe[2];	/* vCPU threads -> the MSI injector: the vCPU index to signal */
	pthread_t msi_thread;
	sem_t ipi_ready;	/* --ipi: posted per vCPU 1 announcement, taken by vCPU 0's VMM */
	pthread_mutex_t spin_mu;	/* --msi-spin's start line (spin_line()) */
	pthread_cond_t spin_cv;
	unsigned long spin_arrived;
	uint64_t spin_gen;
	pthread_mutex_t pass_mu;	/* pass_again() */
	uint64_t last_pass;	/* --seconds: every vCPU's number of passes, once decided */
	uint64_t msis;		/* KVM_SIGNAL_MSI calls that delivered */
	uint64_t msi_ns_first, msi_ns_last;	/* CLOCK_MONOTONIC of the first and last */
	bool msi_failed;
};

static const char *const exit_names[NR_EXIT_NAMES] = {
	[KVM_EXIT_UNKNOWN] = "UNKNOWN",
	[KVM_EXIT_EXCEPTION] = "EXCEPTION",
	[KVM_EXIT_IO] = "IO",
	[KVM_EXIT_HYPERCALL] = "HYPERCALL",
	[KVM_EXIT_DEBUG] = "DEBUG",
	[KVM_EXIT_HLT] = "HLT",
	[KVM_EXIT_MMIO] = "MMIO",
	[KVM_EXIT_IRQ_WINDOW_OPEN] = "IRQ_WINDOW_OPEN",
	[KVM_EXIT_SHUTDOWN] = "SHUTDOWN",
	[KVM_EXIT_FAIL_ENTRY] = "FAIL_ENTRY",
	[KVM_EXIT_INTR] = "INTR",
	[KVM_EXIT_SET_TPR] = "SET_TPR",
	[KVM_EXIT_TPR_ACCESS] = "TPR_ACCESS",
	[KVM_EXIT_NMI] = "NMI",
	[KVM_EXIT_INTERNAL_ERROR] = "INTERNAL_ERROR",
	[KVM_EXIT_SYSTEM_EVENT] = "SYSTEM_EVENT",
	[KVM_EXIT_IOAPIC_EOI] = "IOAPIC_EOI",
	[KVM_EXIT_HYPERV] = "HYPERV",
	[29] = "X86_RDMSR",
	[30] = "X86_WRMSR",
	[31] = "DIRTY_RING_FULL",
	[32] = "AP_RESET_HOLD",
	[33] = "X86_BUS_LOCK",
	[34] = "XEN",
	[37] = "NOTIFY",
	[39] = "MEMORY_FAULT",
};

static const char *exit_name(uint32_t reason, char *buf, size_t len)
{
	if (reason < NR_EXIT_NAMES && exit_names[reason])
		return exit_names[reason];
	snprintf(buf, len, "EXIT_%" PRIu32, reason);
	return buf;
}

#include "vmexit_guest_stamps.h"

/* ------------------------------------------------------------------ guest code */

/*
 * A minimal assembler buffer: the guest is a few dozen hand-assembled instructions, and
 * computing the short-jump displacements here beats counting bytes by hand.
 */
struct code {
	uint8_t *p;
	size_t len;
};

static void emit(struct code *c, const uint8_t *b, size_t n)
{
	memcpy(c->p + c->len, b, n);
	c->len += n;
}

#define EMIT(c, ...) \
	emit(c, (const uint8_t[]){ __VA_ARGS__ }, sizeof((const uint8_t[]){ __VA_ARGS__ }))

static void emit_imm32(struct code *c, uint32_t v)
{
	EMIT(c, v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff, v >> 24);
}

/* Emits a short conditional jump with a displacement to patch; returns its offset. */
static size_t emit_jcc_fwd(struct code *c, uint8_t opcode)
{
	EMIT(c, opcode, 0);
	return c->len - 1;
}

static void patch_here(struct code *c, size_t at)
{
	/* A short jump's reach: a block grown past it would jump somewhere else, silently. */
	if (c->len - (at + 1) > 127) {
		errmsg("internal error: short jump at code offset %zu cannot reach %zu", at, c->len);
		abort();
	}
	c->p[at] = (uint8_t)(c->len - (at + 1));
}

/* The same with a 32-bit displacement (0x0f 0x8X), for blocks beyond a short jump's reach. */
static size_t emit_jcc_fwd32(struct code *c, uint8_t opcode)
{
	EMIT(c, 0x0f, opcode + 0x10, 0, 0, 0, 0);
	return c->len - 4;
}

static void patch_here32(struct code *c, size_t at)
{
	uint32_t d = (uint32_t)(c->len - (at + 4));

	memcpy(c->p + at, &d, 4);
}

static void emit_jcc_back(struct code *c, uint8_t opcode, size_t target)
{
	EMIT(c, opcode, (uint8_t)(target - (c->len + 2)));
}

#define JZ	0x74
#define JNZ	0x75

/* inc qword [r15 + 8*slot]: the vCPU's tally block is in r15 (set by the VMM). */
static void emit_tally(struct code *c, enum tally_slot t)
{
	EMIT(c, 0x49, 0xff, 0x47, 8 * t);
}

/* Loads the count of kind k into reg (0: rcx, 1: r8, 2: r9) and skips the loop when zero. */
static size_t emit_loop_head(struct code *c, enum kind k, int reg)
{
	static const uint8_t mov[3][3] = { { 0x48, 0x8b, 0x4e }, { 0x4c, 0x8b, 0x46 },
					   { 0x4c, 0x8b, 0x4e } };
	static const uint8_t test[3][3] = { { 0x48, 0x85, 0xc9 }, { 0x4d, 0x85, 0xc0 },
					    { 0x4d, 0x85, 0xc9 } };

	emit(c, mov[reg], 3);			/* mov reg, [rsi + 8*k] */
	EMIT(c, 8 * k);
	emit(c, test[reg], 3);			/* test reg, reg */
	return emit_jcc_fwd(c, JZ);
}

static void emit_loop_tail(struct code *c, int reg, size_t loop, size_t skip)
{
	static const uint8_t dec[3][3] = { { 0x48, 0xff, 0xc9 }, { 0x49, 0xff, 0xc8 },
					   { 0x49, 0xff, 0xc9 } };

	emit(c, dec[reg], 3);			/* dec reg */
	emit_jcc_back(c, JNZ, loop);
	patch_here(c, skip);
}

static void emit_wrmsr(struct code *c, uint32_t msr, uint32_t lo)
{
	EMIT(c, 0xb9);				/* mov ecx, msr */
	emit_imm32(c, msr);
	EMIT(c, 0xb8);				/* mov eax, lo */
	emit_imm32(c, lo);
	EMIT(c, 0x31, 0xd2);			/* xor edx, edx */
	emit_tally(c, T_WRMSR);
	EMIT(c, 0x0f, 0x30);			/* wrmsr */
}

/* x2APIC on and software-enabled: rdmsr and wrmsr of the APIC base, then the SVR. */
static void emit_apic_enable(struct code *c)
{
	EMIT(c, 0xb9);				/* mov ecx, MSR_IA32_APICBASE */
	emit_imm32(c, MSR_IA32_APICBASE);
	emit_tally(c, T_RDMSR);
	EMIT(c, 0x0f, 0x32);			/* rdmsr */
	EMIT(c, 0x0d);				/* or eax, EN | EXTD */
	emit_imm32(c, APICBASE_EN_EXTD);
	emit_tally(c, T_WRMSR);
	EMIT(c, 0x0f, 0x30);			/* wrmsr */
	emit_wrmsr(c, X2APIC_SVR, 0x100 | SPURIOUS_VECTOR);	/* software-enable */
}

/* out dx, al to port: the VMM's injector signals an MSI to this vCPU (MSI_PORT, MSI_SPIN_PORT). */
static void emit_msi_request(struct code *c, uint32_t port)
{
	EMIT(c, 0xba);				/* mov edx, port */
	emit_imm32(c, port);
	emit_tally(c, T_OUT);
	EMIT(c, 0xee);				/* out dx, al */
}

/*
 * Code labels (--symbols): each kind's exit instruction (for --cr and --timer, which exit at
 * several, the loop's start), the pass's end and the handlers, in the order of the code.
 */
enum label { L_START, L_OUT, L_IN, L_MMIO, L_HLT, L_CPUID, L_RDMSR, L_WRMSR, L_CR, L_VMCALL,
	     L_UD, L_TIMER, L_IPI, L_DONE, L_UD_HANDLER, L_IPI_HANDLER, L_TIMER_HANDLER,
	     L_SPURIOUS, L_EXCEPTION, NR_LABELS };

static const char *const label_name[NR_LABELS] = {
	"guest_start", "guest_out", "guest_in", "guest_mmio", "guest_hlt", "guest_cpuid",
	"guest_rdmsr", "guest_wrmsr", "guest_cr", "guest_vmcall", "guest_ud2", "guest_timer",
	"guest_ipi", "guest_done", "guest_ud_handler", "guest_ipi_handler", "guest_timer_handler",
	"guest_spurious", "guest_exception",
};

/* Where build_guest put the exception and interrupt handlers, for the IDT, and its labels. */
struct guest_entries {
	size_t exc[32];		/* vectors 0-31; #UD's resumes after the ud2, the others fail */
	size_t timer;
	size_t ipi;		/* counts the IPI, then runs on into the timer's handler */
	size_t spurious;
	size_t label[NR_LABELS];	/* offsets from the start of the code */
};

/*
 * One loop per kind. The count comes from the parameter block (rsi), so the same code serves
 * every mix, and a zero count skips the loop entirely. The counter is rcx for the kinds that
 * leave rcx alone and r8/r9 for those that use ecx (cpuid, rdmsr, wrmsr). Each instruction
 * that exits is preceded by an increment of its slot in the vCPU's tally block (r15). vCPUs
 * share code and parameters; each has its own tally block and stack.
 */
/* rdtsc; mov [rdi + at], eax; mov [rdi + at + 4], edx; mov edx, IO_PORT (rdtsc took edx). */
static void emit_stamp(struct code *c, uint8_t at)
{
	EMIT(c, 0x0f, 0x31);			/* rdtsc */
	EMIT(c, 0x89, 0x47, at);		/* mov [rdi + at], eax */
	EMIT(c, 0x89, 0x57, at + 4);		/* mov [rdi + at + 4], edx */
	EMIT(c, 0xba);				/* mov edx, IO_PORT */
	emit_imm32(c, IO_PORT);
}

static size_t build_guest(uint8_t *dst, bool amd, uint32_t timer_us, bool stamps,
			  struct guest_entries *ent)
{
	struct code c = { .p = dst };
	size_t start, skip, loop, wait, got, common, hlt_at, msi_hlt_at, ipi_hlt_at, fix, recv;
	size_t fix2;

	start = c.len;
	ent->label[L_START] = c.len;
	EMIT(&c, 0xbe);				/* mov esi, PARAM_GPA */
	emit_imm32(&c, PARAM_GPA);

	/* out: port in dx, data in al (whatever it holds) */
	skip = emit_loop_head(&c, K_IO, 0);
	EMIT(&c, 0xba);				/* mov edx, IO_PORT */
	emit_imm32(&c, IO_PORT);
	if (stamps)
		EMIT(&c, 0x4c, 0x89, 0xf7);	/* mov rdi, r14: this vCPU's stamps */
	loop = c.len;
	if (stamps)
		emit_stamp(&c, 0);
	emit_tally(&c, T_OUT);
	ent->label[L_OUT] = c.len;
	EMIT(&c, 0xee);				/* out dx, al */
	if (stamps) {
		emit_stamp(&c, 8);
		EMIT(&c, 0x48, 0x83, 0xc7, 0x10);	/* add rdi, 16 */
	}
	emit_loop_tail(&c, 0, loop, skip);

	/* in: port in dx, the VMM's answer in al */
	skip = emit_loop_head(&c, K_IN, 0);
	EMIT(&c, 0xba);				/* mov edx, IN_PORT */
	emit_imm32(&c, IN_PORT);
	loop = c.len;
	emit_tally(&c, T_IN);
	ent->label[L_IN] = c.len;
	EMIT(&c, 0xec);				/* in al, dx */
	emit_loop_tail(&c, 0, loop, skip);

	/* one-byte store to unbacked guest-physical memory */
	skip = emit_loop_head(&c, K_MMIO, 0);
	EMIT(&c, 0xbf);				/* mov edi, MMIO_GPA */
	emit_imm32(&c, MMIO_GPA);
	loop = c.len;
	emit_tally(&c, T_MMIO);
	ent->label[L_MMIO] = c.len;
	EMIT(&c, 0x88, 0x07);			/* mov [rdi], al */
	emit_loop_tail(&c, 0, loop, skip);

	skip = emit_loop_head(&c, K_HLT, 0);
	loop = c.len;
	emit_tally(&c, T_HLT);
	ent->label[L_HLT] = c.len;
	EMIT(&c, 0xf4);				/* hlt */
	emit_loop_tail(&c, 0, loop, skip);

	skip = emit_loop_head(&c, K_CPUID, 1);
	loop = c.len;
	/*
	 * Leaves 0 and 0x80000001 in turn (the counter's low bit), so that a key per leaf is
	 * told from one leaf for all: 0x80000001 with its high bit (a leaf is 32 bits) and
	 * another low bit (another way of --by key's per-thread cache than leaf 0's).
	 */
	EMIT(&c, 0x44, 0x89, 0xc0);		/* mov eax, r8d */
	EMIT(&c, 0x83, 0xe0, 0x01);		/* and eax, 1 */
	EMIT(&c, 0x89, 0xc1);			/* mov ecx, eax */
	EMIT(&c, 0xc1, 0xe1, 0x1f);		/* shl ecx, 31 */
	EMIT(&c, 0x09, 0xc8);			/* or eax, ecx: 0 or 0x80000001 */
	EMIT(&c, 0x31, 0xc9);			/* xor ecx, ecx: subleaf 0 */
	emit_tally(&c, T_CPUID);
	ent->label[L_CPUID] = c.len;
	EMIT(&c, 0x0f, 0xa2);			/* cpuid */
	emit_loop_tail(&c, 1, loop, skip);

	/* Not the TSC: VMX lets the guest read that one without an exit. */
	skip = emit_loop_head(&c, K_MSR, 1);
	loop = c.len;
	EMIT(&c, 0xb9);				/* mov ecx, MSR_IA32_UCODE_REV */
	emit_imm32(&c, MSR_IA32_UCODE_REV);
	emit_tally(&c, T_RDMSR);
	ent->label[L_RDMSR] = c.len;
	EMIT(&c, 0x0f, 0x32);			/* rdmsr */
	emit_loop_tail(&c, 1, loop, skip);

	skip = emit_loop_head(&c, K_WRMSR, 1);
	loop = c.len;
	emit_wrmsr(&c, MSR_IA32_UCODE_REV, 0);
	ent->label[L_WRMSR] = c.len - 2;	/* the wrmsr itself */
	emit_loop_tail(&c, 1, loop, skip);

	/*
	 * Control registers: read CR8, write it back unchanged (without an in-kernel APIC, VMX
	 * exits on both; an unchanged TPR never exits to the VMM), and flip CR0.MP, a bit KVM
	 * owns, so the write exits too.
	 */
	skip = emit_loop_head(&c, K_CR, 0);
	loop = c.len;
	ent->label[L_CR] = c.len;
	emit_tally(&c, T_CR_READ);
	EMIT(&c, 0x44, 0x0f, 0x20, 0xc0);	/* mov rax, cr8 */
	emit_tally(&c, T_CR_WRITE);
	EMIT(&c, 0x44, 0x0f, 0x22, 0xc0);	/* mov cr8, rax */
	EMIT(&c, 0x0f, 0x20, 0xc0);		/* mov rax, cr0 */
	EMIT(&c, 0x48, 0x83, 0xf0, 0x02);	/* xor rax, CR0_MP */
	emit_tally(&c, T_CR_WRITE);
	EMIT(&c, 0x0f, 0x22, 0xc0);		/* mov cr0, rax */
	emit_loop_tail(&c, 0, loop, skip);

	skip = emit_loop_head(&c, K_VMCALL, 0);
	loop = c.len;
	EMIT(&c, 0xb8);				/* mov eax, HC_UNKNOWN */
	emit_imm32(&c, HC_UNKNOWN);
	emit_tally(&c, T_VMCALL);
	ent->label[L_VMCALL] = c.len;
	if (amd)
		EMIT(&c, 0x0f, 0x01, 0xd9);	/* vmmcall */
	else
		EMIT(&c, 0x0f, 0x01, 0xc1);	/* vmcall */
	emit_loop_tail(&c, 0, loop, skip);

	/* ud2: KVM intercepts #UD and reflects it; the handler counts it and skips the ud2. */
	skip = emit_loop_head(&c, K_UD, 0);
	loop = c.len;
	ent->label[L_UD] = c.len;
	EMIT(&c, 0x0f, 0x0b);			/* ud2 */
	emit_loop_tail(&c, 0, loop, skip);

	/*
	 * Timer interrupts from the in-kernel local APIC, in x2APIC mode (MSR accesses, no MMIO
	 * page to map): enable it, then per count arm a one-shot timer and halt until the
	 * handler has counted the interrupt. The check and the hlt run with interrupts off up
	 * to "sti; hlt" (sti's shadow), so an early interrupt cannot be missed.
	 */
	skip = emit_loop_head(&c, K_TIMER, 2);
	ent->label[L_TIMER] = c.len;
	emit_apic_enable(&c);
	emit_wrmsr(&c, X2APIC_TDCR, 0xb);			/* divide by 1 */
	emit_wrmsr(&c, X2APIC_LVTT, TIMER_VECTOR);		/* one-shot */
	loop = c.len;
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0x49, 0x8b, 0x5f, 8 * T_IRQ);	/* mov rbx, [r15 + T_IRQ] */
	emit_wrmsr(&c, X2APIC_TMICT, timer_us * TIMER_COUNTS_PER_US);
	wait = c.len;
	EMIT(&c, 0x49, 0x39, 0x5f, 8 * T_IRQ);	/* cmp [r15 + T_IRQ], rbx */
	got = emit_jcc_fwd(&c, JNZ);
	emit_tally(&c, T_HLT);
	EMIT(&c, 0xfb);				/* sti */
	hlt_at = c.len;
	EMIT(&c, 0xf4);				/* hlt */
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0xeb, (uint8_t)(wait - (c.len + 2)));	/* jmp wait */
	patch_here(&c, got);
	EMIT(&c, 0xfb);				/* sti */
	emit_loop_tail(&c, 2, loop, skip);

	/*
	 * MSIs from the VMM (--msi): per count, ask for one (an out to MSI_PORT) with interrupts
	 * off, then halt as the timer loop does until the handler has counted it; the VMM's
	 * injector signals it --msi-delay-us later, so the vCPU is halted by then.
	 */
	skip = emit_loop_head(&c, K_MSI, 2);
	emit_apic_enable(&c);
	loop = c.len;
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0x49, 0x8b, 0x5f, 8 * T_IRQ);	/* mov rbx, [r15 + T_IRQ] */
	emit_msi_request(&c, MSI_PORT);
	wait = c.len;
	EMIT(&c, 0x49, 0x39, 0x5f, 8 * T_IRQ);	/* cmp [r15 + T_IRQ], rbx */
	got = emit_jcc_fwd(&c, JNZ);
	emit_tally(&c, T_HLT);
	EMIT(&c, 0xfb);				/* sti */
	msi_hlt_at = c.len;
	EMIT(&c, 0xf4);				/* hlt */
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0xeb, (uint8_t)(wait - (c.len + 2)));	/* jmp wait */
	patch_here(&c, got);
	EMIT(&c, 0xfb);				/* sti */
	emit_loop_tail(&c, 2, loop, skip);

	/* --msi-spin: the same, but spinning in guest mode with interrupts on until it comes. */
	skip = emit_loop_head(&c, K_MSI_SPIN, 2);
	emit_apic_enable(&c);
	loop = c.len;
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0x49, 0x8b, 0x5f, 8 * T_IRQ);	/* mov rbx, [r15 + T_IRQ] */
	emit_msi_request(&c, MSI_SPIN_PORT);
	EMIT(&c, 0xfb);				/* sti */
	wait = c.len;
	EMIT(&c, 0xf3, 0x90);			/* pause */
	EMIT(&c, 0x49, 0x39, 0x5f, 8 * T_IRQ);	/* cmp [r15 + T_IRQ], rbx */
	emit_jcc_back(&c, JZ, wait);
	emit_loop_tail(&c, 2, loop, skip);

	/*
	 * --ipi N: vCPU 0 sends N fixed IPIs (IPI_VECTOR) to vCPU 1 by x2APIC ICR writes, each
	 * while vCPU 1 is halted for it. vCPU 1, per count: with interrupts off, announces its
	 * halt (an out to IPI_READY_PORT), then halts as the timer loop does until its handler
	 * has counted the IPI. vCPU 0, per count: an out to IPI_PORT, for which the VMM waits for
	 * that announcement and then --ipi-delay-us more (by then vCPU 1 has reached its hlt),
	 * then writes the ICR. Both wait asleep in the VMM: a vCPU spinning in guest mode, or a
	 * VMM thread polling, would take the CPU from the other vCPU where they share one (the
	 * SVM bed's). vCPUs 2 and up only enable their APIC.
	 * r12 is the vCPU's index.
	 * Longer than a short jump reaches: the skip is a near one.
	 */
	EMIT(&c, 0x4c, 0x8b, 0x4e, 8 * K_IPI);	/* mov r9, [rsi + 8*K_IPI] */
	EMIT(&c, 0x4d, 0x85, 0xc9);		/* test r9, r9 */
	skip = emit_jcc_fwd32(&c, JZ);
	emit_apic_enable(&c);
	EMIT(&c, 0x49, 0x83, 0xfc, 0x01);	/* cmp r12, 1 */
	recv = emit_jcc_fwd(&c, JZ);
	EMIT(&c, 0x4d, 0x85, 0xe4);		/* test r12, r12 */
	fix = emit_jcc_fwd(&c, JNZ);		/* vCPUs 2+: done */
	loop = c.len;
	emit_msi_request(&c, IPI_PORT);		/* the VMM's wait */
	EMIT(&c, 0xb9);				/* mov ecx, X2APIC_ICR */
	emit_imm32(&c, X2APIC_ICR);
	EMIT(&c, 0xb8);				/* mov eax, fixed | assert | IPI_VECTOR */
	emit_imm32(&c, ICR_FIXED_ASSERT | IPI_VECTOR);
	EMIT(&c, 0xba);				/* mov edx, 1: destination x2APIC ID (vCPU 1) */
	emit_imm32(&c, 1);
	emit_tally(&c, T_IPI_SENT);
	emit_tally(&c, T_WRMSR);
	ent->label[L_IPI] = c.len;
	EMIT(&c, 0x0f, 0x30);			/* wrmsr */
	EMIT(&c, 0x49, 0xff, 0xc9);		/* dec r9 */
	emit_jcc_back(&c, JNZ, loop);
	fix2 = emit_jcc_fwd(&c, 0xeb);		/* jmp done */
	patch_here(&c, recv);
	loop = c.len;
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0x49, 0x8b, 0x5f, 8 * T_IPI);	/* mov rbx, [r15 + T_IPI] */
	emit_msi_request(&c, IPI_READY_PORT);	/* the announcement */
	wait = c.len;
	EMIT(&c, 0x49, 0x39, 0x5f, 8 * T_IPI);	/* cmp [r15 + T_IPI], rbx */
	got = emit_jcc_fwd(&c, JNZ);
	emit_tally(&c, T_HLT);
	EMIT(&c, 0xfb);				/* sti */
	ipi_hlt_at = c.len;
	EMIT(&c, 0xf4);				/* hlt */
	EMIT(&c, 0xfa);				/* cli */
	EMIT(&c, 0xeb, (uint8_t)(wait - (c.len + 2)));	/* jmp wait */
	patch_here(&c, got);
	EMIT(&c, 0xfb);				/* sti */
	EMIT(&c, 0x49, 0xff, 0xc9);		/* dec r9 */
	emit_jcc_back(&c, JNZ, loop);
	patch_here(&c, fix);
	patch_here(&c, fix2);
	patch_here32(&c, skip);

	/* touch: a byte into each of this vCPU's pages (r13: its first, set by the VMM) */
	skip = emit_loop_head(&c, K_TOUCH, 0);
	EMIT(&c, 0x4c, 0x89, 0xef);		/* mov rdi, r13 */
	loop = c.len;
	emit_tally(&c, T_TOUCH);
	EMIT(&c, 0x88, 0x07);			/* mov [rdi], al */
	EMIT(&c, 0x48, 0x81, 0xc7);		/* add rdi, DATA_PAGE */
	emit_imm32(&c, DATA_PAGE);
	emit_loop_tail(&c, 0, loop, skip);

	/* Tell the VMM the pass is complete; if it resumes us, start over. */
	EMIT(&c, 0xba);				/* mov edx, DONE_PORT */
	emit_imm32(&c, DONE_PORT);
	emit_tally(&c, T_OUT);
	ent->label[L_DONE] = c.len;
	EMIT(&c, 0xee);				/* out dx, al */
	EMIT(&c, 0xe9);				/* jmp start (rel32) */
	emit_imm32(&c, (uint32_t)(start - (c.len + 4)));

	/* #UD: count it, step over the 2-byte ud2, resume. */
	ent->exc[UD_VECTOR] = c.len;
	ent->label[L_UD_HANDLER] = c.len;
	emit_tally(&c, T_UD);
	EMIT(&c, 0x48, 0x83, 0x04, 0x24, 0x02);	/* add qword [rsp], 2 */
	EMIT(&c, 0x48, 0xcf);			/* iretq */

	/* IPI: counted as such, then as any interrupt, by the timer's handler right below. */
	ent->ipi = c.len;
	ent->label[L_IPI_HANDLER] = c.len;
	emit_tally(&c, T_IPI);

	/*
	 * Timer: count it, EOI (one more wrmsr), resume. An interrupt taken with the hlt of a
	 * wait loop as its return address would halt the vCPU for good (no timer is armed any
	 * more): step over that hlt and take back its tally. sti's shadow should make this
	 * impossible, but QEMU TCG's nested SVM loses the shadow across a #VMEXIT (seen in the
	 * SVM bed: an INTR exit at the hlt, then a VINTR exit at the same RIP, the interrupt
	 * delivered before the hlt ran, the vCPU blocked in kvm_vcpu_halt for ever, 1 run in 6).
	 */
	ent->timer = c.len;
	ent->label[L_TIMER_HANDLER] = c.len;
	emit_tally(&c, T_IRQ);
	EMIT(&c, 0x50, 0x51, 0x52);		/* push rax; push rcx; push rdx */
	emit_wrmsr(&c, X2APIC_EOI, 0);
	EMIT(&c, 0x5a, 0x59, 0x58);		/* pop rdx; pop rcx; pop rax */
	EMIT(&c, 0x48, 0x81, 0x3c, 0x24);	/* cmp qword [rsp], CODE_GPA + hlt_at */
	emit_imm32(&c, (uint32_t)(CODE_GPA + hlt_at));
	fix = emit_jcc_fwd(&c, JZ);
	EMIT(&c, 0x48, 0x81, 0x3c, 0x24);	/* cmp qword [rsp], CODE_GPA + msi_hlt_at */
	emit_imm32(&c, (uint32_t)(CODE_GPA + msi_hlt_at));
	fix2 = emit_jcc_fwd(&c, JZ);
	EMIT(&c, 0x48, 0x81, 0x3c, 0x24);	/* cmp qword [rsp], CODE_GPA + ipi_hlt_at */
	emit_imm32(&c, (uint32_t)(CODE_GPA + ipi_hlt_at));
	EMIT(&c, 0x75, 9);			/* jne iretq */
	patch_here(&c, fix);
	patch_here(&c, fix2);
	EMIT(&c, 0x48, 0x83, 0x04, 0x24, 0x01);	/* add qword [rsp], 1 */
	EMIT(&c, 0x49, 0xff, 0x4f, 8 * T_HLT);	/* dec qword [r15 + T_HLT] */
	EMIT(&c, 0x48, 0xcf);			/* iretq */

	ent->spurious = c.len;
	ent->label[L_SPURIOUS] = c.len;
	EMIT(&c, 0x48, 0xcf);			/* iretq (no EOI for a spurious interrupt) */

	/* Any other exception: its vector out to EXC_PORT, for the VMM to report and fail. */
	common = c.len;
	ent->label[L_EXCEPTION] = c.len;
	EMIT(&c, 0xba);				/* mov edx, EXC_PORT */
	emit_imm32(&c, EXC_PORT);
	EMIT(&c, 0xee);				/* out dx, al */
	EMIT(&c, 0xf4);				/* hlt */
	EMIT(&c, 0xeb, (uint8_t)(common - (c.len + 2)));	/* jmp common */
	for (int v = 0; v < 32; v++) {
		if (v == UD_VECTOR)
			continue;
		ent->exc[v] = c.len;
		EMIT(&c, 0xb0, (uint8_t)v);	/* mov al, v */
		EMIT(&c, 0xe9);			/* jmp common (rel32) */
		emit_imm32(&c, (uint32_t)(common - (c.len + 4)));
	}
	return c.len;
}

/*
 * --symbols: the guest code's labels as a System.map (ADDRESS TYPE NAME, by address), at the
 * guest addresses the code runs at (identity mapped from CODE_GPA): vmexit stat --by rip
 * --guest-symbols NAME=FILE names the exits' RIPs with it. The layout does not depend on the
 * mix, so one file serves every run.
 */
static int write_symbols(const struct opts *o)
{
	static uint8_t code[PML4_GPA - CODE_GPA];
	struct guest_entries ent = {};
	FILE *f = fopen(o->symbols, "w");
	int rc = 0;

	if (!f) {
		errmsg("--symbols %s: %s", o->symbols, strerror(errno));
		return 1;
	}
	build_guest(code, o->amd, o->timer_us, o->trace_out, &ent);
	for (int l = 0; l < NR_LABELS; l++)
		fprintf(f, "%016llx %c %s\n", CODE_GPA + ent.label[l], l == L_START ? 'T' : 't',
			label_name[l]);
	if (ferror(f) | fclose(f)) {
		errmsg("--symbols %s: cannot write: %s", o->symbols, strerror(errno));
		rc = 1;
	}
	return rc;
}

/* ------------------------------------------------------------------ VM setup */

/* The guest's interrupts come from the in-kernel local APIC (KVM_CREATE_IRQCHIP). */
static bool uses_apic(const struct opts *o)
{
	return o->count[K_TIMER] || o->count[K_MSI] || o->count[K_MSI_SPIN] || o->count[K_IPI];
}


static void timespec_add(struct timespec *t, double s)
{
	long long ns = (long long)(s * 1e9);

	t->tv_sec += ns / 1000000000;
	t->tv_nsec += ns % 1000000000;
	if (t->tv_nsec >= 1000000000) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000;
	}
}

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000ll + (b->tv_nsec - a->tv_nsec));
}

static bool past(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > deadline->tv_sec ||
	       (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

static int open_kvm(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int ver;

	if (fd < 0) {
		int e = errno;

		errmsg("/dev/kvm: %s (%s)", strerror(e),
		       e == ENOENT ? "load kvm and kvm_intel/kvm_amd" :
		       e == EACCES || e == EPERM ? "run as root or join the kvm group" :
		       "is KVM usable on this host?");
		return -1;
	}
	ver = ioctl(fd, KVM_GET_API_VERSION, 0);
	if (ver != KVM_API_VERSION) {
		errmsg("/dev/kvm: API version %d, expected %d", ver, KVM_API_VERSION);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Hand the guest every CPUID leaf KVM supports, as "-cpu host" would, so that cpuid returns
 * real data and long mode is consistent with the guest's CPUID on kernels that check.
 */
static struct kvm_cpuid2 *supported_cpuid(int kvm_fd)
{
	for (unsigned int n = 64; n <= 4096; n *= 2) {
		struct kvm_cpuid2 *c = calloc(1, sizeof(*c) + n * sizeof(c->entries[0]));

		if (!c)
			return NULL;
		c->nent = n;
		if (ioctl(kvm_fd, KVM_GET_SUPPORTED_CPUID, c) == 0)
			return c;
		free(c);
		if (errno != E2BIG)
			return NULL;
	}
	errno = E2BIG;
	return NULL;
}

/*
 * --touch: the pages' own memslot, left untouched by the VMM so that each first touch by the
 * guest faults in the host. 4 KiB pages: a transparent huge page would satisfy 512 touches
 * with one fault.
 */
static int setup_data(struct vm *vm)
{
	struct kvm_userspace_memory_region region;

	vm->data = mmap(NULL, DATA_SIZE, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->data == MAP_FAILED) {
		vm->data = NULL;
		errmsg("%s: --touch memory: %s", vm->name, strerror(errno));
		return -1;
	}
	if (madvise(vm->data, DATA_SIZE, MADV_NOHUGEPAGE))
		errmsg("%s: note: MADV_NOHUGEPAGE: %s", vm->name, strerror(errno));
	if (vm->o->uffd &&
	    uffd_start(&vm->uffd, vm->data, DATA_SIZE, vm->o->uffd_delay_ns, vm->name))
		return -1;
	region = (struct kvm_userspace_memory_region){
		.slot = 1,
		.guest_phys_addr = DATA_GPA,
		.memory_size = DATA_SIZE,
		.userspace_addr = (uintptr_t)vm->data,
	};
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		errmsg("%s: KVM_SET_USER_MEMORY_REGION (--touch): %s", vm->name, strerror(errno));
		return -1;
	}
	return 0;
}

static int setup_memory(struct vm *vm)
{
	struct kvm_userspace_memory_region region;
	uint64_t *pml4, *pdpt, *pd, *gdt;
	struct guest_entries ent;

	memset(&ent, 0, sizeof(ent));
	vm->mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		errmsg("%s: guest memory: %s", vm->name, strerror(errno));
		return -1;
	}
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = MEM_SIZE,
		.userspace_addr = (uintptr_t)vm->mem,
	};
	if (ioctl(vm->vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		errmsg("%s: KVM_SET_USER_MEMORY_REGION: %s", vm->name, strerror(errno));
		return -1;
	}

	/*
	 * Identity map the RAM and the MMIO page with 2 MiB pages. US is set so ring 3 may
	 * use them; ring 0 may too since CR4.SMEP/SMAP stay clear.
	 */
	pml4 = (uint64_t *)(vm->mem + PML4_GPA);
	pdpt = (uint64_t *)(vm->mem + PDPT_GPA);
	pd = (uint64_t *)(vm->mem + PD_GPA);
	pml4[0] = PDPT_GPA | PTE_P | PTE_RW | PTE_US;
	pdpt[0] = PD_GPA | PTE_P | PTE_RW | PTE_US;
	pd[0] = 0 | PTE_P | PTE_RW | PTE_US | PTE_PS;
	pd[MMIO_GPA >> 21] = (MMIO_GPA & ~0x1fffffull) | PTE_P | PTE_RW | PTE_US | PTE_PS;
	if (vm->o->count[K_TOUCH]) {
		if (setup_data(vm))
			return -1;
		pd[DATA_GPA >> 21] = DATA_GPA | PTE_P | PTE_RW | PTE_US | PTE_PS;
	}

	memcpy(vm->mem + PARAM_GPA, vm->o->count, sizeof(vm->o->count));
	build_guest(vm->mem + CODE_GPA, vm->o->amd, vm->o->timer_us, vm->o->trace_out, &ent);

	/* Flat 64-bit code and data segments of the guest's ring, for iretq to reload. */
	gdt = (uint64_t *)(vm->mem + GDT_GPA);
	gdt[1] = 0x00af9b000000ffffull | (uint64_t)vm->o->ring << 45;
	gdt[2] = 0x00cf93000000ffffull | (uint64_t)vm->o->ring << 45;
	/* 64-bit interrupt gates (IF cleared on entry) to the handlers build_guest placed. */
	for (int v = 0; v < 256; v++) {
		size_t off = v < 32 ? ent.exc[v] :
			     v == TIMER_VECTOR || v == MSI_VECTOR || v == MSI_SPIN_VECTOR ? ent.timer :
			     v == IPI_VECTOR ? ent.ipi :
			     v == SPURIOUS_VECTOR ? ent.spurious : 0;
		uint64_t a = CODE_GPA + off, *gate = (uint64_t *)(vm->mem + IDT_GPA + 16 * v);

		if (!off)
			continue;
		gate[0] = (a & 0xffff) | (1ull << 3) << 16 | 0x8eull << 40 | (a >> 16 & 0xffff) << 48;
		gate[1] = a >> 32;
	}
	return 0;
}

static int setup_vcpu(struct vm *vm, struct vcpu *v)
{
	int ring = vm->o->ring;
	struct kvm_segment code_seg = {
		.base = 0, .limit = 0xffffffff, .selector = (1 << 3) | ring,
		.type = 11, .present = 1, .dpl = ring, .db = 0, .s = 1, .l = 1, .g = 1,
	};
	struct kvm_segment data_seg = {
		.base = 0, .limit = 0xffffffff, .selector = (2 << 3) | ring,
		.type = 3, .present = 1, .dpl = ring, .db = 1, .s = 1, .l = 0, .g = 1,
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	v->fd = ioctl(vm->vm_fd, KVM_CREATE_VCPU, v->index);
	if (v->fd < 0) {
		errmsg("%s: KVM_CREATE_VCPU %d: %s", vm->name, v->index, strerror(errno));
		return -1;
	}
	/* Held until exit: a reader takes them with pidfd_getfd() (the ioctl is the VMM's). */
	v->stats_fd = vm->o->stats_fds ? ioctl(v->fd, KVM_GET_STATS_FD, NULL) : -1;
	if (vm->o->stats_fds && v->stats_fd < 0) {
		errmsg("%s: KVM_GET_STATS_FD on vCPU %d: %s", vm->name, v->index, strerror(errno));
		return -1;
	}
	v->run = mmap(NULL, vm->run_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		errmsg("%s: mmap kvm_run: %s", vm->name, strerror(errno));
		return -1;
	}
	/* With an in-kernel APIC, vCPUs other than 0 would wait for INIT/SIPI: start them. */
	if (uses_apic(vm->o)) {
		struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };

		if (ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0) {
			errmsg("%s: KVM_SET_MP_STATE: %s", vm->name, strerror(errno));
			return -1;
		}
	}
	if (vm->o->tsc_offset_given && set_tsc_offset(v->fd, vm->o->tsc_offset, vm->name))
		return -1;
	if (vm->cpuid && ioctl(v->fd, KVM_SET_CPUID2, vm->cpuid) < 0) {
		errmsg("%s: KVM_SET_CPUID2: %s", vm->name, strerror(errno));
		return -1;
	}
	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0) {
		errmsg("%s: KVM_GET_SREGS: %s", vm->name, strerror(errno));
		return -1;
	}
	/*
	 * Straight into 64-bit mode at CPL = ring: no boot code. The descriptor tables are only
	 * read by exceptions, interrupts and iretq.
	 */
	sregs.cr0 = CR0_PE | CR0_ET | CR0_WP | CR0_PG;
	sregs.cr3 = PML4_GPA;
	sregs.cr4 = CR4_PAE;
	sregs.efer = EFER_LME | EFER_LMA;
	sregs.gdt = (struct kvm_dtable){ .base = GDT_GPA, .limit = 3 * 8 - 1 };
	sregs.idt = (struct kvm_dtable){ .base = IDT_GPA, .limit = 256 * 16 - 1 };
	sregs.cs = code_seg;
	sregs.ds = sregs.es = sregs.fs = sregs.gs = sregs.ss = data_seg;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0) {
		errmsg("%s: KVM_SET_SREGS (ring %d): %s", vm->name, ring, strerror(errno));
		return -1;
	}
	memset(&regs, 0, sizeof(regs));
	regs.rip = CODE_GPA;
	regs.rsp = MEM_SIZE - STACK_SIZE * v->index;
	regs.r15 = TALLY_GPA + TALLY_SIZE * v->index;
	regs.r14 = STAMP_GPA + STAMP_SIZE * v->index;
	regs.r13 = DATA_GPA + DATA_PAGE * vm->o->count[K_TOUCH] * v->index;
	regs.r12 = v->index;
	regs.rflags = GUEST_RFLAGS;
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0) {
		errmsg("%s: KVM_SET_REGS: %s", vm->name, strerror(errno));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ vCPU loop */

static void report_bad_exit(struct vcpu *v)
{
	struct kvm_run *r = v->run;
	struct kvm_regs regs;
	char buf[32], where[64] = "";
	const char *n = exit_name(r->exit_reason, buf, sizeof(buf));

	if (ioctl(v->fd, KVM_GET_REGS, &regs) == 0)
		snprintf(where, sizeof(where), " at rip 0x%llx", regs.rip);

	switch (r->exit_reason) {
	case KVM_EXIT_INTERNAL_ERROR:
		errmsg("%s vCPU %d: unexpected KVM_EXIT_INTERNAL_ERROR suberror %u%s",
		       v->vm->name, v->index, r->internal.suberror, where);
		break;
	case KVM_EXIT_FAIL_ENTRY:
		errmsg("%s vCPU %d: unexpected KVM_EXIT_FAIL_ENTRY hardware reason 0x%llx cpu %u%s",
		       v->vm->name, v->index,
		       (unsigned long long)r->fail_entry.hardware_entry_failure_reason,
		       r->fail_entry.cpu, where);
		break;
	case KVM_EXIT_IO:
		errmsg("%s vCPU %d: unexpected KVM_EXIT_IO %s port 0x%x size %u count %u%s",
		       v->vm->name, v->index, r->io.direction == KVM_EXIT_IO_OUT ? "out" : "in",
		       r->io.port, r->io.size, r->io.count, where);
		break;
	case KVM_EXIT_MMIO:
		errmsg("%s vCPU %d: unexpected KVM_EXIT_MMIO %s 0x%llx len %u%s",
		       v->vm->name, v->index, r->mmio.is_write ? "write" : "read",
		       (unsigned long long)r->mmio.phys_addr, r->mmio.len, where);
		break;
	case KVM_EXIT_SHUTDOWN:
		errmsg("%s vCPU %d: unexpected KVM_EXIT_SHUTDOWN (guest triple fault: an "
		       "instruction faulted in ring %d)%s", v->vm->name, v->index, v->vm->o->ring,
		       where);
		break;
	default:
		errmsg("%s vCPU %d: unexpected KVM_EXIT_%s (%u)%s", v->vm->name, v->index, n,
		       r->exit_reason, where);
	}
}

static void tally(struct vcpu *v, uint32_t reason)
{
	v->exits[reason < NR_EXIT_NAMES ? reason : NR_EXIT_NAMES]++;
}

static const uint64_t *tally_of(const struct vcpu *v)
{
	return (const uint64_t *)(v->vm->mem + TALLY_GPA + TALLY_SIZE * v->index);
}

/*
 * At the end of a pass: the guest's own tally must be what its code does per pass, for every
 * slot but hlt (with --timer, how often it halts depends on when the interrupt comes).
 */
static int check_tally(const struct vcpu *v)
{
	const uint64_t *n = v->vm->o->count, *t = tally_of(v), p = v->passes + 1;
	/*
	 * --ipi: vCPU 0 sends (one out and one ICR wrmsr per IPI), vCPU 1 receives (one out for
	 * its announcement, one EOI).
	 */
	uint64_t ipi_out = v->index == 0 ? n[K_IPI] : 0, ipi_in = v->index == 1 ? n[K_IPI] : 0;
	uint64_t want[NR_TALLY] = {
		/* msi: one out per MSI asked for */
		[T_OUT] = n[K_IO] + 1 + n[K_MSI] + n[K_MSI_SPIN] + ipi_out + ipi_in,
		[T_MMIO] = n[K_MMIO],
		[T_HLT] = n[K_HLT],
		[T_CPUID] = n[K_CPUID],
		[T_RDMSR] = n[K_MSR] + !!n[K_TIMER] + !!n[K_MSI] + !!n[K_MSI_SPIN] + !!n[K_IPI],
		/* timer: APIC base, SVR, TDCR, LVTT once; TMICT and EOI per interrupt. msi: APIC
		 * base and SVR once; EOI per interrupt. ipi: APIC base and SVR once on every vCPU */
		[T_WRMSR] = n[K_WRMSR] + (n[K_TIMER] ? 4 + 2 * n[K_TIMER] : 0) +
			    (n[K_MSI] ? 2 + n[K_MSI] : 0) + (n[K_MSI_SPIN] ? 2 + n[K_MSI_SPIN] : 0) +
			    (n[K_IPI] ? 2 : 0) + ipi_out + ipi_in,
		[T_CR_READ] = n[K_CR], [T_CR_WRITE] = 2 * n[K_CR], [T_VMCALL] = n[K_VMCALL],
		[T_UD] = n[K_UD], [T_IRQ] = n[K_TIMER] + n[K_MSI] + n[K_MSI_SPIN] + ipi_in,
		[T_IN] = n[K_IN], [T_TOUCH] = n[K_TOUCH], [T_IPI_SENT] = ipi_out, [T_IPI] = ipi_in,
	};

	for (int i = 0; i < NR_TALLY; i++) {
		if (t[i] == p * want[i] || (i == T_HLT && (n[K_TIMER] || n[K_MSI] || ipi_in)))
			continue;
		errmsg("%s vCPU %d: after pass %" PRIu64 " the guest counted %" PRIu64 " %s, "
		       "expected %" PRIu64, v->vm->name, v->index, p, t[i], tally_name[i],
		       p * want[i]);
		return -1;
	}
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The scheduler state of a thread of ours ('R', 'S', ...), or 0 if it cannot be read. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "tid (comm) S ...": the comm may hold spaces and parentheses, the last ')' ends it. */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * --msi-asleep: wait (polling every 50 us) until the vCPU's thread sleeps. With an in-kernel APIC
 * the only sleep of a KVM_RUN of this guest is KVM's halt once it stops polling, so the MSI
 * finds the vCPU halted however long a busy host CPU keeps it from reaching its hlt.
 */
static int wait_asleep(const struct vcpu *v)
{
	struct timespec poll = { .tv_nsec = 50000 };
	uint64_t t0 = mono_ns();
	char st;

	while ((st = thread_state(v->tid)) != 'S') {
		if (!st || mono_ns() - t0 > 60000000000ull) {
			errmsg("%s: --msi-asleep: vCPU %d (tid %d) %s", v->vm->name, v->index,
			       (int)v->tid, st ? "did not halt within 60 s" : "has no readable state");
			return -1;
		}
		nanosleep(&poll, NULL);
	}
	return 0;
}

/*
 * --msi-busy-us: the injector spins on after the MSI, as a device model's or vhost thread that
 * signals its vCPU and goes on working on the same host CPU. At SCHED_FIFO it cannot be
 * preempted by the vCPU thread it has just woken (the fair class would let that thread preempt
 * it on wake-up, or not, as its vruntime says), so with the VMM pinned to one CPU each such
 * delivery waits on the run-queue for at least US: a known run-queue wait to measure against.
 */
static int busy_attr(pthread_attr_t *a)
{
	struct sched_param sp = { .sched_priority = 1 };
	int e = pthread_attr_setinheritsched(a, PTHREAD_EXPLICIT_SCHED);

	if (!e)
		e = pthread_attr_setschedpolicy(a, SCHED_FIFO);
	if (!e)
		e = pthread_attr_setschedparam(a, &sp);
	return e;
}

static void busy_after_msi(const struct vm *vm)
{
	uint64_t end = mono_ns() + (uint64_t)vm->o->msi_busy_us * 1000;

	while (mono_ns() < end)
		;
}

/*
 * The MSI injector (--msi, --msi-spin): a thread of the VMM, as a device model's would be.
 * Per request, --msi-delay-us later, one fixed edge MSI of MSI_VECTOR to the asking vCPU
 * (physical destination: its APIC ID, which KVM makes its vCPU id).
 */
static void *msi_thread(void *arg)
{
	struct vm *vm = arg;
	uint8_t req[2];	/* the vCPU index, the vector */

	while (read(vm->msi_pipe[0], req, 2) == 2) {
		struct timespec d = { .tv_nsec = (long)vm->o->msi_delay_us * 1000 };
		struct kvm_msi m = { .address_lo = 0xfee00000u | (uint32_t)req[0] << 12,
				     .data = req[1] };
		uint8_t idx = req[0];
		int r;

		nanosleep(&d, NULL);
		if (vm->o->msi_asleep && req[1] == MSI_VECTOR && wait_asleep(&vm->vcpus[idx])) {
			vm->msi_failed = true;
			continue;
		}
		r = ioctl(vm->vm_fd, KVM_SIGNAL_MSI, &m);
		if (r <= 0) {
			errmsg("%s: KVM_SIGNAL_MSI to vCPU %u: %s", vm->name, idx,
			       r < 0 ? strerror(errno) : "not delivered");
			vm->msi_failed = true;
			continue;
		}
		vm->msi_ns_last = mono_ns();
		if (!vm->msis++)
			vm->msi_ns_first = vm->msi_ns_last;
		if (req[1] == MSI_VECTOR)
			busy_after_msi(vm);
	}
	return NULL;
}

/*
 * --ipi, vCPU 0's out to IPI_PORT: wait (asleep) for vCPU 1's announcement of its halt for the
 * next IPI, then --ipi-delay-us more for it to reach the hlt.
 */
static int ipi_wait(struct vcpu *v)
{
	struct timespec d = { .tv_nsec = (long)v->vm->o->ipi_delay_us * 1000 }, until;

	/* vCPU 1 failed, or is stuck: say so rather than wait for ever. */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	while (sem_timedwait(&v->vm->ipi_ready, &until)) {
		if (errno == EINTR)
			continue;
		errmsg("%s vCPU 0: vCPU 1 did not announce its halt for IPI %" PRIu64 ": %s",
		       v->vm->name, tally_of(v)[T_IPI_SENT] + 1, strerror(errno));
		return -1;
	}
	while (nanosleep(&d, &d) && errno == EINTR)
		;
	return 0;
}

/*
 * --msi-spin, a vCPU's first request of a pass: wait (asleep) until every vCPU has made its own.
 * A vCPU spinning in guest mode holds its host CPU until preempted; on a host of one CPU (the
 * SVM bed's) a sibling still in its --timer or --msi phase would then take its interrupts while
 * waiting for that CPU, in an exit rather than halted. No phase that halts runs beside a spin.
 */
static int spin_line(struct vcpu *v)
{
	struct vm *vm = v->vm;
	struct timespec until;
	uint64_t gen;
	int err = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	pthread_mutex_lock(&vm->spin_mu);
	gen = vm->spin_gen;
	if (++vm->spin_arrived == vm->o->vcpus) {
		vm->spin_arrived = 0;
		vm->spin_gen++;
		pthread_cond_broadcast(&vm->spin_cv);
	}
	while (vm->spin_gen == gen && !err)
		err = pthread_cond_timedwait(&vm->spin_cv, &vm->spin_mu, &until);
	pthread_mutex_unlock(&vm->spin_mu);
	if (vm->spin_gen == gen) {
		/* A sibling failed or is stuck: say so rather than wait for ever. */
		errmsg("%s vCPU %d: the other vCPUs did not reach --msi-spin within 60 s: %s",
		       vm->name, v->index, strerror(err));
		return -1;
	}
	return 0;
}

/*
 * --seconds, a pass just ended: whether this vCPU makes another. The number of passes is decided
 * once for the VM, by the first vCPU to find the deadline past, as the most any vCPU has begun:
 * every vCPU makes as many. Each deciding alone, vCPU 0 could begin a pass whose IPIs wait for
 * a vCPU 1 that had stopped (and --msi-spin's start line for a sibling that never comes).
 */
static bool pass_again(struct vcpu *v)
{
	struct vm *vm = v->vm;
	bool again;

	pthread_mutex_lock(&vm->pass_mu);
	if (!vm->last_pass && past(&vm->deadline)) {
		for (unsigned long i = 0; i < vm->o->vcpus; i++)
			if (vm->vcpus[i].started > vm->last_pass)
				vm->last_pass = vm->vcpus[i].started;
	}
	again = !vm->last_pass || v->passes < vm->last_pass;
	if (again)
		v->started = v->passes + 1;
	pthread_mutex_unlock(&vm->pass_mu);
	return again;
}

/* What the VMM does with an --io exit: nothing, or sleep and/or spin as asked. */
static void handle_io(const struct opts *o)
{
	struct timespec t0, t;

	if (o->io_sleep_ns) {
		t.tv_sec = o->io_sleep_ns / 1000000000;
		t.tv_nsec = o->io_sleep_ns % 1000000000;
		while (nanosleep(&t, &t) && errno == EINTR)
			;
	}
	if (o->io_spin_ns) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		while (ns_between(&t0, &t) < o->io_spin_ns);
	}
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	const struct opts *o = v->vm->o;
	struct kvm_run *r = v->run;
	uint64_t pass[NR_KINDS] = { 0 };
	struct timespec t0, t1;
	char tname[16];

	v->tid = (pid_t)syscall(SYS_gettid);
	/* QEMU's vCPU thread name with debug-threads=on; tracers map it to a vCPU index. */
	snprintf(tname, sizeof(tname), "CPU %d/KVM", v->index);
	pthread_setname_np(pthread_self(), tname);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			/* Nothing here sends signals, but a debugger or SIGSTOP might. */
			if (errno == EINTR || errno == EAGAIN) {
				v->runs++;
				v->eintr++;
				continue;
			}
			errmsg("%s vCPU %d: KVM_RUN: %s", v->vm->name, v->index, strerror(errno));
			goto fail;
		}
		v->runs++;
		tally(v, r->exit_reason);

		if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_OUT &&
		    r->io.size == 1 && r->io.count == 1 && r->io.port == IO_PORT) {
			pass[K_IO]++;
			handle_io(o);
		} else if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_IN &&
			   r->io.size == 1 && r->io.count == 1 && r->io.port == IN_PORT) {
			pass[K_IN]++;
			*((uint8_t *)r + r->io.data_offset) = 0x5a;
		} else if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_OUT &&
			   r->io.size == 1 && r->io.count == 1 &&
			   (r->io.port == MSI_PORT || r->io.port == MSI_SPIN_PORT)) {
			uint8_t req[2] = { (uint8_t)v->index,
					   r->io.port == MSI_PORT ? MSI_VECTOR : MSI_SPIN_VECTOR };

			if (r->io.port == MSI_SPIN_PORT && !v->spin_asks++ && spin_line(v))
				goto fail;
			if (write(v->vm->msi_pipe[1], req, 2) != 2) {
				errmsg("%s vCPU %d: cannot ask for an MSI: %s", v->vm->name,
				       v->index, strerror(errno));
				goto fail;
			}
		} else if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_OUT &&
			   r->io.size == 1 && r->io.count == 1 && r->io.port == IPI_PORT &&
			   v->index == 0) {
			pass[K_IPI]++;
			if (ipi_wait(v))
				goto fail;
		} else if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_OUT &&
			   r->io.size == 1 && r->io.count == 1 && r->io.port == IPI_READY_PORT &&
			   v->index == 1) {
			pass[K_IPI]++;
			sem_post(&v->vm->ipi_ready);
		} else if (r->exit_reason == KVM_EXIT_MMIO && r->mmio.is_write &&
			   r->mmio.len == 1 && r->mmio.phys_addr == MMIO_GPA) {
			pass[K_MMIO]++;
		} else if (r->exit_reason == KVM_EXIT_HLT) {
			pass[K_HLT]++;
		} else if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_OUT &&
			   r->io.size == 1 && r->io.count == 1 && r->io.port == EXC_PORT) {
			errmsg("%s vCPU %d: the guest took exception vector %u (not one it provokes)",
			       v->vm->name, v->index, *((uint8_t *)r + r->io.data_offset));
			goto fail;
		} else if (r->exit_reason == KVM_EXIT_IO && r->io.direction == KVM_EXIT_IO_OUT &&
			   r->io.size == 1 && r->io.count == 1 && r->io.port == DONE_PORT) {
			v->spin_asks = 0;
			if (check_tally(v))
				goto fail;
			for (int k = K_IO; k < NR_KINDS; k++) {
				if ((k > K_HLT && k != K_IN && k != K_IPI) ||
				    pass[k] == (k != K_IPI || v->index < 2 ? o->count[k] : 0))
					continue;
				errmsg("%s vCPU %d: pass %" PRIu64 " made %" PRIu64 " --%s exits, "
				       "expected %" PRIu64, v->vm->name, v->index, v->passes + 1,
				       pass[k], kind_opt[k], o->count[k]);
				goto fail;
			}
			memset(pass, 0, sizeof(pass));
			v->passes++;
			if (o->seconds <= 0 || !pass_again(v))
				break;
		} else {
			report_bad_exit(v);
			goto fail;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	v->ns = ns_between(&t0, &t1);
	return NULL;
fail:
	v->failed = true;
	return NULL;
}

/* ------------------------------------------------------------------ output */

struct sbuf {
	char *p;
	size_t len, cap;
};

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < s->cap - s->len) {
			s->len += n;
			return;
		}
		s->cap = s->cap * 2 + n + 64;
		s->p = realloc(s->p, s->cap);
		if (!s->p) {
			errmsg("out of memory");
			exit(1);
		}
	}
}

static void write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= n;
	}
}

static void print_json(const struct vm *vm)
{
	const struct opts *o = vm->o;
	struct sbuf s = { .p = malloc(256), .cap = 256 };
	struct guest_kvm_stats ks;
	char buf[32];

	if (!s.p)
		return;
	/* NAME is restricted to [A-Za-z0-9._-] by the argument parser: no escaping needed. */
	sb_printf(&s, "{\"pid\":%d,\"name\":\"%s\",\"ring\":%d,\"mix\":{", (int)getpid(), vm->name,
		  o->ring);
	for (int k = 0; k < NR_KINDS; k++)
		sb_printf(&s, "%s\"%s\":%" PRIu64, k ? "," : "", kind_opt[k], o->count[k]);
	sb_printf(&s, "},\"vcpus\":[");
	for (unsigned long i = 0; i < o->vcpus; i++) {
		const struct vcpu *v = &vm->vcpus[i];

		sb_printf(&s, "%s{\"vcpu\":%d,\"tid\":%d,\"passes\":%" PRIu64 ",\"runs\":%" PRIu64
			  ",\"ns\":%" PRIu64 ",\"exits\":{\"IO\":%" PRIu64 ",\"MMIO\":%" PRIu64
			  ",\"HLT\":%" PRIu64, i ? "," : "", v->index, (int)v->tid, v->passes,
			  v->runs, v->ns, v->exits[KVM_EXIT_IO], v->exits[KVM_EXIT_MMIO],
			  v->exits[KVM_EXIT_HLT]);
		for (uint32_t r = 0; r <= NR_EXIT_NAMES; r++) {
			if (r == KVM_EXIT_IO || r == KVM_EXIT_MMIO || r == KVM_EXIT_HLT ||
			    !v->exits[r])
				continue;
			sb_printf(&s, ",\"%s\":%" PRIu64,
				  r == NR_EXIT_NAMES ? "OTHER" : exit_name(r, buf, sizeof(buf)),
				  v->exits[r]);
		}
		if (v->eintr)
			sb_printf(&s, ",\"EINTR\":%" PRIu64, v->eintr);
		sb_printf(&s, "},\"tally\":{");
		for (int t = 0; t < NR_TALLY; t++)
			sb_printf(&s, "%s\"%s\":%" PRIu64, t ? "," : "", tally_name[t], tally_of(v)[t]);
		sb_printf(&s, "}");
		/* KVM's own counters of the vCPU (vmexit_guest_kvm_stats.h), where it has them. */
		if (!guest_kvm_stats_read(v->fd, v->stats_fd, &ks)) {
			bool first = true;

			sb_printf(&s, ",\"kvm\":{");
			for (size_t k = 0; k < NR_GUEST_KVM_STATS; k++) {
				if (!ks.found[k])
					continue;
				sb_printf(&s, "%s\"%s\":%" PRIu64, first ? "" : ",",
					  guest_kvm_stat_name[k], ks.value[k]);
				first = false;
			}
			sb_printf(&s, "}");
		}
		sb_printf(&s, "}");
	}
	sb_printf(&s, "]");
	if (o->uffd)
		sb_printf(&s, ",\"uffd\":{\"faults\":%" PRIu64 ",\"delay_ns\":%" PRIu64 "}",
			  vm->uffd.faults, o->uffd_delay_ns);
	sb_printf(&s, "}\n");
	/* One write: the lines of concurrent VM processes must not interleave. */
	write_all(STDOUT_FILENO, s.p, s.len);
	free(s.p);
}

/* --uffd-delay-us: each --touch page faulted once, on its first pass, and was answered. */
static int uffd_check(struct vm *vm)
{
	uint64_t want = vm->o->vcpus * vm->o->count[K_TOUCH];

	uffd_stop(&vm->uffd);
	if (vm->uffd.faults == want)
		return 0;
	errmsg("%s: userfaultfd answered %" PRIu64 " faults, expected %" PRIu64 " (%lu vCPU(s) "
	       "x --touch %" PRIu64 ")", vm->name, vm->uffd.faults, want, vm->o->vcpus,
	       vm->o->count[K_TOUCH]);
	return -1;
}

static void print_summary(const struct vm *vm)
{
	const struct opts *o = vm->o;
	uint64_t io = 0, mmio = 0, hlt = 0, runs = 0, passes = 0, ns = 0;
	uint64_t pmin = UINT64_MAX, pmax = 0;
	char pbuf[48];

	for (unsigned long i = 0; i < o->vcpus; i++) {
		const struct vcpu *v = &vm->vcpus[i];

		io += v->exits[KVM_EXIT_IO];
		mmio += v->exits[KVM_EXIT_MMIO];
		hlt += v->exits[KVM_EXIT_HLT];
		runs += v->runs;
		passes += v->passes;
		pmin = v->passes < pmin ? v->passes : pmin;
		pmax = v->passes > pmax ? v->passes : pmax;
		ns = v->ns > ns ? v->ns : ns;
	}
	/* vCPUs run independently, so with --seconds their pass counts may differ. */
	if (pmin == pmax)
		snprintf(pbuf, sizeof(pbuf), "%" PRIu64, pmin);
	else
		snprintf(pbuf, sizeof(pbuf), "%" PRIu64 "-%" PRIu64, pmin, pmax);
	errmsg("%s (pid %d, ring %d): %lu vCPU(s) x %s pass(es): %" PRIu64 " KVM_RUN, IO %" PRIu64
	       " MMIO %" PRIu64 " HLT %" PRIu64 ", cpuid %" PRIu64 " rdmsr %" PRIu64
	       " (no userspace exit), %.3f s", vm->name, (int)getpid(), o->ring, o->vcpus, pbuf,
	       runs, io, mmio, hlt, passes * o->count[K_CPUID], passes * o->count[K_MSR], ns / 1e9);
	if (o->count[K_MSI] || o->count[K_MSI_SPIN])
		errmsg("%s: %" PRIu64 " MSIs (vectors 0x%x halted, 0x%x spinning) by KVM_SIGNAL_MSI, "
		       "from %" PRIu64 " to %" PRIu64 " ns (CLOCK_MONOTONIC)", vm->name, vm->msis,
		       MSI_VECTOR, MSI_SPIN_VECTOR, vm->msi_ns_first, vm->msi_ns_last);
	if (o->count[K_IPI])
		errmsg("%s: IPIs (vector 0x%x) from vCPU 0 to halted vCPU 1: %" PRIu64 " sent, %"
		       PRIu64 " handled (the guest's tally)", vm->name, IPI_VECTOR,
		       tally_of(&vm->vcpus[0])[T_IPI_SENT], tally_of(&vm->vcpus[1])[T_IPI]);
}

/* ------------------------------------------------------------------ one VM process */

static void vm_destroy(struct vm *vm)
{
	for (unsigned long i = 0; vm->vcpus && i < vm->o->vcpus; i++) {
		struct vcpu *v = &vm->vcpus[i];

		if (v->run)
			munmap(v->run, vm->run_size);
		if (v->fd >= 0)
			close(v->fd);
	}
	free(vm->vcpus);
	free(vm->cpuid);
	uffd_stop(&vm->uffd);
	if (vm->data)
		munmap(vm->data, DATA_SIZE);
	if (vm->mem)
		munmap(vm->mem, MEM_SIZE);
	if (vm->vm_fd >= 0)
		close(vm->vm_fd);
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
}

/* Builds the VM, runs every vCPU to completion and reports; returns the exit status. */
/* --hold-until: created, not yet run, until path exists (polled: no signal to race with). */
static int hold_until(const char *name, const char *path)
{
	struct timespec t = { .tv_nsec = 10000000 };

	fprintf(stderr, "vmexit-guest: %s: created, held until %s exists\n", name, path);
	while (access(path, F_OK)) {
		if (errno != ENOENT) {
			errmsg("%s: --hold-until %s: %s", name, path, strerror(errno));
			return -1;
		}
		nanosleep(&t, NULL);
	}
	return 0;
}

static int run_vm_once(struct vm *vm)
{
	const struct opts *o = vm->o;
	unsigned long started = 0;
	int mmap_size, rc = 0;
	uint64_t tsc_before, tsc_after;

	vm->kvm_fd = open_kvm();
	if (vm->kvm_fd < 0)
		return 1;
	vm->vm_fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->vm_fd < 0) {
		errmsg("%s: KVM_CREATE_VM: %s", vm->name, strerror(errno));
		return 1;
	}
	if (vm->o->stats_fds && ioctl(vm->vm_fd, KVM_GET_STATS_FD, NULL) < 0) {
		errmsg("%s: KVM_GET_STATS_FD: %s", vm->name, strerror(errno));
		return 1;
	}
	mmap_size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (mmap_size < (int)sizeof(struct kvm_run)) {
		errmsg("%s: KVM_GET_VCPU_MMAP_SIZE: %s", vm->name, strerror(errno));
		return 1;
	}
	vm->run_size = mmap_size;
	/* The timer is the in-kernel local APIC's (which also makes hlt block in the kernel). */
	if (uses_apic(o) && ioctl(vm->vm_fd, KVM_CREATE_IRQCHIP, 0) < 0) {
		errmsg("%s: KVM_CREATE_IRQCHIP: %s", vm->name, strerror(errno));
		return 1;
	}
	/* Without it the vCPUs still run (KVM's empty CPUID); only cpuid's answers differ. */
	vm->cpuid = supported_cpuid(vm->kvm_fd);
	if (setup_memory(vm))
		return 1;

	vm->vcpus = calloc(o->vcpus, sizeof(*vm->vcpus));
	if (!vm->vcpus) {
		errmsg("out of memory");
		return 1;
	}
	for (unsigned long i = 0; i < o->vcpus; i++) {
		vm->vcpus[i].vm = vm;
		vm->vcpus[i].index = (int)i;
		vm->vcpus[i].fd = -1;
		vm->vcpus[i].stats_fd = -1;
		vm->vcpus[i].started = 1;
	}
	for (unsigned long i = 0; i < o->vcpus; i++) {
		if (setup_vcpu(vm, &vm->vcpus[i]))
			return 1;
	}

	if (o->hold && hold_until(vm->name, o->hold))
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &vm->deadline);
	timespec_add(&vm->deadline, o->seconds);
	vm->msi_pipe[0] = vm->msi_pipe[1] = -1;
	pthread_mutex_init(&vm->spin_mu, NULL);
	pthread_mutex_init(&vm->pass_mu, NULL);
	pthread_cond_init(&vm->spin_cv, NULL);
	if (sem_init(&vm->ipi_ready, 0, 0)) {
		errmsg("%s: sem_init: %s", vm->name, strerror(errno));
		return 1;
	}
	if (o->count[K_MSI] || o->count[K_MSI_SPIN]) {
		pthread_attr_t a;
		int e;

		if (pipe(vm->msi_pipe)) {
			errmsg("%s: pipe: %s", vm->name, strerror(errno));
			return 1;
		}
		pthread_attr_init(&a);
		e = o->msi_busy_us ? busy_attr(&a) : 0;
		if (!e)
			e = pthread_create(&vm->msi_thread, &a, msi_thread, vm);
		pthread_attr_destroy(&a);
		if (e) {
			errmsg("%s: %s: %s%s", vm->name, o->msi_busy_us ?
			       "the --msi-busy-us injector at SCHED_FIFO" : "pthread_create",
			       strerror(e), e == EPERM ? " (needs CAP_SYS_NICE)" : "");
			return 1;
		}
	}
	tsc_before = __rdtsc();
	for (; started < o->vcpus; started++) {
		int e = pthread_create(&vm->vcpus[started].thread, NULL, vcpu_thread,
				       &vm->vcpus[started]);

		if (e) {
			errmsg("%s: pthread_create: %s", vm->name, strerror(e));
			rc = 1;
			break;
		}
	}
	for (unsigned long i = 0; i < started; i++) {
		pthread_join(vm->vcpus[i].thread, NULL);
		if (vm->vcpus[i].failed)
			rc = 1;
	}
	tsc_after = __rdtsc();
	if (vm->msi_pipe[1] >= 0) {
		/* Every request is read before EOF: the injector ends after the last MSI. */
		close(vm->msi_pipe[1]);
		pthread_join(vm->msi_thread, NULL);
		close(vm->msi_pipe[0]);
		if (vm->msi_failed)
			rc = 1;
	}
	if (rc)
		return rc;
	if (o->uffd && uffd_check(vm))
		return 1;

	if (o->trace_out && write_stamps(vm, o->trace_out, tsc_before, tsc_after))
		return 1;
	print_summary(vm);
	if (o->json)
		print_json(vm);
	if (o->linger > 0) {
		/* Still there (with its VM), exiting no more: live views see it, counts final. */
		struct timespec t = { .tv_sec = (time_t)o->linger,
				      .tv_nsec = (long)((o->linger - (time_t)o->linger) * 1e9) };

		while (nanosleep(&t, &t) < 0 && errno == EINTR)
			;
	}
	return 0;
}

static int run_vm(const struct opts *o)
{
	struct vm vm = { .o = o, .name = o->vm_name, .kvm_fd = -1, .vm_fd = -1 };
	int rc;

	/* Re-exec'd through /proc/self/exe, the main thread would otherwise be named "exe". */
	pthread_setname_np(pthread_self(), PROG);
	rc = run_vm_once(&vm);
	vm_destroy(&vm);
	return rc;
}

/* ------------------------------------------------------------------ arguments */

static void parse_args(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .vms = 1, .vcpus = 1, .name = "demo", .ring = DEFAULT_RING,
			    .timer_us = 100, .msi_delay_us = 200, .ipi_delay_us = 200 };

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *val;
		char opt[32];
		int k;

		if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
			printf("usage: " PROG " [--vms N] [--vcpus N] [--io N] [--in N] [--mmio N] "
			       "[--hlt N] [--cpuid N] [--msr N]\n"
			       "                    [--wrmsr N] [--cr N] [--vmcall N] [--ud N] "
			       "[--timer N] [--timer-us US]\n"
			       "                    [--msi N] [--msi-spin N] [--msi-delay-us US] "
			       "[--msi-asleep] [--msi-busy-us US]\n"
			       "                    [--ipi N] [--ipi-delay-us US]\n"
			       "                    [--seconds S] [--linger S] [--name NAME] "
			       "[--ring 0|3] "
			       "[--json]\n"
			       "                    [--io-sleep-us US] [--io-spin-us US] "
			       "[--symbols FILE]\n"
			       "                    [--guest-trace-out FILE] [--tsc-offset TICKS] "
			       "[--touch N]\n"
			       "                    [--uffd-delay-us US] [--hold-until PATH] "
			       "[--stats-fds]\n");
			exit(0);
		}
		if (!strcmp(arg, "--json")) {
			o->json = true;
			continue;
		}
		if (!strcmp(arg, "--stats-fds")) {
			o->stats_fds = true;
			continue;
		}
		if (!strcmp(arg, "--msi-asleep")) {
			o->msi_asleep = true;
			continue;
		}
		val = option_value(argc, argv, &i, opt, sizeof(opt));
		k = option_index(opt, kind_opt, NR_KINDS);
		if (k < NR_KINDS) {
			/* Bounded so that passes * count cannot overflow a 64-bit tally soon. */
			o->count[k] = parse_count(opt, val, 0, MAX_COUNT);
			o->kind_given = true;
		} else if (!strcmp(opt, "--vms")) {
			o->vms = parse_count(opt, val, 1, MAX_VMS);
		} else if (!strcmp(opt, "--vcpus")) {
			o->vcpus = parse_count(opt, val, 1, MAX_VCPUS);
		} else if (!strcmp(opt, "--seconds") || !strcmp(opt, "--linger")) {
			char *end;
			double *d = !strcmp(opt, "--seconds") ? &o->seconds : &o->linger;

			errno = 0;
			*d = strtod(val, &end);
			if (!*val || *end || errno || !(*d > 0) || *d > 1e6)
				usage_error("%s: '%s' is not a valid duration (use a number "
					    "of seconds > 0, e.g. 5 or 0.5)", opt, val);
		} else if (!strcmp(opt, "--name")) {
			o->name = parse_name(val);
		} else if (!strcmp(opt, "--ring")) {
			if (strcmp(val, "0") && strcmp(val, "3"))
				usage_error("--ring: '%s' is not a ring (use 0 or 3)", val);
			o->ring = val[0] - '0';
			o->ring_given = true;
		} else if (!strcmp(opt, "--io-sleep-us")) {
			o->io_sleep_ns = parse_count(opt, val, 0, 10000000) * 1000;
		} else if (!strcmp(opt, "--uffd-delay-us")) {
			o->uffd_delay_ns = parse_count(opt, val, 0, 10000000) * 1000;
			o->uffd = true;
		} else if (!strcmp(opt, "--msi-delay-us")) {
			o->msi_delay_us = (uint32_t)parse_count(opt, val, 0, 999999);
		} else if (!strcmp(opt, "--msi-busy-us")) {
			o->msi_busy_us = (uint32_t)parse_count(opt, val, 0, 100000);
		} else if (!strcmp(opt, "--ipi-delay-us")) {
			o->ipi_delay_us = (uint32_t)parse_count(opt, val, 0, 999999);
		} else if (!strcmp(opt, "--timer-us")) {
			o->timer_us = (uint32_t)parse_count(opt, val, 1, 1000000);
		} else if (!strcmp(opt, "--io-spin-us")) {
			o->io_spin_ns = parse_count(opt, val, 0, 10000000) * 1000;
		} else if (!strcmp(opt, "--guest-trace-out")) {
			o->trace_out = val;
		} else if (!strcmp(opt, "--hold-until")) {
			o->hold = val;
		} else if (!strcmp(opt, "--tsc-offset")) {
			char *end;

			errno = 0;
			o->tsc_offset = strtoll(val, &end, 0);
			if (!*val || *end || errno)
				usage_error("--tsc-offset: '%s' is not a number of TSC ticks", val);
			o->tsc_offset_given = true;
		} else if (!strcmp(opt, "-name")) {
			o->vm_name = parse_qemu_name(val);
		} else if (!strcmp(opt, "--symbols")) {
			o->symbols = val;
		} else {
			usage_error("unknown option '%s' (see --help)", opt);
		}
	}

	if (!o->kind_given)
		o->count[K_IO] = 1000;
	/* Privileged instructions fault in ring 3: refuse rather than triple-fault the guest. */
	if (o->ring == 3 && o->count[K_HLT])
		usage_error("--hlt needs --ring 0 (hlt is privileged and faults in ring 3)");
	if (o->ring == 3 && o->count[K_MSR])
		usage_error("--msr needs --ring 0 (rdmsr is privileged and faults in ring 3)");
	for (int k = K_WRMSR; k <= K_TIMER; k++) {
		if (o->ring == 3 && o->count[k])
			usage_error("--%s needs --ring 0 (privileged instructions, or the guest's "
				    "handlers, fault in ring 3)", kind_opt[k]);
	}
	if (o->count[K_TOUCH] * o->vcpus > DATA_SIZE / DATA_PAGE)
		usage_error("--touch %" PRIu64 " x %lu vCPU(s): at most %llu pages in all",
			    o->count[K_TOUCH], o->vcpus, DATA_SIZE / DATA_PAGE);
	if (o->uffd && !o->count[K_TOUCH])
		usage_error("--uffd-delay-us delays the faults of --touch: add --touch N");
	/* The in-kernel APIC of --timer keeps hlt in the kernel and CR8 accesses in the TPR shadow. */
	if (uses_apic(o) && (o->count[K_HLT] || o->count[K_CR]))
		usage_error("--timer and --msi cannot be combined with --hlt or --cr (run them in "
			    "another VM)");
	if ((o->count[K_MSI] || o->count[K_MSI_SPIN] || o->count[K_IPI]) && o->ring == 3)
		usage_error("--msi and --ipi need --ring 0 (their handler writes the APIC's EOI)");
	if (o->count[K_IPI] && o->vcpus < 2)
		usage_error("--ipi sends from vCPU 0 to vCPU 1: add --vcpus 2 (or more)");
	if (o->trace_out && (o->vms != 1 || o->vcpus > STAMP_MAX_VCPUS || o->seconds > 0 ||
			     o->count[K_IO] < 2 || o->count[K_IO] > STAMP_MAX_EXITS))
		usage_error("--guest-trace-out stamps one pass of one VM: --vms 1, --vcpus at most "
			    "%d, --io 2 to %llu, no --seconds", STAMP_MAX_VCPUS,
			    (unsigned long long)STAMP_MAX_EXITS);
	{
		unsigned int a, b, c, d;

		/* AMD's hypercall instruction is vmmcall; Intel's vmcall would #UD there. */
		o->amd = __get_cpuid(0, &a, &b, &c, &d) && b == 0x68747541;	/* "Auth" */
	}
}

/* ------------------------------------------------------------------ VM processes */

/*
 * argv for one VM process: QEMU's "-name" first, then every option made explicit so the
 * child does not depend on defaults that might differ from the parent's view.
 */
static char **vm_argv(const char *argv0, const struct opts *o, const char *name)
{
	static char namebuf[MAX_NAME + 64], num[NR_KINDS + 11][32], opt[NR_KINDS][16];
	static char num2[32];
	static char *args[2 * (NR_KINDS + 15) + 4];
	int n = 0;

	snprintf(namebuf, sizeof(namebuf), "guest=%s,debug-threads=on", name);
	args[n++] = (char *)argv0;
	args[n++] = "-name";
	args[n++] = namebuf;
	snprintf(num[0], sizeof(num[0]), "%lu", o->vcpus);
	args[n++] = "--vcpus";
	args[n++] = num[0];
	for (int k = 0; k < NR_KINDS; k++) {
		snprintf(num[k + 1], sizeof(num[k + 1]), "%" PRIu64, o->count[k]);
		snprintf(opt[k], sizeof(opt[k]), "--%s", kind_opt[k]);
		args[n++] = opt[k];
		args[n++] = num[k + 1];
	}
	snprintf(num[NR_KINDS + 1], sizeof(num[0]), "%d", o->ring);
	args[n++] = "--ring";
	args[n++] = num[NR_KINDS + 1];
	if (o->seconds > 0) {
		snprintf(num[NR_KINDS + 2], sizeof(num[0]), "%.9g", o->seconds);
		args[n++] = "--seconds";
		args[n++] = num[NR_KINDS + 2];
	}
	if (o->linger > 0) {
		snprintf(num[NR_KINDS + 5], sizeof(num[0]), "%.9g", o->linger);
		args[n++] = "--linger";
		args[n++] = num[NR_KINDS + 5];
	}
	snprintf(num[NR_KINDS + 3], sizeof(num[0]), "%" PRIu64, o->io_sleep_ns / 1000);
	args[n++] = "--io-sleep-us";
	args[n++] = num[NR_KINDS + 3];
	snprintf(num[NR_KINDS + 4], sizeof(num[0]), "%" PRIu64, o->io_spin_ns / 1000);
	args[n++] = "--io-spin-us";
	args[n++] = num[NR_KINDS + 4];
	snprintf(num[NR_KINDS + 6], sizeof(num[0]), "%" PRIu32, o->timer_us);
	args[n++] = "--timer-us";
	args[n++] = num[NR_KINDS + 6];
	/* Not passed on before --ipi came: the VM ran with the default 200 whatever was asked. */
	snprintf(num[NR_KINDS + 8], sizeof(num[0]), "%" PRIu32, o->msi_delay_us);
	args[n++] = "--msi-delay-us";
	args[n++] = num[NR_KINDS + 8];
	snprintf(num[NR_KINDS + 9], sizeof(num[0]), "%" PRIu32, o->ipi_delay_us);
	args[n++] = "--ipi-delay-us";
	args[n++] = num[NR_KINDS + 9];
	snprintf(num[NR_KINDS + 10], sizeof(num[0]), "%" PRIu32, o->msi_busy_us);
	args[n++] = "--msi-busy-us";
	args[n++] = num[NR_KINDS + 10];
	if (o->uffd) {
		snprintf(num[NR_KINDS + 7], sizeof(num[0]), "%" PRIu64, o->uffd_delay_ns / 1000);
		args[n++] = "--uffd-delay-us";
		args[n++] = num[NR_KINDS + 7];
	}
	if (o->json)
		args[n++] = "--json";
	if (o->stats_fds)
		args[n++] = "--stats-fds";
	if (o->msi_asleep)
		args[n++] = "--msi-asleep";
	if (o->trace_out) {
		args[n++] = "--guest-trace-out";
		args[n++] = (char *)o->trace_out;
	}
	if (o->hold) {
		args[n++] = "--hold-until";
		args[n++] = (char *)o->hold;
	}
	if (o->tsc_offset_given) {
		snprintf(num2, sizeof(num2), "%" PRId64, o->tsc_offset);
		args[n++] = "--tsc-offset";
		args[n++] = num2;
	}
	args[n] = NULL;
	return args;
}

static void exec_vm(const char *argv0, const struct opts *o, const char *name)
{
	char **args = vm_argv(argv0, o, name);

	execv("/proc/self/exe", args);
	/* No /proc (a bare initramfs): fall back to how we were started. */
	if (strchr(argv0, '/'))
		execv(argv0, args);
	else
		execvp(argv0, args);
	errmsg("cannot re-exec myself for VM %s: %s", name, strerror(errno));
}

static int run_vms(const char *argv0, const struct opts *o)
{
	pid_t pids[MAX_VMS];
	char names[MAX_VMS][MAX_NAME + 16];
	int rc = 0;

	for (unsigned long i = 0; i < o->vms; i++) {
		snprintf(names[i], sizeof(names[i]), "%s-%lu", o->name, i);
		fflush(NULL);
		pids[i] = fork();
		if (pids[i] < 0) {
			errmsg("fork: %s", strerror(errno));
			/* Reap the ones already started before reporting failure. */
			for (unsigned long j = 0; j < i; j++)
				waitpid(pids[j], NULL, 0);
			return 1;
		}
		if (pids[i] == 0) {
			exec_vm(argv0, o, names[i]);
			_exit(1);
		}
	}
	for (unsigned long i = 0; i < o->vms; i++) {
		int st;

		while (waitpid(pids[i], &st, 0) < 0) {
			if (errno != EINTR) {
				errmsg("waitpid: %s", strerror(errno));
				return 1;
			}
		}
		if (WIFSIGNALED(st)) {
			errmsg("VM %s (pid %d) killed by signal %d", names[i], (int)pids[i],
			       WTERMSIG(st));
			rc = 1;
		} else if (WEXITSTATUS(st)) {
			errmsg("VM %s (pid %d) failed (exit status %d)", names[i], (int)pids[i],
			       WEXITSTATUS(st));
			rc = 1;
		}
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	int kvm_fd;

	parse_args(argc, argv, &o);
	if (o.symbols)
		return write_symbols(&o);
	if (o.vm_name)
		return run_vm(&o);
	if (o.vms == 1) {
		/* Become the VM process ourselves, so the caller's pid is the VM's pid. */
		exec_vm(argv[0], &o, o.name);
		return 1;
	}
	/* Say once, not once per VM, when KVM is missing altogether. */
	kvm_fd = open_kvm();
	if (kvm_fd < 0)
		return 1;
	close(kvm_fd);
	return run_vms(argv[0], &o);
}
