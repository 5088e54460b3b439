// SPDX-License-Identifier: GPL-2.0
/*
 * Keys (bpf/keys.bpf.h) through BPF_PROG_TEST_RUN with hand-made events, on the very handlers
 * the tracepoint programs run: which key each completed exit is charged to, with which
 * latency, in the order KVM traces them on hosts where kvm_exit fires and where it does not,
 * a full table's exits in (other), each counted as lost keys_full, interrupt exits' vectors,
 * the exits an ending thread leaves in flight, the thread's cache of its entries' slots, and a
 * gone guest's entries forgotten (key_rows_forget) and their slots reused zeroed.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "vmexit.h"
#include "vmexit_test.skel.h"
#include "vmexit_test.h"
#include "bpf_test_util.h"
#include "hist.h"
#include "key_rows.h"

#define TGID		500
#define TID		501
#define VMX_IO		30	/* IO_INSTRUCTION */
#define VMX_HLT		12
#define VMX_CPUID	10
#define VMX_EPT_VIOLATION	48
#define SVM_IOIO	0x7b
#define SVM_CPUID	0x72
#define SVM_VMGEXIT	0x403	/* an SEV-ES guest's exits, its CPUID among them */
#define SVM_NPF		0x400
#define U_IO		2	/* KVM_EXIT_IO */
#define U_HLT		5
#define U_MMIO		6
#define U_RDMSR		29	/* KVM_EXIT_X86_RDMSR */
#define VMX_MSR_READ	31

static struct vmexit_test_bpf *skel;
static int prog_fd;
static __u32 gpa_shift;		/* --key-gpa-shift for the next fixture (0: the default) */
/* The per-CPU exit slot on (bpf/cpu_exit_slot.bpf.h), as the live session has it: every case
 * runs with it off and on, and must give the same entries. */
static bool slot_on;
/* The next fixture's --by mode (0: KEY_MODE_DEVICE, --by key). */
static __u32 fx_mode;
/* The next fixture's exits to the VMM keyed from kvm_run (run_keys, bpf/run_key.bpf.h). */
static bool fx_run_keys;

static int open_fx(__u32 max_keys)
{
	skel = vmexit_test_bpf__open();
	if (!skel)
		return -1;
	skel->rodata->use_task_storage = false;
	skel->rodata->filter_vcpu = -1;
	skel->rodata->max_cells = 64;
	skel->rodata->key_mode = fx_mode ? fx_mode : KEY_MODE_DEVICE;
	skel->rodata->run_keys = fx_run_keys;
	skel->rodata->max_keys = max_keys;
	if (gpa_shift)
		skel->rodata->key_gpa_shift = gpa_shift;
	bpf_map__set_max_entries(skel->maps.cells, 64);
	bpf_map__set_max_entries(skel->maps.free_cells, 64);
	bpf_map__set_max_entries(skel->maps.thread_hash, 1024);
	bpf_map__set_autocreate(skel->maps.thread_storage, false);
	skel->rodata->cpu_slot_enabled = slot_on;
	skel->rodata->user_slot_enabled = slot_on;
	bpf_map__set_max_entries(skel->maps.cpu_exits, 4);
	skel->rodata->key_slots_nr = max_keys + 2 * 64;
	bpf_map__set_max_entries(skel->maps.key_table, max_keys + 2 * 64);
	bpf_map__set_max_entries(skel->maps.key_slots, max_keys + 2 * 64);
	bpf_map__set_max_entries(skel->maps.free_keys, max_keys + 2 * 64);
	bpf_program__set_autoload(skel->progs.run_event_task, false);
	if (vmexit_test_bpf__load(skel)) {
		fprintf(stderr, "cannot load the test object: %s\n", strerror(errno));
		return -1;
	}
	prog_fd = bpf_program__fd(skel->progs.run_event);
	return 0;
}

/* The thread the next events are of (another than TID: a second vCPU thread). */
static __u32 cur_tid = TID;

static void send(struct test_ctx c)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));

	c.tgid = TGID;
	c.tid = cur_tid;
	/* Some cases begin at time 0, which the slot (and exit_live()) take as no exit in flight:
	 * no clock the kernel reads is ever 0. Every event later by the same: same latencies. */
	if (slot_on)
		c.now += 1000000;
	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval) {
		fprintf(stderr, "test_run op %llu failed\n", (unsigned long long)c.op);
		check_failures++;
	}
}

static void key(__u64 now, __u32 kind, __u32 dir, __u64 k, bool in_done)
{
	send((struct test_ctx){ .op = TOP_KEY, .now = now, .info1 = k,
				.info2 = kind << 16 | dir, .err = in_done });
}

static void uexit(__u64 now, __u32 reason)
{
	send((struct test_ctx){ .op = TOP_USER_EXIT, .now = now, .reason = reason });
}

static void run(__u64 now)
{
	send((struct test_ctx){ .op = TOP_RUN, .now = now });
}

static void kexit_isa(__u64 now, __u32 isa, __u32 reason)
{
	send((struct test_ctx){ .op = TOP_EXIT, .now = now, .vcpu = 0, .isa = isa,
				.reason = reason });
}

static void kexit(__u64 now, __u32 reason)
{
	kexit_isa(now, VMEXIT_ISA_VMX, reason);
}

/* A kvm_exit as the classic record gives it, with its interruption information. */
static void kexit_intr(__u64 now, __u32 isa, __u32 reason, __u32 intr_info)
{
	send((struct test_ctx){ .op = TOP_EXIT, .now = now, .vcpu = 0, .isa = isa,
				.reason = reason, .intr_err = (__u64)intr_info << 32 });
}

static void kentry(__u64 now)
{
	send((struct test_ctx){ .op = TOP_ENTRY, .now = now });
}

/* The same on a CPU of the test's choosing (the exits above are on CPU 0). */
static void kentry_on(__u64 now, __u32 cpu)
{
	send((struct test_ctx){ .op = TOP_ENTRY, .now = now, .err = (__s32)cpu });
}

/* CPU cpu's slot as the programs left it. */
static struct cpu_exit_slot slot_of(__u32 cpu)
{
	struct cpu_exit_slot s = {};

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.cpu_exits), &cpu, &s))
		check_failures++;
	return s;
}

static struct cpu_exit_slot slot0(void)
{
	return slot_of(0);
}

/* CPU cpu's exit slot's key entry (0: its exit's end reads the thread's state). */
static __u32 slot_kslot(__u32 cpu)
{
	return slot_of(cpu).kslot;
}

/* The entry of thread tid's (isa, reason, kind, dir, key); count 0 when there is none. */
static struct key_stats entry_of(__u32 tid, __u32 isa, __u32 reason, __u32 kind, __u32 dir,
				 __u64 k)
{
	int fd = bpf_map__fd(skel->maps.key_table);
	int slots_fd = bpf_map__fd(skel->maps.key_slots);
	struct key_stats st, none = {};
	struct key_id id, next;
	bool first = true;
	__u32 slot;

	while (!bpf_map_get_next_key(fd, first ? NULL : &id, &next)) {
		first = false;
		id = next;
		if (bpf_map_lookup_elem(fd, &id, &slot) ||
		    bpf_map_lookup_elem(slots_fd, &slot, &st))
			continue;
		if (st.id.isa == isa && st.id.reason == reason && id.k.kind == kind &&
		    id.k.dir == dir && id.k.key == k && id.tid == tid)
			return st;
	}
	return none;
}

static struct key_stats entry(__u32 isa, __u32 reason, __u32 kind, __u32 dir, __u64 k)
{
	return entry_of(TID, isa, reason, kind, dir, k);
}

static __u32 entries(void)
{
	return map_count(skel->maps.key_table);
}

/* The threads with a state (the test object's thread_hash). */
static __u32 states(void)
{
	return map_count(skel->maps.thread_hash);
}

/* The thread's state gone (an evicted hash entry), as if never made. */
static void state_gone(void)
{
	CHECK(!bpf_map__delete_elem(skel->maps.thread_hash, &(__u32){ TID }, sizeof(__u32), 0));
}

/*
 * The entry's histogram holds its completed exits, each in a bucket between its min and max:
 * an exit put in another exit's bucket, or in none, shows (the cell's bucket is handed to the
 * key entry of an exit ended from the per-CPU slot, not computed again).
 */
static void check_hist(const struct key_stats *st)
{
	__u64 sum = 0;

	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (!st->hist[b])
			continue;
		sum += st->hist[b];
		CHECK(hist_bucket_low(b) <= st->max_ns && hist_bucket_high(b) > st->min_ns);
	}
	CHECK_EQ_U64(sum, st->count);
}

static void check_entry(__u32 isa, __u32 reason, __u32 kind, __u32 dir, __u64 k, __u64 count,
			__u64 total)
{
	struct key_stats st = entry(isa, reason, kind, dir, k);

	CHECK_EQ_U64(st.count, count);
	CHECK_EQ_U64(st.total_ns, total);
	check_hist(&st);
}

/* Where kvm_exit does not fire: exits to the VMM take the kvm_pio / kvm_mmio of their run. */
static void test_user_only(void)
{
	if (open_fx(16))
		return;
	/* An OUT handled in the kernel, then an IN to the VMM (traced when it completes). */
	key(90, KEY_PORT, KEY_DIR_OUT, 0x40, false);
	uexit(100, U_IO);
	run(150);
	key(151, KEY_PORT, KEY_DIR_IN, 0x71, true);
	/* An OUT to the VMM, and a new IN handled in the kernel after it: not its completion. */
	key(190, KEY_PORT, KEY_DIR_OUT, 0x3f8, false);
	uexit(200, U_IO);
	run(230);
	key(240, KEY_PORT, KEY_DIR_IN, 0x60, false);
	/* An MMIO write, then a HLT: a stale key of another kind names no HLT. */
	key(390, KEY_MMIO, KEY_DIR_WRITE, 0xfee000b0, false);
	uexit(400, U_MMIO);
	run(420);
	uexit(500, U_HLT);
	run(510);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0x71, 1, 50);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x3f8, 1, 30);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x40, 0, 0);
	check_entry(VMEXIT_ISA_USER, U_MMIO, KEY_MMIO, KEY_DIR_WRITE, 0xfee000b0, 1, 20);
	check_entry(VMEXIT_ISA_USER, U_HLT, KEY_NONE, KEY_DIR_NONE, 0, 1, 10);
	CHECK_EQ_U64(entries(), 4);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEYS_FULL], 0);
	/* No kvm_exit, so no exit to the VMM can begin from the slot's user half with its key:
	 * the half is left alone (user_half_on()), never written only to be fallen back from. */
	CHECK_EQ_U64(slot0().utask, 0);
	CHECK_EQ_U64(skel->bss->guest_half_used, 0);
	vmexit_test_bpf__destroy(skel);
}

/*
 * An MSR handed to the VMM: KVM traces no kvm_msr for it, so an older MSR access's event in the
 * same KVM_RUN does not name it, where kvm_exit fires or not.
 */
static void test_user_msr(void)
{
	if (open_fx(16))
		return;
	/* No kvm_exit: a WRMSR the kernel handled, then an RDMSR to the VMM. */
	key(90, KEY_MSR, KEY_DIR_WRITE, 0x10, false);
	uexit(100, U_RDMSR);
	run(140);
	/* kvm_exit fires: the same, each with its guest exit. */
	kexit(200, VMX_MSR_READ);
	key(201, KEY_MSR, KEY_DIR_READ, 0x1b, false);
	kentry(210);
	kexit(300, VMX_MSR_READ);
	uexit(310, U_RDMSR);
	run(330);
	kentry(340);
	check_entry(VMEXIT_ISA_USER, U_RDMSR, KEY_NONE, KEY_DIR_NONE, 0, 2, 60);
	check_entry(VMEXIT_ISA_VMX, VMX_MSR_READ, KEY_MSR, KEY_DIR_READ, 0x1b, 1, 10);
	check_entry(VMEXIT_ISA_VMX, VMX_MSR_READ, KEY_NONE, KEY_DIR_NONE, 0, 1, 40);
	CHECK_EQ_U64(entries(), 3);
	vmexit_test_bpf__destroy(skel);
}

/* Where kvm_exit fires: the guest exit takes the key, the exit to the VMM it leads to too. */
static void test_carried_over(void)
{
	if (open_fx(16))
		return;
	kexit(1000, VMX_IO);
	key(1001, KEY_PORT, KEY_DIR_OUT, 0x3f8, false);
	uexit(1010, U_IO);
	run(1020);
	kentry(1030);
	/* An IN: the guest exit learns its port only when the VMM has answered. */
	kexit(2000, VMX_IO);
	uexit(2010, U_IO);
	run(2040);
	key(2041, KEY_PORT, KEY_DIR_IN, 0x511, true);
	kentry(2050);
	kexit(3000, VMX_HLT);
	kentry(3005);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x3f8, 1, 30);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x3f8, 1, 10);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_IN, 0x511, 1, 50);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0x511, 1, 30);
	check_entry(VMEXIT_ISA_VMX, VMX_HLT, KEY_NONE, KEY_DIR_NONE, 0, 1, 5);
	vmexit_test_bpf__destroy(skel);
}

/*
 * The instruction emulator's kvm_cpuid (leaf 0) during a string IO exit, before its kvm_pio:
 * the exit is the port's, not the leaf's; a CPUID exit alone keeps its leaf.
 */
static void test_emulated_cpuid(void)
{
	if (open_fx(16))
		return;
	kexit(1000, VMX_IO);
	key(1001, KEY_CPUID, KEY_DIR_NONE, 0, false);
	key(1002, KEY_PORT, KEY_DIR_IN, 0x511, false);
	kentry(1010);
	kexit(2000, VMX_CPUID);
	key(2001, KEY_CPUID, KEY_DIR_NONE, 0, false);
	kentry(2004);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_IN, 0x511, 1, 10);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_CPUID, KEY_DIR_NONE, 0, 0, 0);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 1, 4);
	vmexit_test_bpf__destroy(skel);
}

/*
 * What the SVM bed's SeaBIOS boots traced for a REP string IO with ECX 0 (`rep insw` at port
 * 0x170): kvm_exit (io), kvm_cpuid (leaf 0, the emulator's vendor check), kvm_entry, and no
 * kvm_pio: the exit read no port and keeps no key, on SVM and on VMX alike. A leaf traced in an
 * NPF exit (emulated MMIO) leaves the MMIO access its key. The CPUID exits around them keep
 * their leaves, and the next exit starts over (the flag is the exit's, not the thread's).
 */
static void test_rep_io_count0(void)
{
	if (open_fx(16))
		return;
	kexit_isa(1000, VMEXIT_ISA_SVM, SVM_CPUID);
	key(1001, KEY_CPUID, KEY_DIR_NONE, 1, false);
	kentry(1003);
	kexit_isa(2000, VMEXIT_ISA_SVM, SVM_IOIO);
	key(2001, KEY_CPUID, KEY_DIR_NONE, 0, false);
	kentry(2010);
	kexit_isa(3000, VMEXIT_ISA_SVM, SVM_NPF);
	key(3001, KEY_CPUID, KEY_DIR_NONE, 0, false);
	key(3002, KEY_MMIO, KEY_DIR_WRITE, 0xb8000, false);
	kentry(3020);
	kexit_isa(4000, VMEXIT_ISA_SVM, SVM_CPUID);
	key(4001, KEY_CPUID, KEY_DIR_NONE, 0, false);
	kentry(4005);
	kexit(5000, VMX_IO);
	key(5001, KEY_CPUID, KEY_DIR_NONE, 0, false);
	kentry(5040);
	/* An SEV-ES guest's CPUID is a VMGEXIT: its leaf stays its key. */
	kexit_isa(6000, VMEXIT_ISA_SVM, SVM_VMGEXIT);
	key(6001, KEY_CPUID, KEY_DIR_NONE, 0xd, false);
	kentry(6007);
	check_entry(VMEXIT_ISA_SVM, SVM_IOIO, KEY_CPUID, KEY_DIR_NONE, 0, 0, 0);
	check_entry(VMEXIT_ISA_SVM, SVM_IOIO, KEY_NONE, KEY_DIR_NONE, 0, 1, 10);
	check_entry(VMEXIT_ISA_SVM, SVM_NPF, KEY_MMIO, KEY_DIR_WRITE, 0xb8000, 1, 20);
	check_entry(VMEXIT_ISA_SVM, SVM_CPUID, KEY_CPUID, KEY_DIR_NONE, 1, 1, 3);
	check_entry(VMEXIT_ISA_SVM, SVM_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 1, 5);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_CPUID, KEY_DIR_NONE, 0, 0, 0);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_NONE, KEY_DIR_NONE, 0, 1, 40);
	check_entry(VMEXIT_ISA_SVM, SVM_VMGEXIT, KEY_CPUID, KEY_DIR_NONE, 0xd, 1, 7);
	CHECK_EQ_U64(entries(), 6);
	vmexit_test_bpf__destroy(skel);
}

/* A fast-path kvm_exit with the guest's RAX (leaf) and the vCPU's state (TOP_EXIT_LEAF's). */
#define V_L2		1	/* a nested guest runs */
#define V_L1_CPUID	2	/* L1 intercepts CPUID (SVM) */
#define V_FAULTING	4	/* CPUID faulting is on */

static void kexit_leaf(__u64 now, __u32 isa, __u32 reason, __u32 leaf, __u64 state)
{
	send((struct test_ctx){ .op = TOP_EXIT_LEAF, .now = now, .vcpu = 0, .isa = isa,
				.reason = reason, .rip = leaf, .info1 = state });
}

/*
 * The fast path keys a CPUID exit by the guest's RAX at kvm_exit, with no kvm_cpuid program:
 * each leaf its own entry, exact, on VMX and SVM. Where KVM would trace no kvm_cpuid (a VMX L2's
 * CPUID, which L1 handles; an SVM L2's that L1 intercepts; CPUID faulting on) the exit keeps no
 * key, as with the kvm_cpuid program; an SVM L2's CPUID that L1 lets through, which L0
 * emulates, keeps L2's leaf. A VMGEXIT is never keyed by RAX (encrypted): kvm_cpuid's program
 * keys it. With both (a run that switched to the fast path keeps the program) the exit is
 * counted once, under the same leaf. The leaf does not outlive its exit.
 */
static void test_leaf_at_exit(void)
{
	if (open_fx(16))
		return;
	kexit_leaf(1000, VMEXIT_ISA_VMX, VMX_CPUID, 0, 0);
	kentry(1002);
	kexit_leaf(2000, VMEXIT_ISA_VMX, VMX_CPUID, 0xd, 0);
	kentry(2003);
	kexit_leaf(3000, VMEXIT_ISA_VMX, VMX_CPUID, 0, 0);
	kentry(3004);
	kexit_leaf(4000, VMEXIT_ISA_VMX, VMX_CPUID, 0x80000008, 0);
	kentry(4005);
	/* The IO exit right after a keyed CPUID is its port's alone. */
	kexit_leaf(5000, VMEXIT_ISA_VMX, VMX_IO, 0x7, 0);
	key(5001, KEY_PORT, KEY_DIR_OUT, 0x80, false);
	kentry(5010);
	kexit_leaf(6000, VMEXIT_ISA_VMX, VMX_CPUID, 0x1, V_L2);
	kentry(6020);
	kexit_leaf(7000, VMEXIT_ISA_VMX, VMX_CPUID, 0x1, V_FAULTING);
	kentry(7030);
	kexit_leaf(8000, VMEXIT_ISA_SVM, SVM_CPUID, 0x1, 0);
	kentry(8006);
	kexit_leaf(9000, VMEXIT_ISA_SVM, SVM_CPUID, 0x1, V_L2 | V_L1_CPUID);
	kentry(9040);
	kexit_leaf(10000, VMEXIT_ISA_SVM, SVM_CPUID, 0x1, V_L2);
	kentry(10007);
	kexit_leaf(11000, VMEXIT_ISA_SVM, SVM_VMGEXIT, 0x99, 0);
	key(11001, KEY_CPUID, KEY_DIR_NONE, 0xd, false);
	kentry(11009);
	kexit_leaf(12000, VMEXIT_ISA_SVM, SVM_CPUID, 0x1, 0);
	key(12001, KEY_CPUID, KEY_DIR_NONE, 0x1, false);
	kentry(12011);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 2, 6);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0xd, 1, 3);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000008, 1, 5);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x80, 1, 10);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_NONE, KEY_DIR_NONE, 0, 2, 50);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 1, 0, 0);
	check_entry(VMEXIT_ISA_SVM, SVM_CPUID, KEY_CPUID, KEY_DIR_NONE, 1, 3, 24);
	check_entry(VMEXIT_ISA_SVM, SVM_CPUID, KEY_NONE, KEY_DIR_NONE, 0, 1, 40);
	check_entry(VMEXIT_ISA_SVM, SVM_VMGEXIT, KEY_CPUID, KEY_DIR_NONE, 0xd, 1, 9);
	check_entry(VMEXIT_ISA_SVM, SVM_VMGEXIT, KEY_CPUID, KEY_DIR_NONE, 0x99, 0, 0);
	CHECK_EQ_U64(entries(), 8);
	vmexit_test_bpf__destroy(skel);
}

/* One key fits: the next ones go to the cell's (other), each exit counted as keys_full. */
static void test_full(void)
{
	/* 0x71 twice: each of its exits finds the table full, not only its first. */
	static const __u64 ports[] = { 0x70, 0x71, 0x72, 0x71 };

	if (open_fx(1))
		return;
	for (__u64 i = 0; i < 4; i++) {
		key(i * 100 + 100, KEY_PORT, KEY_DIR_OUT, ports[i], false);
		uexit(i * 100 + 101, U_IO);
		run(i * 100 + 105);
	}
	uexit(10000, U_HLT);	/* settles the last IO exit */
	run(10001);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x70, 1, 4);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_OTHER, KEY_DIR_NONE, 0, 3, 12);
	check_entry(VMEXIT_ISA_USER, U_HLT, KEY_NONE, KEY_DIR_NONE, 0, 1, 1);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEYS_FULL], 3);
	CHECK_EQ_U64(skel->bss->keys_used, 1);
	vmexit_test_bpf__destroy(skel);
}

/* A guest-physical fault's key is its page, or its 2^shift block with --key-gpa-shift. */
static void test_gpa_shift(void)
{
	static const struct { __u32 shift; __u64 want; } cases[] = {
		{ 0, 0x12345000 }, { 21, 0x12200000 }, { 30, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpa_shift = cases[i].shift;
		if (open_fx(16))
			return;
		for (__u64 n = 0; n < 3; n++) {
			kexit(100 * n, VMX_EPT_VIOLATION);
			key(100 * n + 1, KEY_GPA, KEY_DIR_WRITE, 0x12345678 + (n << 12), false);
			kentry(100 * n + 7);
		}
		check_entry(VMEXIT_ISA_VMX, VMX_EPT_VIOLATION, KEY_GPA, KEY_DIR_WRITE,
			    cases[i].want, cases[i].shift ? 3 : 1, cases[i].shift ? 21 : 7);
		CHECK_EQ_U64(entries(), cases[i].shift ? 1 : 3);
		vmexit_test_bpf__destroy(skel);
	}
	gpa_shift = 0;
}

/*
 * External interrupts and NMIs are keyed by their vector: VMX's from the interruption
 * information (valid bit 31, type 10:8, vector 7:0), SVM's NMI exit as vector 2. A VMX
 * exception other than an NMI, interruption information without its valid bit (kernels before
 * 5.10 trace none) and SVM's INTR exit (which carries no vector) stay keyless.
 */
static void test_vectors(void)
{
	static const struct { __u32 isa, reason, intr_info, kind; __u64 vector; } cases[] = {
		{ VMEXIT_ISA_VMX, 1, 0x800000ec, KEY_VECTOR, 0xec },	/* LOCAL_TIMER */
		{ VMEXIT_ISA_VMX, 1, 0x800000fd, KEY_VECTOR, 0xfd },	/* RESCHEDULE */
		{ VMEXIT_ISA_VMX, 1, 0x80000041, KEY_VECTOR, 0x41 },	/* a device's */
		{ VMEXIT_ISA_VMX, 0, 0x80000202, KEY_VECTOR, 2 },	/* NMI: type 2 */
		{ VMEXIT_ISA_VMX, 0, 0x80000b0e, KEY_NONE, 0 },	/* #PF: type 3 */
		{ VMEXIT_ISA_VMX, 0, 0x80000612, KEY_NONE, 0 },	/* int $0x12 */
		{ VMEXIT_ISA_VMX, 1, 0x000000ec, KEY_NONE, 0 },	/* not valid */
		{ VMEXIT_ISA_VMX, 30, 0x800000ec, KEY_NONE, 0 },	/* not an interrupt exit */
		{ VMEXIT_ISA_SVM, 0x61, 0, KEY_VECTOR, 2 },		/* SVM NMI */
		{ VMEXIT_ISA_SVM, 0x60, 0x800000ec, KEY_NONE, 0 },	/* SVM INTR */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (open_fx(16))
			return;
		for (__u64 n = 0; n < 2; n++) {
			kexit_intr(100 * n, cases[i].isa, cases[i].reason, cases[i].intr_info);
			kentry(100 * n + 3 + n);
		}
		check_entry(cases[i].isa, cases[i].reason, cases[i].kind, KEY_DIR_NONE,
			    cases[i].vector, 2, 7);
		CHECK_EQ_U64(entries(), 1);
		vmexit_test_bpf__destroy(skel);
	}
}

/*
 * A thread that ends in an exit to the VMM (and, where kvm_exit fires, in the guest exit
 * behind it): each is counted under its key as left, its age as time, in no latency.
 */
static void test_left(void)
{
	struct key_stats st;

	if (open_fx(16))
		return;
	key(90, KEY_PORT, KEY_DIR_OUT, 0xe9, false);
	uexit(100, U_IO);
	run(110);
	kexit(200, VMX_IO);
	key(201, KEY_PORT, KEY_DIR_OUT, 0xea, false);
	uexit(210, U_IO);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = 250 });
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 1, 10);
	st = entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xea);
	CHECK_EQ_U64(st.count, 0);
	CHECK_EQ_U64(st.left, 1);
	CHECK_EQ_U64(st.total_ns, 40);
	CHECK_EQ_U64(st.max_ns, 0);
	st = entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xea);
	CHECK_EQ_U64(st.left, 1);
	CHECK_EQ_U64(st.total_ns, 50);
	vmexit_test_bpf__destroy(skel);
}

/* One guest exit of reason, keyed by a port write, latency lat. */
static void port_exit(__u64 t, __u32 reason, __u64 port, __u64 lat)
{
	kexit(t, reason);
	key(t + 1, KEY_PORT, KEY_DIR_OUT, port, false);
	kentry(t + lat);
}

/*
 * The thread's cache of (cell, key) -> slot: keys that share a way evict each other, and a way
 * holds one cell's key, so that another cell's same key, or the same cell's other key in that
 * way, is never charged to the entry cached there. The cache's way is (cell + key + kind + dir)
 * mod 8: ports 0x70 and 0x78 on one cell share one, and so do port 0x70 on cells 1 and 9.
 */
static void test_cache_ways(void)
{
	const int n = 20;
	__u64 t = 1000;

	if (open_fx(16))
		return;
	/* Cell 1 (IO), then cells 2-9: reasons 1 to 8, unkeyed (their `none` rows). */
	port_exit(t, VMX_IO, 0x70, 3);
	for (__u32 r = 1; r <= 8; r++) {
		t += 100;
		kexit(t, r);
		kentry(t + 1);
	}
	for (int i = 0; i < n; i++) {
		t += 100;
		port_exit(t, VMX_IO, 0x78, 5);
		port_exit(t + 10, 8, 0x70, 7);	/* cell 9 */
		port_exit(t + 20, VMX_IO, 0x70, 3);
		port_exit(t + 30, VMX_IO, 0x70, 3);	/* a hit */
	}
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x70, 1 + 2 * n, 3 * (1 + 2 * n));
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x78, n, 5 * n);
	check_entry(VMEXIT_ISA_VMX, 8, KEY_PORT, KEY_DIR_OUT, 0x70, n, 7 * n);
	check_entry(VMEXIT_ISA_VMX, 8, KEY_NONE, KEY_DIR_NONE, 0, 1, 1);
	CHECK_EQ_U64(entries(), 3 + 8);
	CHECK_EQ_U64(skel->bss->keys_used, 3);
	vmexit_test_bpf__destroy(skel);
}

static bool gone_tgid(void *ctx, __u32 tgid, __u64 start)
{
	(void)ctx;
	(void)start;
	return tgid == TGID;
}

/*
 * A gone guest's entries leave the kernel's table (key_rows_forget): none left, its keys no
 * longer counted against --max-keys, and its slots reused zeroed by the next guest's keys
 * (a slot handed back unzeroed would show the old exit in the new entry's histogram).
 */
static void test_forget(void)
{
	struct key_rows kr;
	struct key_stats st;
	__u32 sum = 0;

	if (open_fx(2))
		return;
	port_exit(100, VMX_IO, 0x70, 4);
	port_exit(200, VMX_IO, 0x71, 4);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = 300 });
	CHECK_EQ_U64(entries(), 2);
	CHECK_EQ_U64(skel->bss->keys_used, 2);
	key_rows_init(&kr, bpf_map__fd(skel->maps.key_table), BY_VCPU, -1);
	kr.slots_fd = bpf_map__fd(skel->maps.key_slots);
	kr.free_fd = bpf_map__fd(skel->maps.free_keys);
	kr.used = &skel->bss->keys_used;
	CHECK(key_rows_sample(&kr, NULL) == 0);
	CHECK(key_rows_forget(&kr, gone_tgid, NULL, true) == 0);
	CHECK_EQ_U64(entries(), 0);
	CHECK_EQ_U64(skel->bss->keys_used, 0);
	/* The next guest on the same ids: two real keys fit again, in the two slots freed. */
	port_exit(1000, VMX_IO, 0x72, 6);
	port_exit(1100, VMX_IO, 0x73, 6);
	st = entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x72);
	CHECK_EQ_U64(st.count, 1);
	CHECK_EQ_U64(st.total_ns, 6);
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		sum += st.hist[b];
	CHECK_EQ_U64(sum, 1);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x73, 1, 6);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEYS_FULL], 0);
	CHECK_EQ_U64(skel->bss->next_key, 2);
	key_rows_free(&kr);
	vmexit_test_bpf__destroy(skel);
}

/*
 * The per-CPU slot with keys: kvm_entry charges from the slot an exit whose key entry kvm_exit
 * knew (the leaf, in the thread's cache since the leaf's first exit), and any other through
 * the thread's state, with the same entries: an unkeyed exit's none row, cached, is not the
 * key of the next exit of its cell (a port comes after kvm_exit); an exit ended on another CPU
 * than its kvm_exit's; and an exit to the VMM with no guest exit in flight does not take the
 * key of the last one, which the slot ended and the thread's state still names.
 */
static void test_slot(void)
{
	__u64 t = 1000;

	if (open_fx(16))
		return;
	for (int i = 0; i < 10; i++, t += 100) {
		kexit_leaf(t, VMEXIT_ISA_VMX, VMX_CPUID, i & 1 ? 0x80000001 : 0, 0);
		kentry(t + 3 + (i & 1));
		/* From its leaf's second exit on, the slot knows the entry. */
		CHECK_EQ_U64(slot_kslot(0) != 0, slot_on && i >= 2);
	}
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 5, 15);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001, 5, 20);
	/* An IO exit with no key, then two keyed by their port after kvm_exit. */
	kexit(t, VMX_IO);
	kentry(t + 2);
	port_exit(t + 100, VMX_IO, 0x70, 5);
	port_exit(t + 200, VMX_IO, 0x70, 5);
	/* The second port's entry was in the thread's cache: its key event noted it. */
	CHECK_EQ_U64(slot_kslot(0) != 0, slot_on);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_NONE, KEY_DIR_NONE, 0, 1, 2);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x70, 2, 10);
	/* A cached leaf's exit ended on CPU 1: through the thread's state. */
	t += 1000;
	kexit_leaf(t, VMEXIT_ISA_VMX, VMX_CPUID, 0, 0);
	kentry_on(t + 7, 1);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 6, 22);
	/* A leaf's exit, then an exit to the VMM (a signal) with no guest exit in flight. */
	kexit_leaf(t + 100, VMEXIT_ISA_VMX, VMX_CPUID, 0, 0);
	kentry(t + 103);
	uexit(t + 200, U_HLT);
	run(t + 210);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 7, 25);
	check_entry(VMEXIT_ISA_USER, U_HLT, KEY_NONE, KEY_DIR_NONE, 0, 1, 10);
	check_entry(VMEXIT_ISA_USER, U_HLT, KEY_CPUID, KEY_DIR_NONE, 0, 0, 0);
	CHECK_EQ_U64(entries(), 5);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/* run_keys: the thread's context switches so far, at its puts and exits (a move adds one). */
static __u64 switches;

/* run_keys: a KVM_RUN's end on cpu notes the exit to the VMM of reason that follows, key k. */
static void put_on(__u64 now, __u32 cpu, __u32 reason, __u32 kind, __u32 dir, __u64 k)
{
	send((struct test_ctx){ .op = TOP_RUN_PUT, .now = now, .info1 = cpu, .reason = reason,
				.rip = k, .info2 = kind << 16 | dir, .intr_err = switches });
}

static void put(__u64 now, __u32 reason, __u32 kind, __u32 dir, __u64 k)
{
	put_on(now, 0, reason, kind, dir, k);
}

/* A put that found no vCPU, on cpu. */
static void put_unread_on(__u64 now, __u32 cpu)
{
	send((struct test_ctx){ .op = TOP_RUN_PUT, .now = now, .info1 = cpu, .reason = U_IO,
				.err = 1, .intr_err = switches });
}

static void uexit_on(__u64 now, __u32 reason, __u32 cpu)
{
	send((struct test_ctx){ .op = TOP_USER_EXIT, .now = now, .reason = reason, .info1 = cpu,
				.intr_err = switches });
}

static void run_on(__u64 now, __u32 cpu)
{
	send((struct test_ctx){ .op = TOP_RUN, .now = now, .info1 = cpu });
}

/* One exit to the VMM on cpu keyed by port p, out (put, exit, KVM_RUN), latency lat. */
static void run_key_out(__u64 t, __u32 cpu, __u64 p, __u64 lat)
{
	put_on(t, cpu, U_IO, KEY_PORT, KEY_DIR_OUT, p);
	uexit_on(t + 1, U_IO, cpu);
	run_on(t + 1 + lat, cpu);
}

/*
 * Exits to the VMM keyed from kvm_run (run_keys): no key event at all, each exit's key noted at
 * the end of the KVM_RUN before it and taken by its kvm_userspace_exit, on the slot's user half
 * (begun and ended there once the half holds the key's entry) or through the thread's state.
 */
static void test_run_keys(void)
{
	struct key_stats st;
	__u64 t = 1000;

	fx_run_keys = true;
	switches = 0;
	if (open_fx(16))
		goto out;
	/* Alternating keys, two of each: an OUT and an IN, exact at once (no wait for the IN). */
	for (int i = 0; i < 4; i++, t += 100) {
		put(t, U_IO, KEY_PORT, i & 1 ? KEY_DIR_IN : KEY_DIR_OUT, i & 1 ? 0xe8 : 0xe9);
		uexit_on(t + 1, U_IO, 0);
		run(t + 11 + (i & 1));
	}
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 2, 20);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0xe8, 2, 22);
	/* The same key again: the half holds its entry (written when the last ended through the
	 * thread's state), and the exit ends there: its start stays in the half, where an end
	 * through the state leaves none. */
	for (int i = 0; i < 3; i++, t += 100) {
		put(t, U_IO, KEY_PORT, KEY_DIR_IN, 0xe8);
		uexit_on(t + 1, U_IO, 0);
		CHECK_EQ_U64(slot0().ukslot != 0, slot_on);
		run(t + 5);
		CHECK_EQ_U64(slot0().ustart != 0, slot_on);
	}
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0xe8, 5, 34);
	/* An MMIO write, then a HLT (kvm_run has no key for it: none). */
	put(t, U_MMIO, KEY_MMIO, KEY_DIR_WRITE, 0x10000000);
	uexit_on(t + 1, U_MMIO, 0);
	run(t + 4);
	put(t + 10, U_HLT, KEY_NONE, KEY_DIR_NONE, 0);
	uexit_on(t + 11, U_HLT, 0);
	run(t + 20);
	check_entry(VMEXIT_ISA_USER, U_MMIO, KEY_MMIO, KEY_DIR_WRITE, 0x10000000, 1, 3);
	check_entry(VMEXIT_ISA_USER, U_HLT, KEY_NONE, KEY_DIR_NONE, 0, 1, 9);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEY_RUN], 0);
	/* A put that found no vCPU replaces the note before it: its exit takes none (counted). */
	t += 100;
	put(t, U_IO, KEY_PORT, KEY_DIR_OUT, 0x70);
	put_unread_on(t + 1, 0);
	uexit_on(t + 2, U_IO, 0);
	run(t + 6);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_NONE, KEY_DIR_NONE, 0, 1, 4);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x70, 0, 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEY_RUN], 1);
	/* A failed KVM_RUN (an errno: no key, none counted) uses its put's note up all the same:
	 * the next exit, whose put ran on another CPU, does not take it. */
	t += 100;
	put(t, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9);
	send((struct test_ctx){ .op = TOP_USER_EXIT, .now = t + 1, .reason = U_IO, .err = -4,
				.intr_err = switches });
	run(t + 5);
	put_on(t + 10, 1, U_IO, KEY_PORT, KEY_DIR_OUT, 0x71);
	uexit_on(t + 11, U_IO, 0);
	run(t + 16);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 2, 20);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x71, 0, 0);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_NONE, KEY_DIR_NONE, 0, 2, 9);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEY_RUN], 2);
	/* The thread moved between its put (CPU 0) and its exit (CPU 1), switched out on the way:
	 * no key (counted); the note it left on CPU 0 is taken by none of its later exits there,
	 * not even one whose own put ran elsewhere. */
	t += 100;
	put_on(t, 0, U_IO, KEY_PORT, KEY_DIR_IN, 0x60);
	switches++;
	uexit_on(t + 1, U_IO, 1);
	run_on(t + 8, 1);
	put_on(t + 10, 1, U_IO, KEY_PORT, KEY_DIR_IN, 0x61);
	switches++;
	uexit_on(t + 11, U_IO, 0);
	run_on(t + 20, 0);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0x60, 0, 0);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0x61, 0, 0);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_NONE, KEY_DIR_NONE, 0, 4, 25);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEY_RUN], 4);
	/* Back to normal on either CPU: keyed exactly. */
	run_key_out(t + 100, 1, 0x3f8, 6);
	run_key_out(t + 200, 0, 0x3f8, 6);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0x3f8, 2, 12);
	/* An exit the thread ends in keeps its key, as left. */
	t += 1000;
	put(t, U_IO, KEY_PORT, KEY_DIR_OUT, 0xea);
	uexit_on(t + 1, U_IO, 0);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = t + 41 });
	st = entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xea);
	CHECK_EQ_U64(st.count, 0);
	CHECK_EQ_U64(st.left, 1);
	CHECK_EQ_U64(st.total_ns, 40);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_RUN], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_KEY_RUN], 4);
	vmexit_test_bpf__destroy(skel);
out:
	fx_run_keys = false;
}

/* kvm_exit_fast's exit (its slot path first, bpf/vmexit.bpf.c), a CPUID's leaf from RAX. */
static void kexit_fast(__u64 now, __u32 reason, __u32 leaf)
{
	send((struct test_ctx){ .op = TOP_EXIT_FAST, .now = now, .vcpu = 0,
				.isa = VMEXIT_ISA_VMX, .reason = reason, .rip = leaf });
}

/*
 * kvm_exit_fast with keys: back-to-back exits of one reason on one CPU whose key changes each
 * time, each leaf and port charged to its own entry: the CPU's slot, which holds the last
 * exit's key, begins none of them (a slot-begun exit would keep the last exit's key: its
 * leaf, or its port as a final key no later port replaces).
 */
static void test_slot_exit_fast(void)
{
	__u64 t = 1000;

	if (open_fx(16))
		return;
	for (int i = 0; i < 10; i++, t += 100) {
		kexit_fast(t, VMX_CPUID, i & 1 ? 0x80000001 : 0);
		kentry(t + 3 + (i & 1));
	}
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 5, 15);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001, 5, 20);
	/* Ports come after kvm_exit: 0x70, 0x71, 0x70. */
	for (int i = 0; i < 3; i++, t += 100) {
		kexit_fast(t, VMX_IO, 0);
		key(t + 1, KEY_PORT, KEY_DIR_OUT, 0x70 + (i & 1), false);
		kentry(t + 10 * (i + 1));
	}
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x70, 2, 10 + 30);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0x71, 1, 20);
	CHECK_EQ_U64(entries(), 4);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/* The same on CPU cpu, with a cached interrupt's information (the vector's key). */
static void kexit_fast_on(__u64 now, __u32 reason, __u64 rip, __u32 cpu, __u32 intr_info)
{
	send((struct test_ctx){ .op = TOP_EXIT_FAST, .now = now, .vcpu = 0,
				.isa = VMEXIT_ISA_VMX, .reason = reason, .rip = rip,
				.err = (__s32)cpu, .intr_err = (__u64)intr_info << 32 });
}

/*
 * kvm_exit_fast begins a keyed exit from its CPU's slot when the exit repeats the key of the
 * thread's last exit there and that key's entry is known (cpu_slot_exit()). Each exit's key is
 * its own: a leaf repeated, then another leaf of the same reason, vectors of one reason; a
 * thread whose exit key changed on another CPU (the first CPU's slot still holds the old key,
 * the thread's state the new one) back on the first CPU with the old key, its entry on the
 * other CPU (the thread's state's key is the one charged); and, with the slot on, an exit
 * begun and ended from the slot with the thread's state gone (no state, no new cell).
 */
static void test_slot_exit_keys(void)
{
	__u64 t = 1000, cells;

	if (open_fx(16))
		return;
	/* Leaf 0 four times (known from the second, from the slot from the third), leaf 1. */
	for (int i = 0; i < 4; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
		kentry(t + 2);
	}
	kexit_fast_on(t, VMX_CPUID, 0x80000001, 0, 0);
	kentry(t + 5);
	t += 100;
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 4, 8);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001, 1, 5);
	/* Vectors of one reason: 0xec three times, then 0x20. */
	for (int i = 0; i < 4; i++, t += 100) {
		kexit_fast_on(t, 1, 0, 0, i < 3 ? 0x800000ec : 0x80000020);
		kentry(t + 7);
	}
	check_entry(VMEXIT_ISA_VMX, 1, KEY_VECTOR, KEY_DIR_NONE, 0xec, 3, 21);
	check_entry(VMEXIT_ISA_VMX, 1, KEY_VECTOR, KEY_DIR_NONE, 0x20, 1, 7);
	/* Leaf 0 on CPU 0 and leaf 1 on CPU 1, each known: then leaf 0 back on CPU 0 (slot 0
	 * holds leaf 0, the thread's state leaf 1), its entry on CPU 1. */
	for (int i = 0; i < 2; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
		kentry_on(t + 2, 0);
	}
	for (int i = 0; i < 2; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, 0x80000001, 1, 0);
		kentry_on(t + 5, 1);
	}
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	kentry_on(t + 30, 1);
	t += 100;
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 7, 8 + 4 + 30);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001, 3, 5 + 10);
	CHECK_EQ_U64(entries(), 4);
	/* Leaf 0 twice on CPU 0, then the thread's state gone before a third. */
	for (int i = 0; i < 2; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
		kentry(t + 2);
	}
	cells = skel->bss->next_cell;
	state_gone();
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	kentry(t + 9);
	if (slot_on) {
		check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 10, 42 + 4 + 9);
		CHECK_EQ_U64(skel->bss->next_cell, cells);
		CHECK_EQ_U64(entries(), 4);
	} else {
		/* A new state: a new cell, a new entry, the exit ended through the state. */
		CHECK_EQ_U64(skel->bss->next_cell, cells + 1);
		CHECK_EQ_U64(entries(), 5);
	}
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/*
 * --by rip: an IO exit's RIP is final at kvm_exit, so the slot may begin the next exit at the
 * same RIP; but its exit to the VMM waits for its key (late_ref) until the next kvm_exit at
 * the latest, which the slot must not skip: after each guest exit, the last exit to the VMM
 * is charged. Then RIPs of one reason, each its own entry.
 */
static void test_slot_exit_rip(void)
{
	__u64 t = 1000;

	fx_mode = KEY_MODE_RIP;
	if (open_fx(16))
		goto out;
	for (int i = 0; i < 4; i++, t += 100) {
		kexit_fast_on(t, VMX_IO, 0x1000, 0, 0);
		CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_RIP, KEY_DIR_NONE, 0x1000).count,
			     i);
		uexit(t + 1, U_IO);
		run(t + 11);
		kentry(t + 13);
	}
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_RIP, KEY_DIR_NONE, 0x1000, 4, 4 * 13);
	for (int i = 0; i < 6; i++, t += 100) {
		kexit_fast_on(t, VMX_HLT, i < 3 ? 0x2000 : 0x2004, 0, 0);
		kentry(t + 1 + (i >= 3));
	}
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_RIP, KEY_DIR_NONE, 0x1000, 4, 4 * 10);
	check_entry(VMEXIT_ISA_VMX, VMX_HLT, KEY_RIP, KEY_DIR_NONE, 0x2000, 3, 3);
	check_entry(VMEXIT_ISA_VMX, VMX_HLT, KEY_RIP, KEY_DIR_NONE, 0x2004, 3, 6);
	CHECK_EQ_U64(entries(), 4);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
out:
	fx_mode = 0;
}

/*
 * Alternating keys begin from the slot (issue 33, the slot's ways): leaves 0 and 0x80000001 in
 * turn on CPU 0, as the bench guest makes them. Each leaf's first exit makes its entry, its
 * second finds it in the thread's cache and puts it in a way of the slot; from then on each
 * exit begins from the slot, and the thread's state can go with no new cell made. Latencies 3
 * for leaf 0 and 4 for the other, ten of each.
 */
static void test_slot_exit_alternate(void)
{
	__u64 t = 1000, cells = 0, n;

	if (open_fx(16))
		return;
	for (int i = 0; i < 20; i++, t += 100) {
		if (i == 10) {
			cells = skel->bss->next_cell;
			state_gone();
		}
		kexit_fast_on(t, VMX_CPUID, i & 1 ? 0x80000001 : 0, 0, 0);
		kentry(t + 3 + (i & 1));
	}
	/* Without the slot the new state's cell has entries of its own: five of each in each. */
	n = slot_on ? 10 : 5;
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, n, 3 * n);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001, n, 4 * n);
	if (slot_on) {
		/* Every exit after the state went began and ended from the slot. */
		CHECK_EQ_U64(skel->bss->next_cell, cells);
		CHECK_EQ_U64(entries(), 2);
	} else {
		CHECK_EQ_U64(skel->bss->next_cell, cells + 1);
		CHECK_EQ_U64(entries(), 4);
	}
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/*
 * A slot-begun exit's key is its cell's, not the thread's state's (which keeps the key of the
 * last exit begun through it): each reader of the exit's key takes the newer. Leaf A = 0,
 * B = 0x80000001, warmed up so that both begin from the slot (the state's key is B after):
 * an exit of A ended on CPU 1 (the entry's fallback through the state); then B through the
 * state (the fallback un-named the cell) with an exit to the VMM during it, whose key is B,
 * not the cell's older A; an exit of A from the slot with an exit to the VMM during it (A);
 * an exit of A from the slot in flight when the thread ends 40 later (left under A).
 */
static void test_slot_key_readers(void)
{
	__u64 t = 1000;
	struct key_stats st;

	if (open_fx(16))
		return;
	for (int i = 0; i < 4; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, i & 1 ? 0x80000001 : 0, 0, 0);
		kentry(t + 1);
	}
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	kentry_on(t + 30, 1);
	t += 100;
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 3, 32);
	kexit_fast_on(t, VMX_CPUID, 0x80000001, 0, 0);
	uexit(t + 5, U_HLT);
	run(t + 25);
	kentry(t + 27);
	t += 100;
	check_entry(VMEXIT_ISA_USER, U_HLT, KEY_CPUID, KEY_DIR_NONE, 0x80000001, 1, 20);
	check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001, 3, 29);
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	uexit(t + 5, U_MMIO);
	run(t + 15);
	kentry(t + 16);
	t += 100;
	check_entry(VMEXIT_ISA_USER, U_MMIO, KEY_CPUID, KEY_DIR_NONE, 0, 1, 10);
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = t + 40 });
	st = entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0);
	CHECK_EQ_U64(st.count, 4);
	CHECK_EQ_U64(st.left, 1);
	CHECK_EQ_U64(st.total_ns, 48 + 40);
	st = entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0x80000001);
	CHECK_EQ_U64(st.count, 3);
	CHECK_EQ_U64(st.left, 0);
	CHECK_EQ_U64(st.total_ns, 29);
	CHECK_EQ_U64(entries(), 4);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/* The cell of (isa, reason) of the test's thread, as the kernel left it. */
static struct cell cell_of(__u32 isa, __u32 reason)
{
	int fd = bpf_map__fd(skel->maps.cells);
	struct cell c, none = {};

	for (__u32 i = 0; i < 64; i++) {
		if (bpf_map_lookup_elem(fd, &i, &c))
			break;
		if (c.key.ready && c.key.tid == TID && c.key.isa == isa && c.key.reason == reason)
			return c;
	}
	return none;
}

/* One OUT to port p that goes to the VMM, as KVM traces it, on CPU 0: guest lat 15, VMM 10. */
static void out_exit(__u64 t, __u64 p)
{
	kexit_fast_on(t, VMX_IO, 0, 0, 0);
	key(t + 1, KEY_PORT, KEY_DIR_OUT, p, false);
	uexit(t + 2, U_IO);
	run(t + 12);
	kentry(t + 15);
}

/*
 * Keyed exits to the VMM on the slot (issue 33): an IO exit's port comes after kvm_exit, so the
 * slot begins it with its key none (cell.slot_keyed, the key in the cell), kvm_pio names it
 * there and notes its entry in the slot (once the thread's cache holds it), and kvm_entry ends
 * it from the slot; an OUT's exit to the VMM, keyed by its guest exit's final port, is charged
 * at its KVM_RUN, not at the next kvm_exit. OUTs to 0xe9, INs from 0x60 (their port known only
 * at their completion, after the KVM_RUN: they wait, and the next kvm_exit goes through the
 * thread's state), HLTs (no key ever), then OUTs again: every entry as without the slot.
 */
static void test_slot_keyed_io(void)
{
	struct cpu_exit_slot s;
	__u64 t = 1000;

	if (open_fx(16))
		return;
	for (int i = 0; i < 4; i++, t += 100) {
		out_exit(t, 0xe9);
		/* Charged at its KVM_RUN: before the next kvm_exit. */
		CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9).count,
			     i + 1);
	}
	/* From the third OUT on: begun from the slot, its entry noted by kvm_pio; its exit to
	 * the VMM begun from the slot's user half with the port, its entry from a way. */
	CHECK_EQ_U64(cell_of(VMEXIT_ISA_VMX, VMX_IO).slot_keyed, slot_on);
	CHECK_EQ_U64(cell_of(VMEXIT_ISA_USER, U_IO).slot_keyed, slot_on);
	s = slot0();
	CHECK_EQ_U64(s.kslot != 0 && s.kref == s.ref, slot_on);
	CHECK_EQ_U64(s.ukslot != 0, slot_on);
	CHECK_EQ_U64(skel->bss->guest_half_used, slot_on);
	/* One whose KVM_RUN is on CPU 1: through the thread's state, under the cell's port. */
	kexit_fast_on(t, VMX_IO, 0, 0, 0);
	key(t + 1, KEY_PORT, KEY_DIR_OUT, 0xe9, false);
	uexit(t + 2, U_IO);
	send((struct test_ctx){ .op = TOP_RUN, .now = t + 12, .info1 = 1 });
	kentry_on(t + 15, 1);
	CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9).count, 5);
	t += 100;
	for (int i = 0; i < 2; i++, t += 100) {
		kexit_fast_on(t, VMX_IO, 0, 0, 0);
		uexit(t + 2, U_IO);
		run(t + 22);
		CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0x60).count, i);
		key(t + 23, KEY_PORT, KEY_DIR_IN, 0x60, true);
		kentry(t + 25);
	}
	for (int i = 0; i < 3; i++, t += 100) {
		kexit_fast_on(t, VMX_HLT, 0, 0, 0);
		kentry(t + 50);
	}
	for (int i = 0; i < 3; i++, t += 100)
		out_exit(t, 0xe9);
	/* A CPUID, then an OUT to 0xea begun through the state (the reason changed): its IO cell
	 * still holds the last slot-begun exit's port, which is not this exit's, and its exit to
	 * the VMM's cell is still named (the last one ended from the slot). */
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	kentry(t + 1);
	out_exit(t + 50, 0xea);
	t += 100;
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xea, 1, 10);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xea, 1, 15);
	/* The thread ends in an OUT's exit to the VMM: left under its port. */
	kexit_fast_on(t, VMX_IO, 0, 0, 0);
	key(t + 1, KEY_PORT, KEY_DIR_OUT, 0xe9, false);
	uexit(t + 2, U_IO);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = t + 40 });
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 8, 8 * 15 + 40);
	CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9).count, 8);
	CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9).left, 1);
	CHECK_EQ_U64(entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9).total_ns, 8 * 10 + 38);
	CHECK_EQ_U64(entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xe9).left, 1);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_IN, 0x60, 2, 2 * 25);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_IN, 0x60, 2, 2 * 20);
	check_entry(VMEXIT_ISA_VMX, VMX_HLT, KEY_NONE, KEY_DIR_NONE, 0, 3, 3 * 50);
	CHECK_EQ_U64(entries(), 8);
	CHECK_EQ_U64(cell_of(VMEXIT_ISA_VMX, VMX_IO).count, 11);
	CHECK_EQ_U64(cell_of(VMEXIT_ISA_USER, U_IO).count, 11);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/*
 * Key events of exits begun from the slot take the slot too (cpu_slot_key()): a CPUID leaf
 * traced in a CPUID exit whose leaf kvm_exit read changes nothing; an OUT's port, once an
 * earlier OUT's entry is in a way (that exit ended from the slot), names its exit's key and
 * entry there. With the thread's state gone before such an exit, the slot runs it whole (the
 * exit to the VMM and its KVM_RUN too): no state is made again, no cell, and the entries are
 * as without the slot.
 */
static void test_slot_key_event(void)
{
	__u64 t = 1000, cells;

	if (open_fx(16))
		return;
	for (int i = 0; i < 4; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
		key(t + 1, KEY_CPUID, KEY_DIR_NONE, 0, false);
		kentry(t + 2);
	}
	cells = skel->bss->next_cell;
	state_gone();
	kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
	key(t + 1, KEY_CPUID, KEY_DIR_NONE, 0, false);
	kentry(t + 2);
	t += 100;
	if (slot_on) {
		CHECK_EQ_U64(states(), 0);
		CHECK_EQ_U64(skel->bss->next_cell, cells);
		check_entry(VMEXIT_ISA_VMX, VMX_CPUID, KEY_CPUID, KEY_DIR_NONE, 0, 5, 10);
	} else {
		/* A new state: a new cell, the exit ended through the state. */
		CHECK_EQ_U64(states(), 1);
		CHECK_EQ_U64(skel->bss->next_cell, cells + 1);
	}
	for (int i = 0; i < 4; i++, t += 100)
		out_exit(t, 0xe9);
	cells = skel->bss->next_cell;
	state_gone();
	out_exit(t, 0xe9);
	t += 100;
	if (slot_on) {
		CHECK_EQ_U64(states(), 0);
		CHECK_EQ_U64(skel->bss->next_cell, cells);
		check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 5, 5 * 15);
		check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 5, 5 * 10);
	} else {
		/* A new state: new cells for the exit and its exit to the VMM. */
		CHECK_EQ_U64(states(), 1);
		CHECK_EQ_U64(skel->bss->next_cell, cells + 2);
	}
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	CHECK_EQ_U64(skel->bss->lost[LOST_OVERWRITTEN_EXIT], 0);
	vmexit_test_bpf__destroy(skel);
}

/*
 * OUTs to 0xea begun through the thread's state (each after a CPUID) while their IO cell still
 * holds the port of the last OUT the slot began (0xe9): kvm_entry ends them from the slot with
 * their entry, and fills a way only for a key the cell holds as the exit's (slot_keyed), never
 * (cell, 0xe9) with 0xea's entry; the OUTs to 0xe9 after them keep their own entry.
 */
static void test_slot_key_stale_way(void)
{
	__u64 t = 1000;

	if (open_fx(16))
		return;
	for (int i = 0; i < 4; i++, t += 100)
		out_exit(t, 0xe9);
	for (int i = 0; i < 2; i++, t += 100) {
		kexit_fast_on(t, VMX_CPUID, 0, 0, 0);
		kentry(t + 2);
		t += 100;
		out_exit(t, 0xea);
	}
	for (int i = 0; i < 2; i++, t += 100)
		out_exit(t, 0xe9);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 6, 6 * 15);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xea, 2, 2 * 15);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, 6, 6 * 10);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xea, 2, 2 * 10);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	vmexit_test_bpf__destroy(skel);
}

/*
 * An IN's exit to the VMM after OUTs that the slot handled whole (their key events through the
 * thread's state, their exits to the VMM and KVM_RUNs from the slot): its key is its guest
 * exit's, none until its completion, not the last OUT's port; the thread ends while the VMM has
 * it: left under none.
 */
static void test_slot_keyed_in_left(void)
{
	struct key_stats st;
	__u64 t = 1000;

	if (open_fx(16))
		return;
	for (int i = 0; i < 4; i++, t += 100)
		out_exit(t, 0xe9);
	kexit_fast_on(t, VMX_IO, 0, 0, 0);
	uexit(t + 2, U_IO);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = t + 30 });
	st = entry(VMEXIT_ISA_USER, U_IO, KEY_NONE, KEY_DIR_NONE, 0);
	CHECK_EQ_U64(st.left, 1);
	CHECK_EQ_U64(st.total_ns, 28);
	st = entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9);
	CHECK_EQ_U64(st.count, 4);
	CHECK_EQ_U64(st.left, 0);
	CHECK_EQ_U64(st.total_ns, 40);
	vmexit_test_bpf__destroy(skel);
}

/*
 * The key event that notes an entry in the slot is preemptible: another thread's kvm_exit may
 * write the slot between its test and its stores (the object's KEY_SLOT_PREEMPTED). Thread B
 * exits (HLT) on CPU 1; thread A's OUT begins on CPU 0, and while its kvm_pio notes its entry,
 * B's exit lands in CPU 0's slot (as if B had exited there). B's kvm_entry on CPU 0 must not end
 * B's exit under A's entry (kref names A's cell, not the slot's B's), and A's exit, no longer
 * the slot's, ends through its state under its port.
 */
static void slot_keyed_race_after(int outs)
{
	struct cpu_exit_slot s;
	__u64 t = 1000;

	if (open_fx(16))
		return;
	for (int i = 0; i < outs; i++, t += 100)
		out_exit(t, 0xe9);
	cur_tid = TID + 1;
	kexit_fast_on(t, VMX_HLT, 0, 1, 0);
	cur_tid = TID;
	kexit_fast_on(t + 1, VMX_IO, 0, 0, 0);
	skel->bss->race_cpu = 1;
	skel->bss->key_race_armed = true;
	key(t + 2, KEY_PORT, KEY_DIR_OUT, 0xe9, false);
	s = slot0();
	CHECK_EQ_U64(s.tid, slot_on ? TID + 1 : 0);
	CHECK(!slot_on || s.kref != s.ref);
	cur_tid = TID + 1;
	kentry_on(t + 30, 0);
	cur_tid = TID;
	uexit(t + 3, U_IO);
	run(t + 13);
	kentry(t + 16);
	check_entry(VMEXIT_ISA_VMX, VMX_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, outs + 1, (outs + 1) * 15);
	check_entry(VMEXIT_ISA_USER, U_IO, KEY_PORT, KEY_DIR_OUT, 0xe9, outs + 1, (outs + 1) * 10);
	CHECK_EQ_U64(entry_of(TID + 1, VMEXIT_ISA_VMX, VMX_HLT, KEY_NONE, KEY_DIR_NONE, 0).count, 1);
	CHECK_EQ_U64(entry_of(TID + 1, VMEXIT_ISA_VMX, VMX_HLT, KEY_NONE, KEY_DIR_NONE, 0).total_ns,
		     30);
	CHECK_EQ_U64(skel->bss->lost[LOST_UNMATCHED_ENTRY], 0);
	skel->bss->key_race_armed = false;
	vmexit_test_bpf__destroy(skel);
}

/* After two OUTs the port's event takes the thread's state (cpu_slot_keyed()); after four, an
 * OUT's entry is in a way and it takes the slot (cpu_slot_key()): the same race in each. */
static void test_slot_keyed_race(void)
{
	slot_keyed_race_after(2);
	slot_keyed_race_after(4);
}

static void test_all(void)
{
	test_user_only();
	test_user_msr();
	test_carried_over();
	test_emulated_cpuid();
	test_rep_io_count0();
	test_leaf_at_exit();
	test_full();
	test_gpa_shift();
	test_vectors();
	test_left();
	test_cache_ways();
	test_forget();
	test_slot();
	test_slot_exit_fast();
	test_slot_exit_keys();
	test_slot_exit_rip();
	test_slot_exit_alternate();
	test_slot_key_readers();
	test_slot_keyed_io();
	test_slot_key_event();
	test_slot_key_stale_way();
	test_slot_keyed_race();
	test_slot_keyed_in_left();
	test_run_keys();
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: test_bpf_keys: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	test_all();
	slot_on = true;
	test_all();
	CHECK_DONE("test_bpf_keys");
}
