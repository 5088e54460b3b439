// SPDX-License-Identifier: GPL-2.0
/*
 * The per-CPU exit slot (bpf/cpu_exit_slot.bpf.h) through BPF_PROG_TEST_RUN, each event on a
 * CPU of the test's choosing: an entry on the exit's CPU ends the exit from the slot, and a
 * thread that moved, a slot another thread overwrote, a slot whose exit the task-storage path
 * already ended and a tid reused after its thread ended in an exit all fall back, so that
 * every exit is counted once, with its own latency, and nothing is counted lost that was not.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "vmexit.h"
#include "vmexit_test.skel.h"
#include "vmexit_test.h"
#include "bpf_test_util.h"

#define TGID		700
#define T1		701
#define T2		702
#define VMX_IO		30
#define VMX_HLT		12
#define KVM_EXIT_IO	2	/* userspace exit reasons (include/uapi/linux/kvm.h) */
#define KVM_EXIT_MMIO	6
#define NR_TEST_CELLS	64

static struct vmexit_test_bpf *skel;
static int prog_fd;

static int open_fx(bool task_storage)
{
	skel = vmexit_test_bpf__open();
	if (!skel)
		return -1;
	skel->rodata->use_task_storage = task_storage;
	skel->rodata->filter_vcpu = -1;
	skel->rodata->max_cells = NR_TEST_CELLS;
	skel->rodata->cpu_slot_enabled = true;
	skel->rodata->user_slot_enabled = true;
	bpf_map__set_max_entries(skel->maps.cells, NR_TEST_CELLS);
	bpf_map__set_max_entries(skel->maps.free_cells, NR_TEST_CELLS);
	bpf_map__set_max_entries(skel->maps.cpu_exits, 4);
	if (task_storage) {
		bpf_map__set_max_entries(skel->maps.thread_hash, 1);
	} else {
		bpf_map__set_max_entries(skel->maps.thread_hash, 1024);
		bpf_map__set_autocreate(skel->maps.thread_storage, false);
	}
	bpf_program__set_autoload(skel->progs.run_event_task, task_storage);
	bpf_program__set_autoload(skel->progs.run_event, !task_storage);
	if (vmexit_test_bpf__load(skel)) {
		fprintf(stderr, "cannot load the test object: %s\n", strerror(errno));
		vmexit_test_bpf__destroy(skel);
		skel = NULL;
		return -1;
	}
	prog_fd = bpf_program__fd(task_storage ? skel->progs.run_event_task :
				  skel->progs.run_event);
	return 0;
}

static void close_fx(void)
{
	vmexit_test_bpf__destroy(skel);
	skel = NULL;
}

static void send(struct test_ctx c)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval) {
		fprintf(stderr, "test_run op %llu failed\n", (unsigned long long)c.op);
		check_failures++;
	}
}

/*
 * The start time of the thread that has tid, as the slot names a thread (slot_self()): T1's
 * changes when a new thread is given its tid (t1_gen).
 */
static __u64 t1_gen;

static void self(__u32 tid)
{
	skel->bss->test_born = tid == T1 ? 1000000 + t1_gen : tid;
}

static void kexit(__u32 tid, __u32 cpu, __u64 now, __u32 reason)
{
	self(tid);
	send((struct test_ctx){ .op = TOP_EXIT, .now = now, .tgid = TGID, .tid = tid, .vcpu = 0,
				.isa = VMEXIT_ISA_VMX, .reason = reason, .err = cpu });
}

/* kvm_exit_fast: the slot first, else as kexit. */
static void kfast(__u32 tid, __u32 cpu, __u64 now, __u32 reason)
{
	self(tid);
	send((struct test_ctx){ .op = TOP_EXIT_FAST, .now = now, .tgid = TGID, .tid = tid,
				.vcpu = 0, .isa = VMEXIT_ISA_VMX, .reason = reason, .err = cpu });
}

static void kentry(__u32 tid, __u32 cpu, __u64 now)
{
	self(tid);
	send((struct test_ctx){ .op = TOP_ENTRY, .now = now, .tgid = TGID, .tid = tid,
				.err = cpu });
}

/* kvm_userspace_exit and the next KVM_RUN, on a CPU (the user exit's slot). */
static void uexit(__u32 tid, __u32 cpu, __u64 now, __u32 reason)
{
	self(tid);
	send((struct test_ctx){ .op = TOP_USER_EXIT, .now = now, .tgid = TGID, .tid = tid,
				.reason = reason, .info1 = cpu });
}

static void urun(__u32 tid, __u32 cpu, __u64 now)
{
	self(tid);
	send((struct test_ctx){ .op = TOP_RUN, .now = now, .tgid = TGID, .tid = tid, .info1 = cpu });
}

static struct cell cell_of(__u32 tid, __u32 reason)
{
	struct cell c, none = {};
	int fd = bpf_map__fd(skel->maps.cells);

	for (__u32 i = 0; i < skel->bss->next_cell && i < NR_TEST_CELLS; i++) {
		if (bpf_map_lookup_elem(fd, &i, &c))
			continue;
		if (c.key.tid == tid && c.key.reason == reason)
			return c;
	}
	fprintf(stderr, "no cell for tid %u reason %u\n", tid, reason);
	check_failures++;
	return none;
}

/* The cell of (tid, reason) that has ended (its thread gone) or not. */
static struct cell cell_of_ended(__u32 tid, __u32 reason, bool ended)
{
	struct cell c, none = {};
	int fd = bpf_map__fd(skel->maps.cells);

	for (__u32 i = 0; i < skel->bss->next_cell && i < NR_TEST_CELLS; i++) {
		if (bpf_map_lookup_elem(fd, &i, &c))
			continue;
		if (c.key.tid == tid && c.key.reason == reason && !!c.ended == ended)
			return c;
	}
	fprintf(stderr, "no %s cell for tid %u reason %u\n", ended ? "ended" : "live", tid,
		reason);
	check_failures++;
	return none;
}

static __u64 lost(int why)
{
	return skel->bss->lost[why];
}

static bool no_loss_but(int except)
{
	for (int i = 0; i < NR_LOST; i++) {
		if (i != except && lost(i)) {
			fprintf(stderr, "lost[%d] == %llu\n", i, (unsigned long long)lost(i));
			return false;
		}
	}
	return true;
}

/* The exit's CPU ends it from the slot: shown by an entry whose thread state is gone. */
static void test_slot_taken(void)
{
	struct cell c;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	kexit(T1, 0, 1000, VMX_IO);
	kentry(T1, 0, 1100);
	kexit(T1, 0, 2000, VMX_IO);
	/* Without its state the task-storage path would count an unmatched entry. */
	CHECK(!bpf_map__delete_elem(skel->maps.thread_hash, &(__u32){ T1 }, sizeof(__u32), 0));
	kentry(T1, 0, 2300);
	c = cell_of(T1, VMX_IO);
	CHECK_EQ_U64(c.started, 2);
	CHECK_EQ_U64(c.count, 2);
	CHECK_EQ_U64(c.total_ns, 100 + 300);
	CHECK_EQ_U64(c.max_ns, 300);
	CHECK_EQ_U64(c.inflight_ts, 0);
	CHECK(no_loss_but(-1));
	close_fx();
}

/*
 * The thread moves between its exit and its entry, both ways, in one cell and across two: the
 * slot left on the other CPU names an exit that is over (or the same cell's older one), and
 * the entry falls back. Then the exit ended from a slot leaves exit_cell stale: the next exit is
 * no overwrite, and an entry with no exit is unmatched, not a second count.
 */
static void test_moved(void)
{
	struct cell io, hlt;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	kexit(T1, 0, 1000, VMX_IO);	/* slot 0: (T1, io, 1000) */
	kentry(T1, 1, 1200);		/* moved: task storage */
	kexit(T1, 1, 2000, VMX_IO);	/* slot 1: (T1, io, 2000) */
	kentry(T1, 0, 2300);		/* moved back: slot 0's start is not io's */
	kexit(T1, 0, 3000, VMX_HLT);	/* slot 0: (T1, hlt, 3000) */
	kentry(T1, 1, 3400);		/* slot 1 is io's, which is not in flight */
	kexit(T1, 1, 4000, VMX_IO);
	kentry(T1, 1, 4500);		/* from the slot */
	kexit(T1, 1, 5000, VMX_IO);	/* exit_cell stale: no overwrite */
	kentry(T1, 1, 5600);
	kentry(T1, 1, 5700);		/* no exit in flight */
	kentry(T1, 0, 5800);		/* nor here, slot 0's hlt long over */
	io = cell_of(T1, VMX_IO);
	hlt = cell_of(T1, VMX_HLT);
	CHECK_EQ_U64(io.started, 4);
	CHECK_EQ_U64(io.count, 4);
	CHECK_EQ_U64(io.total_ns, 200 + 300 + 500 + 600);
	CHECK_EQ_U64(io.min_ns, 200);
	CHECK_EQ_U64(io.max_ns, 600);
	CHECK_EQ_U64(hlt.started, 1);
	CHECK_EQ_U64(hlt.count, 1);
	CHECK_EQ_U64(hlt.total_ns, 400);
	CHECK_EQ_U64(io.inflight_ts, 0);
	CHECK_EQ_U64(hlt.inflight_ts, 0);
	CHECK_EQ_U64(lost(LOST_UNMATCHED_ENTRY), 2);
	CHECK(no_loss_but(LOST_UNMATCHED_ENTRY));
	close_fx();
}

/*
 * Two threads on one CPU: the second's exit takes the slot while the first waits (preempted in
 * its exit); each exit ends once, with its own latency. An exit overwritten by the thread's next
 * one is counted lost and the survivor ends from the slot.
 */
static void test_shared_cpu(void)
{
	struct cell a, b;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	kexit(T1, 0, 1000, VMX_IO);
	kexit(T2, 0, 1100, VMX_IO);
	kentry(T2, 0, 1150);
	kentry(T1, 0, 1400);
	kexit(T1, 0, 2000, VMX_HLT);
	kexit(T1, 0, 2100, VMX_HLT);	/* the first never ended: overwritten */
	kentry(T1, 0, 2600);
	a = cell_of(T1, VMX_IO);
	b = cell_of(T2, VMX_IO);
	CHECK_EQ_U64(a.count, 1);
	CHECK_EQ_U64(a.total_ns, 400);
	CHECK_EQ_U64(b.count, 1);
	CHECK_EQ_U64(b.total_ns, 50);
	a = cell_of(T1, VMX_HLT);
	CHECK_EQ_U64(a.started, 2);
	CHECK_EQ_U64(a.count, 1);
	CHECK_EQ_U64(a.total_ns, 500);
	CHECK_EQ_U64(lost(LOST_OVERWRITTEN_EXIT), 1);
	CHECK(no_loss_but(LOST_OVERWRITTEN_EXIT));
	close_fx();
}

/*
 * A thread ends in an exit (its cell keeps the exit's start, for userspace); a new thread given
 * the same tid makes its first entry on that CPU: not the old thread's exit.
 */
static void test_tid_reused(void)
{
	struct cell c;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	kexit(T1, 0, 1000, VMX_IO);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = 1200, .tgid = TGID, .tid = T1 });
	kentry(T1, 0, 1500);
	c = cell_of(T1, VMX_IO);
	CHECK_EQ_U64(c.count, 0);
	CHECK_EQ_U64(c.inflight_ts, 1000);
	CHECK_EQ_U64(lost(LOST_UNMATCHED_ENTRY), 1);
	CHECK(no_loss_but(LOST_UNMATCHED_ENTRY));
	close_fx();
}

/*
 * kvm_exit_fast begins an exit from its CPU's slot: shown by an exit whose thread state is gone,
 * which the task-storage path would give a cell of the thread's new state. An exit there that
 * finds the previous one still in flight counts it overwritten, as the task-storage path does.
 */
static void test_exit_from_slot(void)
{
	struct cell c;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	kfast(T1, 0, 1000, VMX_IO);	/* the thread's first: its state, slot 0 */
	kentry(T1, 0, 1100);
	CHECK(!bpf_map__delete_elem(skel->maps.thread_hash, &(__u32){ T1 }, sizeof(__u32), 0));
	kfast(T1, 0, 2000, VMX_IO);	/* from slot 0 */
	kentry(T1, 0, 2300);
	kfast(T1, 0, 3000, VMX_IO);
	kfast(T1, 0, 3500, VMX_IO);	/* the entry was missed: overwritten */
	kentry(T1, 0, 3600);
	CHECK_EQ_U64(skel->bss->next_cell, 1);
	c = cell_of(T1, VMX_IO);
	CHECK_EQ_U64(c.started, 4);
	CHECK_EQ_U64(c.count, 3);
	CHECK_EQ_U64(c.total_ns, 100 + 300 + 100);
	CHECK_EQ_U64(c.inflight_ts, 0);
	CHECK_EQ_U64(lost(LOST_OVERWRITTEN_EXIT), 1);
	CHECK(no_loss_but(LOST_OVERWRITTEN_EXIT));
	close_fx();
}

/*
 * What the slot path may not take: an exit of another reason than the slot's, a slot whose
 * cell is no longer the thread's exit_cell (it exited in another cell on another CPU since),
 * and, either way, an entry on another CPU than the exit's, which ends it through exit_cell.
 */
static void test_exit_slot_stale(void)
{
	struct cell io, hlt;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	kfast(T1, 0, 1000, VMX_IO);	/* slot 0: (T1, io) */
	kentry(T1, 0, 1100);
	kfast(T1, 0, 2000, VMX_HLT);	/* another reason: task storage, slot 0: (T1, hlt) */
	kentry(T1, 0, 2200);
	kfast(T1, 1, 3000, VMX_IO);	/* moved: task storage, slot 1: (T1, io) */
	kentry(T1, 1, 3300);
	kfast(T1, 0, 4000, VMX_HLT);	/* back: slot 0's hlt no longer the exit_cell */
	kentry(T1, 1, 4400);		/* moved before its entry: through exit_cell */
	kfast(T1, 0, 5000, VMX_HLT);	/* that entry left hlt unnamed: task storage */
	kentry(T1, 1, 5500);		/* through exit_cell */
	kfast(T1, 0, 6000, VMX_HLT);	/* again */
	kentry(T1, 0, 6100);		/* from slot 0 */
	kfast(T1, 0, 7000, VMX_HLT);	/* from slot 0 */
	kentry(T1, 1, 7600);		/* moved: through exit_cell */
	io = cell_of(T1, VMX_IO);
	hlt = cell_of(T1, VMX_HLT);
	CHECK_EQ_U64(io.started, 2);
	CHECK_EQ_U64(io.count, 2);
	CHECK_EQ_U64(io.total_ns, 100 + 300);
	CHECK_EQ_U64(hlt.started, 5);
	CHECK_EQ_U64(hlt.count, 5);
	CHECK_EQ_U64(hlt.total_ns, 200 + 400 + 500 + 100 + 600);
	CHECK_EQ_U64(io.inflight_ts, 0);
	CHECK_EQ_U64(hlt.inflight_ts, 0);
	CHECK(no_loss_but(-1));
	close_fx();
}

/*
 * A thread ends; userspace recycles its cell, which another thread's exit of the same reason
 * takes (and names as its exit_cell); then a new thread given the first one's tid (the same
 * task, as the test names threads, started later) exits on the first one's CPU with that
 * reason: the slot there names the old thread, whose cell is now another's, so the new thread
 * gets a cell of its own and no exit is charged to another thread.
 */
static void test_exit_slot_new_thread(void)
{
	struct cell old, t2, t1;
	static const struct cell zero;
	__u32 idx = 0;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	kfast(T1, 0, 1000, VMX_IO);	/* cell 0, slot 0: (T1, io) */
	kentry(T1, 0, 1100);
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = 1200, .tgid = TGID, .tid = T1 });
	old = cell_of(T1, VMX_IO);
	CHECK(old.ended);
	CHECK_EQ_U64(old.count, 1);
	/* What session_release_cell() does once it has read the ended cell. */
	CHECK(!bpf_map__update_elem(skel->maps.cells, &idx, sizeof(idx), &zero, sizeof(zero), 0));
	CHECK(!bpf_map__update_elem(skel->maps.free_cells, NULL, 0, &idx, sizeof(idx), 0));
	kfast(T2, 1, 2000, VMX_IO);	/* takes cell 0 */
	kentry(T2, 1, 2100);
	t1_gen = 1;
	kfast(T1, 0, 3000, VMX_IO);	/* slot 0 names the old T1 and cell 0 */
	kentry(T1, 0, 3300);
	t2 = cell_of(T2, VMX_IO);
	t1 = cell_of_ended(T1, VMX_IO, false);
	CHECK_EQ_U64(t2.started, 1);
	CHECK_EQ_U64(t2.count, 1);
	CHECK_EQ_U64(t2.total_ns, 100);
	CHECK_EQ_U64(t1.started, 1);
	CHECK_EQ_U64(t1.count, 1);
	CHECK_EQ_U64(t1.total_ns, 300);
	CHECK_EQ_U64(skel->bss->next_cell, 2);
	CHECK(no_loss_but(-1));
	close_fx();
}

/* The configuration vmexit runs: task storage, the test thread itself as the vCPU thread. */
static void test_task_storage(void)
{
	__u32 tid = syscall(SYS_gettid);
	struct cell c;

	if (open_fx(true)) {
		check_failures++;
		return;
	}
	kexit(tid, 0, 1000, VMX_IO);
	kentry(tid, 0, 1100);
	kexit(tid, 0, 2000, VMX_IO);
	kentry(tid, 1, 2200);
	kexit(tid, 1, 3000, VMX_IO);
	kentry(tid, 0, 3300);
	kentry(tid, 1, 3400);
	c = cell_of(tid, VMX_IO);
	CHECK_EQ_U64(c.started, 3);
	CHECK_EQ_U64(c.count, 3);
	CHECK_EQ_U64(c.total_ns, 100 + 200 + 300);
	CHECK_EQ_U64(lost(LOST_UNMATCHED_ENTRY), 1);
	CHECK(no_loss_but(LOST_UNMATCHED_ENTRY));
	close_fx();
}

/*
 * With task storage the programs pass no ids (hot_ids()): kvm_exit names the thread in the slot
 * from its state, whose id was taken when the thread was first seen, and the entry, which asks
 * the kernel, must find its own id there to end the exit from the slot.
 */
static void test_task_storage_ids(void)
{
	__u32 tid = syscall(SYS_gettid), cpu = 2;
	struct cpu_exit_slot slot = {};
	struct cell c;
	int pidfd;

	if (open_fx(true)) {
		check_failures++;
		return;
	}
	send((struct test_ctx){ .op = TOP_EXIT, .now = 1000, .vcpu = 0, .isa = VMEXIT_ISA_VMX,
				.reason = VMX_IO, .err = cpu });
	send((struct test_ctx){ .op = TOP_ENTRY, .now = 1100, .err = cpu });
	/*
	 * An exit overwritten by one of another reason (no entry between): the first is lost and
	 * no longer in flight, though its cell is not the new exit's.
	 */
	send((struct test_ctx){ .op = TOP_EXIT, .now = 1500, .vcpu = 0, .isa = VMEXIT_ISA_VMX,
				.reason = VMX_IO, .err = cpu });
	send((struct test_ctx){ .op = TOP_EXIT, .now = 1600, .vcpu = 0, .isa = VMEXIT_ISA_VMX,
				.reason = VMX_HLT, .err = cpu });
	send((struct test_ctx){ .op = TOP_ENTRY, .now = 1800, .err = cpu });
	send((struct test_ctx){ .op = TOP_EXIT, .now = 2000, .vcpu = 0, .isa = VMEXIT_ISA_VMX,
				.reason = VMX_HLT, .err = cpu });
	CHECK(!bpf_map__lookup_elem(skel->maps.cpu_exits, &cpu, sizeof(cpu), &slot, sizeof(slot),
				    0));
	CHECK_EQ_U64(slot.tid, tid);
	CHECK_EQ_U64(slot.start, 2000);
	/*
	 * The thread's state goes (a pidfd names the task; the test runs in its main thread), so
	 * only the slot can end the exit: the task-storage path would count an unmatched entry.
	 */
	CHECK_EQ_U64(tid, getpid());
	pidfd = syscall(SYS_pidfd_open, tid, 0);
	CHECK(pidfd >= 0);
	CHECK(!bpf_map__delete_elem(skel->maps.thread_storage, &pidfd, sizeof(pidfd), 0));
	close(pidfd);
	send((struct test_ctx){ .op = TOP_ENTRY, .now = 2500, .err = cpu });
	c = cell_of(tid, VMX_IO);
	CHECK_EQ_U64(c.started, 2);
	CHECK_EQ_U64(c.count, 1);
	CHECK_EQ_U64(c.total_ns, 100);
	CHECK_EQ_U64(c.inflight_ts, 0);
	c = cell_of(tid, VMX_HLT);
	CHECK_EQ_U64(c.started, 2);
	CHECK_EQ_U64(c.count, 2);
	CHECK_EQ_U64(c.total_ns, 200 + 500);
	CHECK_EQ_U64(lost(LOST_OVERWRITTEN_EXIT), 1);
	CHECK(no_loss_but(LOST_OVERWRITTEN_EXIT));
	close_fx();
}

/*
 * kvm_userspace_exit begins a userspace exit from its CPU's slot and KVM_RUN ends it there:
 * shown by events whose thread state is gone (the state path would give the exit a new cell,
 * and KVM_RUN would find no exit to end). A userspace exit that finds the last one never ended
 * counts it unmatched, as the state path does.
 */
static void test_user_from_slot(void)
{
	struct cell c;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	uexit(T1, 0, 1000, KVM_EXIT_IO);	/* the thread's first: its state, slot 0 */
	urun(T1, 0, 1100);			/* from slot 0 */
	CHECK(!bpf_map__delete_elem(skel->maps.thread_hash, &(__u32){ T1 }, sizeof(__u32), 0));
	uexit(T1, 0, 2000, KVM_EXIT_IO);	/* from slot 0 */
	urun(T1, 0, 2300);
	uexit(T1, 0, 3000, KVM_EXIT_IO);
	uexit(T1, 0, 3500, KVM_EXIT_IO);	/* no KVM_RUN between: unmatched */
	urun(T1, 0, 3600);
	urun(T1, 0, 3700);			/* no userspace exit in flight: nothing */
	CHECK_EQ_U64(skel->bss->next_cell, 1);
	c = cell_of(T1, KVM_EXIT_IO);
	CHECK_EQ_U64(c.started, 4);
	CHECK_EQ_U64(c.count, 3);
	CHECK_EQ_U64(c.total_ns, 100 + 300 + 100);
	CHECK_EQ_U64(c.inflight_ts, 0);
	CHECK_EQ_U64(lost(LOST_UNMATCHED_RUN), 1);
	CHECK(no_loss_but(LOST_UNMATCHED_RUN));
	close_fx();
}

/*
 * What the user half of a slot may not take: another reason, a cell that is no longer the
 * thread's uexit_cell, a KVM_RUN on another CPU (it ends the exit through uexit_cell and
 * un-names the cell), and a KVM_RUN with no userspace exit before it.
 */
static void test_user_slot_stale(void)
{
	struct cell io, mmio;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	uexit(T1, 0, 1000, KVM_EXIT_IO);	/* slot 0: (T1, io) */
	urun(T1, 0, 1100);
	uexit(T1, 0, 2000, KVM_EXIT_MMIO);	/* another reason: state, slot 0: (T1, mmio) */
	urun(T1, 0, 2200);
	uexit(T1, 1, 3000, KVM_EXIT_IO);	/* moved: state, slot 1: (T1, io) */
	urun(T1, 1, 3300);
	uexit(T1, 0, 4000, KVM_EXIT_MMIO);	/* back: mmio no longer the uexit_cell */
	urun(T1, 1, 4400);			/* moved before KVM_RUN: through uexit_cell */
	uexit(T1, 0, 5000, KVM_EXIT_MMIO);	/* that KVM_RUN un-named mmio: state */
	urun(T1, 1, 5500);
	uexit(T1, 0, 6000, KVM_EXIT_MMIO);
	urun(T1, 0, 6100);			/* from slot 0 */
	urun(T1, 1, 6150);			/* uexit_cell names mmio, which is not in flight */
	uexit(T1, 0, 7000, KVM_EXIT_MMIO);	/* from slot 0 */
	urun(T1, 1, 7600);			/* moved: through uexit_cell */
	urun(T1, 0, 7700);			/* nothing in flight, on either path */
	urun(T1, 1, 7800);
	io = cell_of(T1, KVM_EXIT_IO);
	mmio = cell_of(T1, KVM_EXIT_MMIO);
	CHECK_EQ_U64(io.started, 2);
	CHECK_EQ_U64(io.count, 2);
	CHECK_EQ_U64(io.total_ns, 100 + 300);
	CHECK_EQ_U64(mmio.started, 5);
	CHECK_EQ_U64(mmio.count, 5);
	CHECK_EQ_U64(mmio.total_ns, 200 + 400 + 500 + 100 + 600);
	CHECK_EQ_U64(io.inflight_ts, 0);
	CHECK_EQ_U64(mmio.inflight_ts, 0);
	CHECK(no_loss_but(-1));
	close_fx();
}

/*
 * An IO exit to the VMM: the kernel exit and the userspace exit nested in it, each from its own
 * half of the slot; another thread's kernel exit on that CPU in the VMM's time takes the kernel
 * half and leaves the user half to the first thread. The thread then ends in a userspace exit
 * (its cell keeps the start, for userspace), and a new thread given its tid, on that CPU, is not
 * the old one: its KVM_RUN ends nothing, its userspace exit gets a cell of its own.
 */
static void test_user_nested(void)
{
	struct cell k, u, t2, u1;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	kfast(T1, 0, 1000, VMX_IO);
	uexit(T1, 0, 1100, KVM_EXIT_IO);
	urun(T1, 0, 1300);
	kentry(T1, 0, 1400);
	kfast(T1, 0, 2000, VMX_IO);		/* from the slot's kernel half */
	uexit(T1, 0, 2050, KVM_EXIT_IO);	/* from its user half */
	CHECK(!bpf_map__delete_elem(skel->maps.thread_hash, &(__u32){ T1 }, sizeof(__u32), 0));
	kfast(T2, 0, 2100, VMX_HLT);		/* T2's state; the kernel half is T2's now */
	kentry(T2, 0, 2150);
	urun(T1, 0, 2250);			/* the user half is still T1's */
	kentry(T1, 0, 2500);			/* the kernel half is not: through T1's state */
	k = cell_of(T1, VMX_IO);
	u = cell_of(T1, KVM_EXIT_IO);
	t2 = cell_of(T2, VMX_HLT);
	CHECK_EQ_U64(k.started, 2);
	CHECK_EQ_U64(k.count, 1);		/* T1's state is gone: 2500 is unmatched */
	CHECK_EQ_U64(k.total_ns, 400);
	CHECK_EQ_U64(u.started, 2);
	CHECK_EQ_U64(u.count, 2);
	CHECK_EQ_U64(u.total_ns, 200 + 200);
	CHECK_EQ_U64(t2.count, 1);
	CHECK_EQ_U64(t2.total_ns, 50);
	CHECK_EQ_U64(lost(LOST_UNMATCHED_ENTRY), 1);
	/* A thread with a state again, ending in a userspace exit begun from the slot. */
	uexit(T1, 0, 3000, KVM_EXIT_MMIO);	/* state (a new one), slot 0: (T1, mmio) */
	urun(T1, 0, 3100);
	uexit(T1, 0, 4000, KVM_EXIT_MMIO);	/* from slot 0 */
	send((struct test_ctx){ .op = TOP_THREAD_EXIT, .now = 4200, .tgid = TGID, .tid = T1 });
	t1_gen = 1;
	urun(T1, 0, 4300);			/* a new T1: not the old one's exit */
	uexit(T1, 0, 5000, KVM_EXIT_MMIO);
	urun(T1, 0, 5400);
	u = cell_of_ended(T1, KVM_EXIT_MMIO, true);
	u1 = cell_of_ended(T1, KVM_EXIT_MMIO, false);
	CHECK_EQ_U64(u.started, 2);
	CHECK_EQ_U64(u.count, 1);
	CHECK_EQ_U64(u.total_ns, 100);
	CHECK_EQ_U64(u.inflight_ts, 4000);
	CHECK_EQ_U64(u1.started, 1);
	CHECK_EQ_U64(u1.count, 1);
	CHECK_EQ_U64(u1.total_ns, 400);
	CHECK(no_loss_but(LOST_UNMATCHED_ENTRY));
	close_fx();
}

/*
 * kvm_userspace_exit and KVM_RUN run preemptible: another vCPU thread may write the CPU's user
 * half while a program reads it. T1's KVM_RUN on CPU 0 is "preempted" between its first look
 * at the slot (its own) and its reads by T2, whose userspace exit in flight (begun on CPU 1)
 * is then the slot's: T1 must not end T2's exit; each ends its own, once.
 */
static void test_user_preempted(void)
{
	struct cpu_exit_slot s1;
	struct cell a, b;
	__u32 cpu1 = 1;

	if (open_fx(false)) {
		check_failures++;
		return;
	}
	t1_gen = 0;
	uexit(T1, 0, 1000, KVM_EXIT_IO);	/* slot 0: T1's */
	uexit(T2, 1, 1100, KVM_EXIT_IO);	/* slot 1: T2's, in flight */
	CHECK(!bpf_map__lookup_elem(skel->maps.cpu_exits, &cpu1, sizeof(cpu1), &s1, sizeof(s1), 0));
	skel->bss->race_task = s1.utask;
	skel->bss->race_born = s1.uborn;
	skel->bss->race_ref = s1.uref;
	skel->bss->race_reason = s1.ureason;
	skel->bss->race_start = s1.ustart;
	skel->bss->race_armed = true;
	urun(T1, 0, 1400);			/* T2 writes slot 0 mid-read: T1's state ends it */
	CHECK(!skel->bss->race_armed);
	urun(T2, 0, 1600);			/* T2 moved to CPU 0: the slot's, T2's own */
	a = cell_of(T1, KVM_EXIT_IO);
	b = cell_of(T2, KVM_EXIT_IO);
	CHECK_EQ_U64(a.count, 1);
	CHECK_EQ_U64(a.total_ns, 400);
	CHECK_EQ_U64(b.count, 1);
	CHECK_EQ_U64(b.total_ns, 500);
	CHECK(no_loss_but(-1));
	close_fx();
}

int main(void)
{
	libbpf_set_print(libbpf_print_quiet);
	test_slot_taken();
	test_moved();
	test_shared_cpu();
	test_tid_reused();
	test_exit_from_slot();
	test_exit_slot_stale();
	test_exit_slot_new_thread();
	test_task_storage();
	test_task_storage_ids();
	test_user_from_slot();
	test_user_slot_stale();
	test_user_nested();
	test_user_preempted();
	CHECK_DONE("test_bpf_cpu_slot");
}
