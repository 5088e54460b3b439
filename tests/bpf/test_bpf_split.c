// SPDX-License-Identifier: GPL-2.0
/*
 * --split's real programs (tp_btf/sched_switch and tp_btf/sched_wakeup of bpf/vmexit.bpf.c)
 * on this kernel's real context switches, on both per-thread state paths: the test thread
 * gets per-thread state with an exit in flight, sleeps a known time, and the state's blocked
 * sum must have grown by at least that much, and its runq sum by less than the sleep (on a
 * quiet CPU, a woken thread runs at once; a busy shared host may make it wait, hence the
 * loose bound). A thread with no exit in flight gets nothing. The logic with hand-made events
 * is in test_bpf_handlers.c; this checks the hook points and that both programs load, attach
 * and find the thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "vmexit.skel.h"
#include "bpf_test_util.h"

#define SLEEP_NS	20000000ull	/* 20 ms */
#define CELL_FULL	0xfffe		/* handlers.bpf.h: in flight, counted in no cell */

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

static void sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void run(bool task, bool in_flight)
{
	struct vmexit_bpf *skel = vmexit_bpf__open();
	struct bpf_program *prog;
	struct bpf_link *sw = NULL, *wk = NULL;
	unsigned char *v = NULL;
	long o_cell, o_blocked, o_runq, o_off;
	int fd, key_fd = -1;
	__u32 tid = syscall(SYS_gettid);
	size_t len;
	const void *key;

	if (!skel) {
		fprintf(stderr, "cannot open the vmexit object\n");
		check_failures++;
		return;
	}
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.sched_switch ||
						prog == skel->progs.sched_wakeup);
	skel->rodata->use_task_storage = task;
	skel->rodata->split_enabled = true;
	skel->rodata->max_cells = 1;
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
	sw = bpf_program__attach(skel->progs.sched_switch);
	wk = bpf_program__attach(skel->progs.sched_wakeup);
	CHECK(sw && wk);
	if (!sw || !wk)
		goto out;
	sleep_ns(SLEEP_NS);
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
	/* Back on its CPU: no off-CPU period open. */
	CHECK_EQ_U64(get64(v, o_off), 0);
out:
	bpf_link__destroy(wk);
	bpf_link__destroy(sw);
	if (key_fd >= 0)
		close(key_fd);
	free(v);
	vmexit_bpf__destroy(skel);
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
	CHECK_DONE("test_bpf_split");
}
