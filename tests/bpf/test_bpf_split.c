// SPDX-License-Identifier: GPL-2.0
/*
 * --split's real programs (tp_btf/sched_switch and tp_btf/sched_wakeup of bpf/vmexit.bpf.c)
 * on this kernel's real context switches, on both per-thread state paths: the test thread
 * gets per-thread state with an exit in flight, sleeps a known time, and the state's blocked
 * sum must have grown by at least that much, and its runq sum by less than the sleep (the
 * thread runs SCHED_FIFO meanwhile, so that a busy host neither preempts it nor keeps it
 * waiting once woken: realtime()). A thread with no exit in flight gets nothing. The logic with hand-made events
 * is in test_bpf_handlers.c; this checks the hook points and that both programs load, attach
 * and find the thread.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "vmexit.h"
#include "vmexit.skel.h"
#include "bpf_test_util.h"

#define SLEEP_NS	20000000ull	/* 20 ms */
#define CELL_FULL	0xfffe		/* handlers.bpf.h: in flight, counted in no cell */
#define CELL_FILTERED	0xffff		/* handlers.bpf.h: in flight, not wanted by -r */
#define SVM_EXIT_IOIO	0x7b

/* Offset of a member of struct thread_state, from the object's BTF. */
static long state_member(struct vmexit_bpf *skel, const char *name)
{
	return btf_struct_member_offset(skel->obj, "thread_state", name);
}

static __u64 get64(const unsigned char *v, long off)
{
	__u64 x;

	memcpy(&x, v + off, sizeof(x));
	return x;
}

/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns(). */
static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * SCHED_FIFO (on) or back to SCHED_OTHER, for the calling thread, from the attach to the
 * detach: a real-time thread is not preempted by the host's normal tasks, and when woken it
 * preempts them at once, so its run-queue time is the wakeup's latency alone and its switches
 * are the sleep's, however busy the host is (a niced run beside three busy loops counted 10-95
 * ms of run queue before its sleep). false where the policy is refused: the loose bounds stay,
 * and a busy host may trip them.
 */
static bool realtime(bool on)
{
	struct sched_param p = { .sched_priority = on ? 1 : 0 };

	return !sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &p);
}

/* The object with --split's two programs to load, and one cell; NULL (a failure) if not. */
static struct vmexit_bpf *open_split(void)
{
	struct vmexit_bpf *skel = vmexit_bpf__open();
	struct bpf_program *prog;

	if (!skel) {
		fprintf(stderr, "cannot open the vmexit object\n");
		check_failures++;
		return NULL;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.sched_switch ||
						prog == skel->progs.sched_wakeup);
	skel->rodata->split_enabled = true;
	skel->rodata->max_cells = 1;
	return skel;
}

/* Both programs attached (a failure if not). */
static bool attach_split(struct vmexit_bpf *skel, struct bpf_link **sw, struct bpf_link **wk)
{
	*sw = bpf_program__attach(skel->progs.sched_switch);
	*wk = bpf_program__attach(skel->progs.sched_wakeup);
	CHECK(*sw && *wk);
	return *sw && *wk;
}

static void run_end(struct vmexit_bpf *skel, struct bpf_link *sw, struct bpf_link *wk, int key_fd,
		    void *v)
{
	bpf_link__destroy(wk);
	bpf_link__destroy(sw);
	if (key_fd >= 0)
		close(key_fd);
	free(v);
	vmexit_bpf__destroy(skel);
}

static void run(bool task, bool in_flight)
{
	struct vmexit_bpf *skel = open_split();
	struct bpf_link *sw = NULL, *wk = NULL;
	unsigned char *v = NULL;
	long o_cell, o_blocked, o_runq, o_off;
	int fd, key_fd = -1;
	__u32 tid = syscall(SYS_gettid);
	__u64 detach_ns;
	size_t len;
	bool rt = false;
	const void *key;

	if (!skel)
		return;
	skel->rodata->use_task_storage = task;
	if (task) {
		bpf_map__set_autocreate(skel->maps.thread_hash, false);
	} else {
		bpf_map__set_max_entries(skel->maps.thread_hash, 64);
		bpf_map__set_autocreate(skel->maps.thread_storage, false);
	}
	if (vmexit_bpf__load(skel)) {
		fprintf(stderr, "cannot load the --split programs (%s)\n", task ? "task" : "hash");
		check_failures++;
		goto out;
	}
	fd = bpf_map__fd(task ? skel->maps.thread_storage : skel->maps.thread_hash);
	len = bpf_map__value_size(task ? skel->maps.thread_storage : skel->maps.thread_hash);
	o_cell = state_member(skel, "uexit_cell");
	o_blocked = state_member(skel, "blocked_sum");
	o_runq = state_member(skel, "runq_sum");
	o_off = state_member(skel, "off_ts");
	v = calloc(1, len);
	CHECK(v && o_cell >= 0 && o_blocked >= 0 && o_runq >= 0 && o_off >= 0);
	if (!v || o_cell < 0 || o_blocked < 0 || o_runq < 0 || o_off < 0)
		goto out;
	if (in_flight) {
		__u32 ref = CELL_FULL;

		memcpy(v + o_cell, &ref, sizeof(ref));
	}
	if (task) {
		key_fd = syscall(SYS_pidfd_open, getpid(), 0);
		CHECK(key_fd >= 0);
		key = &key_fd;
	} else {
		key = &tid;
	}
	CHECK(!bpf_map_update_elem(fd, key, v, BPF_ANY));
	rt = realtime(true);
	if (!attach_split(skel, &sw, &wk))
		goto out;
	sleep_ns(SLEEP_NS);
	detach_ns = mono_ns();
	bpf_link__destroy(wk);
	bpf_link__destroy(sw);
	wk = sw = NULL;
	CHECK(!bpf_map_lookup_elem(fd, key, v));
	printf("%s, %s: blocked %llu ns, runq %llu ns after a %llu ns sleep\n",
	       task ? "task storage" : "thread hash", in_flight ? "exit in flight" : "no exit",
	       (unsigned long long)get64(v, o_blocked), (unsigned long long)get64(v, o_runq),
	       SLEEP_NS);
	if (in_flight) {
		/*
		 * Asleep from the switch-out, a few us after the timer was armed, to the wakeup,
		 * at least SLEEP_NS after it: allow 1 % for the first part.
		 */
		CHECK(get64(v, o_blocked) >= SLEEP_NS / 100 * 99);
		CHECK(get64(v, o_runq) < SLEEP_NS);
		CHECK(get64(v, o_blocked) + get64(v, o_runq) < 10 * SLEEP_NS);
	} else {
		CHECK_EQ_U64(get64(v, o_blocked) + get64(v, o_runq), 0);
	}
	/*
	 * Back on its CPU: no off-CPU period open from the sleep. The detach itself may block
	 * (a contended mutex) after the wakeup program went and before the switch program does,
	 * which leaves one open that began then.
	 */
	CHECK(get64(v, o_off) == 0 || get64(v, o_off) >= detach_ns);
out:
	if (rt)
		realtime(false);
	run_end(skel, sw, wk, key_fd, v);
}

/* cell 0 as the kernel keeps it for an exit in flight since ts, of (isa, reason). */
static int cell_set(struct vmexit_bpf *skel, __u32 isa, __u32 reason, __u64 ts)
{
	struct cell c = { .key = { .tgid = getpid(), .tid = syscall(SYS_gettid), .vcpu = -1,
				   .isa = isa, .reason = reason, .ready = 1 },
			  .inflight_ts = ts };
	__u32 zero = 0;

	return bpf_map_update_elem(bpf_map__fd(skel->maps.cells), &zero, &c, BPF_ANY);
}

enum stacks_case { STACKS_CHARGED, STACKS_FULL, STACKS_MIN, STACKS_NESTED };

/*
 * --stacks on the real programs: the thread, in an exit of cell 0, sleeps. CHARGED: the sleep
 * goes to (pid, reason, its stack), the stack in the stack map (other switches of the thread
 * may add entries of their own). FULL: a table of one entry, taken beforehand by a key no
 * thread makes, refuses every charge and counts each lost (stacks_full). MIN: with
 * --stack-min 1s, an exit 20 ms old is not charged and nothing is lost. NESTED: cell 0 is a
 * guest IO exit and the userspace exit inside it was filtered out (-r svm:io, as explain's
 * stacks step asks): the VMM's sleep goes to the guest exit, the innermost exit counted.
 */
static void run_stacks(enum stacks_case what)
{
	static const char *const name[] = { "charged", "table full", "--stack-min 1s",
					    "user exit filtered, guest exit charged" };
	struct vmexit_bpf *skel = open_split();
	struct bpf_link *sw = NULL, *wk = NULL;
	struct stack_key k, next, taken = { .tgid = 0, .stack_id = -1 };
	struct stack_val val, best = {}, zero = {};
	__u64 ips[STACK_DEPTH_MAX] = {};
	unsigned char *v = NULL;
	int fd, key_fd = -1, n = 0;
	long o_cell, o_kcell;
	__u32 ref = 1, filtered = CELL_FILTERED;
	__u32 isa = what == STACKS_NESTED ? VMEXIT_ISA_SVM : VMEXIT_ISA_USER;
	__u32 reason = what == STACKS_NESTED ? SVM_EXIT_IOIO : 2;
	bool found = false, rt = false;

	if (!skel)
		return;
	skel->rodata->stacks_enabled = true;
	skel->rodata->stack_min_ns = what == STACKS_MIN ? 1000000000ull : 0;
	bpf_map__set_autocreate(skel->maps.thread_hash, false);
	bpf_map__set_max_entries(skel->maps.stack_map, 64);
	bpf_map__set_max_entries(skel->maps.stack_time, what == STACKS_FULL ? 1 : 64);
	if (vmexit_bpf__load(skel)) {
		fprintf(stderr, "cannot load the --split --stacks programs\n");
		check_failures++;
		goto out;
	}
	if (what == STACKS_FULL)
		CHECK(!bpf_map_update_elem(bpf_map__fd(skel->maps.stack_time), &taken, &zero,
					   BPF_NOEXIST));
	fd = bpf_map__fd(skel->maps.thread_storage);
	v = calloc(1, bpf_map__value_size(skel->maps.thread_storage));
	o_cell = state_member(skel, "uexit_cell");
	o_kcell = state_member(skel, "exit_cell");
	key_fd = syscall(SYS_pidfd_open, getpid(), 0);
	CHECK(v && o_cell >= 0 && o_kcell >= 0 && key_fd >= 0);
	if (!v || o_cell < 0 || o_kcell < 0 || key_fd < 0)
		goto out;
	if (what == STACKS_NESTED) {
		memcpy(v + o_kcell, &ref, sizeof(ref));
		memcpy(v + o_cell, &filtered, sizeof(filtered));
	} else {
		memcpy(v + o_cell, &ref, sizeof(ref));
	}
	CHECK(!bpf_map_update_elem(fd, &key_fd, v, BPF_ANY));
	CHECK(!cell_set(skel, isa, reason, what == STACKS_MIN ? mono_ns() : 1));
	rt = realtime(true);
	if (!attach_split(skel, &sw, &wk))
		goto out;
	sleep_ns(SLEEP_NS);
	bpf_link__destroy(wk);
	bpf_link__destroy(sw);
	wk = sw = NULL;
	for (void *prev = NULL; !bpf_map_get_next_key(bpf_map__fd(skel->maps.stack_time), prev,
						      &next); prev = &k) {
		k = next;
		n++;
		CHECK(!bpf_map_lookup_elem(bpf_map__fd(skel->maps.stack_time), &k, &val));
		CHECK(k.tgid == 0 || (k.tgid == (__u32)getpid() && k.isa == isa &&
				      k.reason == reason));
		/* The sleep's: the one entry that long (the test's other switches are short). */
		if (k.tgid && val.ns >= SLEEP_NS / 100 * 99 && !found) {
			found = true;
			best = val;
			CHECK(!bpf_map_lookup_elem(bpf_map__fd(skel->maps.stack_map), &k.stack_id,
						   ips) && ips[0]);
		}
	}
	printf("--stacks, %s: %d entries, the sleep's %s (ns %llu, count %llu); lost: collision "
	       "%llu, full %llu\n", name[what], n, found ? "found" : "not found",
	       (unsigned long long)best.ns, (unsigned long long)best.count,
	       (unsigned long long)skel->bss->lost[LOST_STACK_COLLISION],
	       (unsigned long long)skel->bss->lost[LOST_STACKS_FULL]);
	switch (what) {
	case STACKS_CHARGED:
	case STACKS_NESTED:
		CHECK(found && best.count >= 1);
		CHECK_EQ_U64(skel->bss->lost[LOST_STACKS_FULL], 0);
		break;
	case STACKS_FULL:
		CHECK_EQ_U64(n, 1);
		CHECK(!found);
		/* The sleep's period, at least, found the table full: counted, not dropped. */
		CHECK(skel->bss->lost[LOST_STACKS_FULL] >= 1);
		break;
	case STACKS_MIN:
		CHECK_EQ_U64(n, 0);
		CHECK_EQ_U64(skel->bss->lost[LOST_STACKS_FULL], 0);
		break;
	}
out:
	if (rt)
		realtime(false);
	run_end(skel, sw, wk, key_fd, v);
}

int main(void)
{
	if (geteuid() != 0) {
		printf("SKIP: test_bpf_split: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	run(true, true);
	run(true, false);
	run(false, true);
	run(false, false);
	run_stacks(STACKS_CHARGED);
	run_stacks(STACKS_FULL);
	run_stacks(STACKS_MIN);
	run_stacks(STACKS_NESTED);
	CHECK_DONE("test_bpf_split");
}
