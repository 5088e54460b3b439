// SPDX-License-Identifier: GPL-2.0
/* vmexit: in-kernel aggregation of KVM exits. The logic is in handlers.bpf.h. */
#include "handlers.bpf.h"
#include "pair_switch.bpf.h"
#include <bpf/bpf_tracing.h>

#define KVM_RUN_IOCTL	0xae80	/* _IO(KVMIO, 0x80) */

/*
 * Every program returns 1: for a tracepoint, perf_trace_run_bpf_submit() drops the event for
 * all perf users of that tracepoint (perf stat, perf record, kvm_stat) when an attached BPF
 * program returns 0.
 */
#define TP_PASS		1

/*
 * kvm_exit and kvm_entry come in two pairs; src/hooks.c loads one. The classic tracepoints
 * hand over the record the kernel builds first (on VMX get_exit_info() VMREADs the exit
 * qualification and interrupt info for it, kvm_entry reads the guest RIP): stream and record
 * need those fields. The raw ones (tp_btf) cost less to dispatch and build nothing; the
 * reason comes from the vCPU (bpf/exit_read.bpf.h). They are used only after a start-up
 * window in which both saw the same exits (bpf/hook_check.bpf.c), at start-up or, on a host
 * idle then, once exits begin: while the pairs change places, both run (pair_switch.bpf.h).
 */
SEC("?tp/kvm/kvm_exit")
int kvm_exit(struct trace_event_raw_kvm_exit *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();
	struct exit_info x = { .vcpu = -1 };
	bool overlap = pair_overlap;

	if (overlap && pair_handled(PAIR_EXIT))
		return TP_PASS;
	/* --by key: an interrupt exit's vector is in the record's intr_info (keys.bpf.h). */
	classic_exit_read(ctx, &x, stream_enabled || key_mode == KEY_MODE_DEVICE);
	handle_kvm_exit(now, id >> 32, (__u32)id, &x);
	if (overlap)
		pair_note(PAIR_EXIT);
	return TP_PASS;
}

/* Either pair's kvm_entry: the same, but for the switch's overlap (pair_switch.bpf.h). */
static __always_inline void entry_of_pair(void)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();
	bool overlap = pair_overlap;

	if (overlap && !entry_alone && pair_handled(PAIR_ENTRY))
		return;
	handle_kvm_entry(now, id >> 32, (__u32)id);
	if (overlap)
		pair_note(PAIR_ENTRY);
}

SEC("?tp/kvm/kvm_entry")
int kvm_entry(void *ctx)
{
	entry_of_pair();
	return TP_PASS;
}

/*
 * --by key: what kvm_exit_fast reads of an exit's key from its vCPU (key_of_exit() takes it from
 * x): a CPUID exit's leaf from the guest's RAX, with no program on kvm_cpuid; an interrupt's
 * vector if KVM has cached it, else the vCPU to read it from at the exit's end (returned: such
 * an exit begins through the thread's state, which key_vector_late() needs, not from the slot).
 * km: key_mode (a constant on the slot's path: cpu_slot_exit()).
 */
static __always_inline struct kvm_vcpu *fast_exit_key(__u64 *ctx, struct exit_info *x,
						      bool direct, __u32 km)
{
	struct kvm_vcpu *vcpu;

	if (km != KEY_MODE_DEVICE)
		return NULL;
	vcpu = raw_exit_vcpu(ctx);
	x->has_leaf = key_exit_leaf(vcpu, x->isa, x->reason, &x->leaf);
	/* A CPUID exit has no vector: its reason is not tested again. vmx_cached_intr_info() is
	 * false for no vCPU: NULL then too. */
	if (x->has_leaf || !vmx_vector_exit(x->isa, x->reason) ||
	    vmx_cached_intr_info(vcpu, x->reason, &x->intr_info, direct))
		return NULL;
	return vcpu;
}

/* The rest of exit_fast(), where the CPU's slot did not begin the exit: the thread's state. */
static __always_inline int exit_fast_rest(__u64 *ctx, __u64 now, bool overlap, bool direct)
{
	__u64 id = hot_ids();
	struct exit_info x = { .vcpu = -1 };
	struct kvm_vcpu *vcpu = NULL;
	struct thread_state *ts;

	if (overlap && pair_handled(PAIR_EXIT))
		return TP_PASS;
	ts = exit_thread(id >> 32, (__u32)id);
	/* An unwatched thread's exit reads nothing more from its vCPU. */
	if (!ts)
		return TP_PASS;
	/* Never false once the start-up check passed; an unknown reason stays visible.
	 * kvm_exit_direct's loads never say false: a field that faulted would read 0, which no
	 * live vCPU's does (bpf/kernel_load.bpf.h). A thread's first exits: its vCPU id too. */
	if (!raw_exit_read(ctx, &x, ts->vcpu < 0, key_mode == KEY_MODE_RIP, direct))
		x.reason = ~0u;
	vcpu = fast_exit_key(ctx, &x, direct, key_mode);
	exit_start(ts, now, id >> 32, (__u32)id, &x);
	if (vcpu && ts->exit_cell != CELL_NONE) {
		ts->vec_vcpu = (__u64)vcpu;
		ts->vec_reason = x.reason;
	}
	if (overlap)
		pair_note(PAIR_EXIT);
	return TP_PASS;
}

/*
 * The keyed slot path of exit_fast() (below), for key mode km, a constant at each call: what
 * key_of_exit_in() reads, and no more (the rest reads the exit again). true: the slot began
 * the exit. Under a constant km the compiler drops the other modes' code and every key_mode
 * test on the way: six reads of key_mode from the read-only data, each a load and a test the
 * verifier leaves in the program though it knows their outcome.
 */
static __always_inline bool exit_slot_keyed(__u64 *ctx, __u64 now, bool direct, __u32 km)
{
	struct exit_info r;

	/* The fields key_of_exit_in() reads under km and raw_exit_read() may leave unset; the
	 * leaf's flag is fast_exit_key()'s, always. The vector's information is set where it is
	 * read, but not on every path the compiler sees: left unset, its value would be undefined
	 * to the compiler, which may then leave a register unwritten that the verifier refuses. */
	r.isa = 0;
	if (km == KEY_MODE_RIP)
		r.rip = 0;
	else
		r.intr_info = 0;
	if (!raw_exit_read(ctx, &r, false, km == KEY_MODE_RIP, direct))
		r.reason = ~0u;
	/* An interrupt's vector read at the exit's end needs the thread's state. */
	return !fast_exit_key(ctx, &r, direct, km) &&
	       cpu_slot_exit(SLOT_CPU(), now, r.isa, r.reason, &r, km);
}

/*
 * The raw kvm_exit, in two programs: src/kernel/hooks.c loads kvm_exit_direct where the kernel
 * has bpf_rdonly_cast() (Linux 6.2), whose loads of the vCPU's fields cost a fraction of
 * kvm_exit_fast's helper calls (bpf/kernel_load.bpf.h), and kvm_exit_fast before: only the
 * former references the kfunc. direct is a constant in each.
 *
 * The CPU's slot begins the exit when it holds this thread's cell for the reason (and, with
 * keys, the exit's key, read first), with no thread state looked up (cpu_exit_slot.bpf.h). Not
 * while the pairs change places: pair_note() needs the state. Without keys, the path most
 * exits take: the reason alone, before anything else is set up (the set-up of x and keeping it
 * across the slot's test cost that path a third of its instructions: docs/design.md).
 */
static __always_inline int exit_fast(__u64 *ctx, bool direct)
{
	__u64 now = bpf_ktime_get_ns();
	bool overlap = pair_overlap;
	bool slot = cpu_slot_enabled && !overlap;
	__u32 km = key_mode;

	if (slot && km == KEY_MODE_OFF) {
		struct exit_info r;

		r.isa = 0;
		if (!raw_exit_read(ctx, &r, false, false, direct))
			r.reason = ~0u;
		if (cpu_slot_exit(SLOT_CPU(), now, r.isa, r.reason, NULL, KEY_MODE_OFF))
			return TP_PASS;
	} else if (slot && km == KEY_MODE_DEVICE) {
		if (exit_slot_keyed(ctx, now, direct, KEY_MODE_DEVICE))
			return TP_PASS;
	} else if (slot && km == KEY_MODE_RIP) {
		if (exit_slot_keyed(ctx, now, direct, KEY_MODE_RIP))
			return TP_PASS;
	}
	return exit_fast_rest(ctx, now, overlap, direct);
}

SEC("?tp_btf/kvm_exit")
int kvm_exit_fast(__u64 *ctx)
{
	return exit_fast(ctx, false);
}

SEC("?tp_btf/kvm_exit")
int kvm_exit_direct(__u64 *ctx)
{
	return exit_fast(ctx, true);
}

/*
 * No argument is read: kvm_entry's prototype has changed over time (the vCPU id alone, then the
 * vCPU in "KVM: x86: Add RIP to the kvm_entry, i.e. VM-Enter, tracepoint" (Linux 5.9), then a
 * flag, "KVM: x86: Plumb "force_immediate_exit" into kvm_entry() tracepoint" (Linux 6.9, and
 * Debian's 6.1 has it too), and ending the exit in flight needs none of them.
 */
SEC("?tp_btf/kvm_entry")
int kvm_entry_fast(void *ctx)
{
	entry_of_pair();
	return TP_PASS;
}

/*
 * A userspace exit: two programs, src/kernel/hooks.c loads one. The BTF-enabled tracepoint when
 * the kernel's BTF describes it (the kvm module's, or vmlinux's with KVM built in): its
 * arguments are passed as they are, with no perf record filled, and detaching it waits for no
 * grace period, where a classic tracepoint's last perf event synchronizes at close (one grace
 * period per tracepoint, serialized on the kernel's event_mutex: most of a tear-down).
 * Its TP_PROTO(__u32 reason, int errno) is the record's two fields (include/trace/events/kvm.h,
 * the same in every kernel vmexit is tested on, 6.1 to 6.18); hooks.c checks the prototype's
 * shape in the kernel's BTF all the same, and takes the classic record when it differs.
 */
static __always_inline int user_exit(__u32 reason, int err)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();

	handle_user_exit(now, id >> 32, (__u32)id, reason, err);
	return TP_PASS;
}

SEC("?tp_btf/kvm_userspace_exit")
int BPF_PROG(kvm_userspace_exit_btf, __u32 reason, int err)
{
	return user_exit(reason, err);
}

SEC("?tp/kvm/kvm_userspace_exit")
int kvm_userspace_exit(struct trace_event_raw_kvm_userspace_exit *ctx)
{
	return user_exit(ctx->reason, ctx->errno);
}

/*
 * The start of the thread's next KVM_RUN ends its userspace exit. Three hooks can tell it (kvm_fpu
 * in two forms); src/hooks.c loads exactly one program, the first this kernel offers, and
 * docs/design.md says where each one starts the clock. None of them is autoloaded.
 */

/* A BPF trampoline on the arch run function: once per KVM_RUN, on every architecture. */
SEC("?fentry/kvm_arch_vcpu_ioctl_run")
int BPF_PROG(kvm_run_fentry)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 id = hot_ids();

	handle_kvm_run(now, id >> 32, (__u32)id);
	return 0;
}

/*
 * x86 loads the guest FPU state right after vcpu_load() at the start of every KVM_RUN
 * (kvm_load_guest_fpu() in kvm_arch_vcpu_ioctl_run()) and puts it back at the end: the load
 * ends the exit, the put (load == 0) is ignored. Only vCPU threads ever get here.
 */
static __always_inline int run_fpu(int load, bool rk)
{
	__u64 now, id;

	if (!load) {
		/* rk (run_keys): the exit to the VMM that follows, as kvm_run has it. */
		if (rk)
			run_key_note(SLOT_CPU());
		return TP_PASS;
	}
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_run(now, id >> 32, (__u32)id);
	return TP_PASS;
}

SEC("?tp/kvm/kvm_fpu")
int kvm_run_fpu(struct trace_event_raw_kvm_fpu *ctx)
{
	return run_fpu(ctx->load, false);
}

/* The same on the BTF-enabled tracepoint, as kvm_userspace_exit_btf above (no record, no grace
 * period at detach); TP_PROTO(int load), its shape checked by hooks.c alike. */
SEC("?tp_btf/kvm_fpu")
int BPF_PROG(kvm_run_fpu_btf, int load)
{
	return run_fpu(load, false);
}

/*
 * The same with run_keys: the put notes the key of the exit to the VMM that follows, read from
 * kvm_run (bpf/run_key.bpf.h). A program of its own: only it references bpf_rdonly_cast,
 * which a kernel before 6.2 does not have.
 */
SEC("?tp_btf/kvm_fpu")
int BPF_PROG(kvm_run_fpu_keyed, int load)
{
	return run_fpu(load, true);
}

/*
 * Last resort (arm64 without trampolines): the syscall tracepoint turns on syscall tracing
 * for every task on the host, so every syscall of every process pays for it.
 */
SEC("?tp/syscalls/sys_enter_ioctl")
int kvm_run_ioctl(struct syscall_trace_enter *ctx)
{
	__u64 now, id;

	/* Every ioctl on the host passes here: leave before any lookup unless it is KVM_RUN. */
	if (ctx->args[1] != KVM_RUN_IOCTL)
		return TP_PASS;
	now = bpf_ktime_get_ns();
	id = hot_ids();
	handle_kvm_run(now, id >> 32, (__u32)id);
	return TP_PASS;
}

/*
 * (unsigned int vcpu_id, u64 previous_tsc_offset, u64 next_tsc_offset): arch/x86/kvm/trace.h's
 * prototype, unchanged since the tracepoint came. A raw tracepoint, not the classic one: when a classic
 * tracepoint's last perf event closes, the kernel waits for a grace period under event_mutex
 * (perf_trace_destroy()), one tracepoint after another, and a stream's exit waited ~40 ms for
 * this one alone; a raw tracepoint's detach waits for none. It fires rarely (vCPU creation, TSC
 * writes): the record the classic one filled was no cost to speak of, only its tear-down.
 */
SEC("raw_tp/kvm_write_tsc_offset")
int BPF_PROG(kvm_write_tsc_offset, unsigned int vcpu_id, __u64 previous_tsc_offset,
	     __u64 next_tsc_offset)
{
	__u64 id = bpf_get_current_pid_tgid();

	handle_tsc_offset(bpf_ktime_get_ns(), id >> 32, (__u32)id, vcpu_id, previous_tsc_offset,
			  next_tsc_offset);
	return 0;
}

/*
 * The other kvm tracepoints, one program each, loaded only for the events --kvm-events names
 * ("?": not autoloaded), so that a stream without them costs nothing and a kernel lacking one
 * of them loses only that one.
 */
#define KVM_EVENT_PROG(ID, nr, name)						\
SEC("?tp/kvm/kvm_" #name)							\
int kvm_##name(struct trace_event_raw_kvm_##name *ctx)				\
{										\
	struct kvm_ev k = { .vcpu = -1 };					\
	__u64 id = bpf_get_current_pid_tgid();					\
										\
	kvm_##name##_decode(ctx, &k);						\
	handle_kvm_event(bpf_ktime_get_ns(), id >> 32, (__u32)id, &k);		\
	return TP_PASS;								\
}

VMEXIT_KVM_EVENTS(KVM_EVENT_PROG)

/*
 * Keys (--by key): the kvm tracepoints that say what the exit in flight is about, one program
 * each, loaded only with keys and only where the tracepoint exists (src/session.c). Raw
 * tracepoints, which hand over the arguments: a classic one's dispatch first fills its trace
 * record in a per-CPU perf buffer (perf_trace_buf_alloc(), the caller's registers, every
 * field) for any attached program, and kvm_cpuid, kvm_msr and kvm_mmio fire in nearly every
 * exit of their kind. Raw, not tp_btf: they need no module BTF, and a raw tracepoint reads
 * pointer arguments on every kernel (tp_btf since 6.9, see key_pio). The prototypes are those
 * of every kernel since 5.4 unless said; each argument is one u64 slot of ctx.
 */
#define KEY_PROG(name, ...)							\
SEC("?raw_tp/kvm_" #name)							\
int key_##name(__u64 *ctx)							\
{										\
	struct key_note k = { __VA_ARGS__ };					\
										\
	handle_key(hot_ids(), &k, false);					\
	return 0;								\
}

/*
 * The raw tracepoint's data argument tells more: an IN that went to the VMM is traced when it
 * completes, in the next KVM_RUN, with the vCPU's pio_data page as data (complete_emulator_
 * pio_in(); before KVM's 2022 rework of emulator_pio_in, emulator_pio_in_emulated() passed the
 * same page); an IN handled in the kernel passes the caller's buffer. The arguments are (rw,
 * port, size, count, data) on every kernel with BTF. A raw tracepoint, not tp_btf: tp_btf may read
 * a `const void *` argument only since "bpf: Allow access to int pointer arguments in tracing
 * programs" (Linux 6.9); 6.1 refuses the program ("invalid bpf_context access off=32").
 */
SEC("?raw_tp/kvm_pio")
int BPF_PROG(key_pio, unsigned int rw, unsigned int port, unsigned int size, unsigned int count,
	     const void *data)
{
	struct key_note k = { .kind = KEY_PORT, .dir = rw ? KEY_DIR_OUT : KEY_DIR_IN, .key = port };

	handle_key(hot_ids(), &k, !rw && !((unsigned long)data & 0xfff));
	return 0;
}

/*
 * (int type, int len, u64 gpa, val): type 0 is a read that goes to userspace, 1 its
 * completion, 2 a write (KVM_TRACE_MMIO_*).
 */
KEY_PROG(mmio, .kind = KEY_MMIO, .dir = (__u32)ctx[0] == 2 ? KEY_DIR_WRITE : KEY_DIR_READ,
	 .key = ctx[2])
/* (unsigned write, u32 ecx, u64 data, bool exception) */
KEY_PROG(msr, .kind = KEY_MSR, .dir = (__u32)ctx[0] ? KEY_DIR_WRITE : KEY_DIR_READ,
	 .key = (__u32)ctx[1])
/* (unsigned int function, ...): the index came second in 5.x, after the function. */
KEY_PROG(cpuid, .kind = KEY_CPUID, .key = (__u32)ctx[0])
/* (unsigned long nr, a0, a1, a2, a3) */
KEY_PROG(hypercall, .kind = KEY_HYPERCALL, .key = ctx[0])
/* (u16 code, bool fast, ...) */
KEY_PROG(hv_hypercall, .kind = KEY_HYPERCALL, .dir = KEY_DIR_HV, .key = (__u16)ctx[0])
/*
 * arm64, (unsigned long vcpu_pc, unsigned long r0, unsigned long imm): x0 of an HVC is its
 * SMCCC function id (PSCI, SMCCC_ARCH_*, ...); dir "smccc" says so.
 */
KEY_PROG(hvc_arm64, .kind = KEY_HYPERCALL, .dir = KEY_DIR_SMCCC, .key = ctx[1])
/*
 * arm64's stage-2 fault, (vcpu_pc, unsigned long hsr, hxfar, unsigned long long ipa): the IPA
 * (of the page: KVM reads it from HPFAR_EL2), as the x86 one. A fault to MMIO then traces
 * kvm_mmio, whose key replaces this one (key_replaces).
 */
KEY_PROG(guest_fault, .kind = KEY_GPA, .dir = key_arm64_fault_dir(ctx[1]), .key = ctx[3])

/*
 * Argument i of a raw tracepoint, as one load at a fixed offset from ctx: written as plain C in
 * two branches that read different slots, clang merges the loads into one through ctx plus a
 * variable offset, which the verifier refuses (a modified ctx pointer).
 */
#define RAW_ARG(ctx, i) ({							\
	__u64 __v;								\
										\
	asm volatile("%[v] = *(u64 *)(%[c] + %[off])"				\
		     : [v] "=r"(__v) : [c] "r"(ctx), [off] "i"((i) * 8));	\
	__v;									\
})

/*
 * The guest physical address (handle_key groups it by --key-gpa-shift); bit 1 of the error
 * code is a write (PFERR_WRITE_MASK). "KVM: x86: Add extra information in kvm_page_fault trace
 * point" (Linux 6.1) put the vCPU first, (vcpu, u64 fault_address, u64 error_code), and the
 * record's vcpu_id came with it; before, (unsigned long fault_address, error_code). Each
 * shape reads only its own slots: a raw tracepoint refuses a program that reads past the
 * prototype, and the test is a constant the verifier prunes by.
 */
SEC("?raw_tp/kvm_page_fault")
int key_page_fault(__u64 *ctx)
{
	struct key_note k = { .kind = KEY_GPA };
	__u64 err;

	if (bpf_core_field_exists(struct trace_event_raw_kvm_page_fault, vcpu_id)) {
		k.key = RAW_ARG(ctx, 1);
		err = RAW_ARG(ctx, 2);
	} else {
		k.key = RAW_ARG(ctx, 0);
		err = RAW_ARG(ctx, 1);
	}
	k.dir = err & 2 ? KEY_DIR_WRITE : KEY_DIR_READ;
	handle_key(hot_ids(), &k, false);
	return 0;
}

/* --split: every context switch on the host; handle_sched_switch() says what it costs. */
SEC("?tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	handle_sched_switch(ctx, preempt, prev, next);
	return 0;
}

/* --split: every wakeup on the host, where a sleeping vCPU starts to wait for a CPU. */
SEC("?tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	handle_sched_wakeup(p);
	return 0;
}

/*
 * The tracepoint's own pid fields are thread ids and it fires for new threads too: with the
 * task pointers, follow only new processes, from whichever thread of a traced one forked.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(process_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->pid == child->tgid)
		handle_fork(parent->tgid, child->tgid);
	return 0;
}

/*
 * A thread's end: its unfinished exits and its cells (handlers.bpf.h, handle_thread_exit); the
 * process's, when it was the last thread: do_exit() has counted it out of signal->live before
 * this tracepoint (the tracepoint's group_dead argument is newer than 6.1).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(thread_exit, struct task_struct *task)
{
	__u64 id = hot_ids();

	handle_thread_exit(bpf_ktime_get_ns(), id >> 32, (__u32)id);
	if (follow_forks && BPF_CORE_READ(task, signal, live.counter) == 0)
		handle_process_gone(id >> 32);
	return 0;
}

/*
 * stream and record, when tracing has stopped: every thread's exits still in flight, which no
 * entry or KVM_RUN will complete while we trace (src/live_events.c reads them). Run once, so
 * walking every task of the host costs nothing that matters.
 */
SEC("?iter/task")
int flush_in_flight(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;

	if (task)
		handle_flush_task(ctx->meta->seq, task);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
