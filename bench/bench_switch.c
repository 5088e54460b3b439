// SPDX-License-Identifier: GPL-2.0
/*
 * What --split costs every context switch on the host: two processes pinned to one CPU play
 * ping-pong over pipes (every round trip is two wakeups and two switches between them), alone
 * and with vmexit's sched_switch and sched_wakeup programs attached, alternating, best and
 * median of several rounds.
 * With the program attached, three cases:
 *   - tasks without BPF task storage: every process on the host that is not a vCPU thread;
 *   - tasks with vmexit's task storage but no exit in flight: a vCPU thread switching while
 *     in the guest or idle (or a task another tool gave task storage to);
 *   - tasks with an exit in flight: a vCPU thread sleeping or preempted during an exit, the
 *     full cost (clock read, stamp, sums);
 *   - the same with --stacks: the kernel stack taken at every switch out (bpf_get_stackid)
 *     and the period charged to it at every switch in (a hash lookup, two atomic adds).
 * The storage is put on the two processes from here, through their pidfds. Next to the
 * ping-pong's end-to-end figure, the kernel's own run-time statistics of the program
 * (bpf_prog_info run_time_ns / run_cnt over every switch on the host during a shorter run
 * with the statistics on: they cost clock reads of their own, so the timed runs go without;
 * other tasks' switches dilute the storage cases). Figures are printed, not asserted.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "vmexit.h"
#include "vmexit.skel.h"
#include "../tests/bpf/bpf_test_util.h"
#include "bench_args.h"

#define TRIPS		50000
#define ROUNDS		11

enum storage { ST_NONE, ST_IDLE, ST_IN_FLIGHT, ST_STACKS, NR_ST };

#define CELL_FULL	0xfffe	/* handlers.bpf.h: an exit in flight that counts in no cell */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * One CPU, and SCHED_FIFO when allowed: the other tasks of a busy host then wait for the other
 * CPUs instead of landing between the two players (the pair blocks in turn, so it never holds
 * the CPU for long, and the whole run lasts seconds).
 */
static void pin(int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	sched_setscheduler(0, SCHED_FIFO, &sp);
}

struct pong {
	pid_t pid;
	int to, from;		/* our ends: write a byte to it, read its answer */
};

/* The partner process: answers every byte until the pipe closes. */
static int pong_start(struct pong *p, int cpu)
{
	int ping[2], back[2];
	char c;

	if (pipe(ping) || pipe(back))
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		pin(cpu);
		close(ping[1]);
		close(back[0]);
		while (read(ping[0], &c, 1) == 1) {
			if (write(back[1], &c, 1) != 1)
				break;
		}
		_exit(0);
	}
	close(ping[0]);
	close(back[1]);
	p->to = ping[1];
	p->from = back[0];
	return 0;
}

static void pong_stop(struct pong *p)
{
	close(p->to);
	close(p->from);
	waitpid(p->pid, NULL, 0);
}

/* ns per context switch: a round trip is two switches between the two processes. */
static double trips_ns(struct pong *p, int trips)
{
	double t0 = now_ns();
	char c = 'x';

	for (int i = 0; i < trips; i++) {
		if (write(p->to, &c, 1) != 1 || read(p->from, &c, 1) != 1)
			return -1;
	}
	return (now_ns() - t0) / (2.0 * trips);
}

/* Offset of a member of struct thread_state, from the object's BTF: no copy of the layout. */
static long state_member(struct vmexit_bpf *skel, const char *name)
{
	return btf_struct_member_offset(skel->obj, "thread_state", name);
}

struct run_stats {
	__u64 ns, cnt;
};

/* Run time of both programs, and the number of switches. */
static int prog_stats(struct vmexit_bpf *skel, struct run_stats *s)
{
	struct bpf_prog_info sw = {}, wk = {};
	__u32 len = sizeof(sw);

	if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.sched_switch), &sw, &len))
		return -1;
	len = sizeof(wk);
	if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.sched_wakeup), &wk, &len))
		return -1;
	s->ns = sw.run_time_ns + wk.run_time_ns;
	s->cnt = sw.run_cnt;
	return 0;
}

static void detach(struct bpf_link **links)
{
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	links[0] = links[1] = NULL;
}

/*
 * Gives a process vmexit's task storage; with an exit in flight (a userspace one, in cell
 * reference ref: CELL_FULL counts in no cell, 1 is cell 0) or not (ref 0).
 */
static int storage_set(struct vmexit_bpf *skel, pid_t pid, unsigned int ref)
{
	size_t len = bpf_map__value_size(skel->maps.thread_storage);
	long off = state_member(skel, "uexit_cell");
	unsigned char *v = calloc(1, len);
	int fd = syscall(SYS_pidfd_open, pid, 0), err;

	if (!v || fd < 0 || off < 0 || (size_t)off + 4 > len) {
		free(v);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(v + off, &ref, sizeof(ref));
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.thread_storage), &fd, v, BPF_ANY);
	close(fd);
	free(v);
	return err;
}

static int storage_clear(struct vmexit_bpf *skel, pid_t pid)
{
	int fd = syscall(SYS_pidfd_open, pid, 0), err;

	if (fd < 0)
		return -1;
	err = bpf_map_delete_elem(bpf_map__fd(skel->maps.thread_storage), &fd);
	close(fd);
	return err && errno != ENOENT ? -1 : 0;
}

/* --stacks: cell 0 has an exit in flight since long ago, so every period is charged. */
static int cell_in_flight(struct vmexit_bpf *skel)
{
	struct cell c = { .inflight_ts = 1 };
	__u32 zero = 0;

	return bpf_map_update_elem(bpf_map__fd(skel->maps.cells), &zero, &c, BPF_ANY);
}

static struct vmexit_bpf *load_split(bool stacks)
{
	struct vmexit_bpf *skel = vmexit_bpf__open();
	struct bpf_program *prog;

	if (!skel)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == skel->progs.sched_switch ||
						prog == skel->progs.sched_wakeup);
	skel->rodata->use_task_storage = true;
	skel->rodata->split_enabled = true;
	skel->rodata->stacks_enabled = stacks;
	skel->rodata->max_cells = 1;
	if (stacks) {
		bpf_map__set_max_entries(skel->maps.stack_map, 1024);
		bpf_map__set_max_entries(skel->maps.stack_time, 1024);
	}
	if (vmexit_bpf__load(skel) || (stacks && cell_in_flight(skel))) {
		vmexit_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const char *const what[NR_ST] = {
		[ST_NONE] = "attached, tasks without task storage (not vCPUs)",
		[ST_IDLE] = "attached, vmexit task storage, no exit in flight",
		[ST_IN_FLIGHT] = "attached, an exit in flight (off-CPU accounting)",
		[ST_STACKS] = "attached, an exit in flight, --stacks",
	};
	double alone[ROUNDS], with[NR_ST][ROUNDS], prog_ns[NR_ST][ROUNDS];
	struct run_stats s0, s1;
	__u64 runs[NR_ST] = { 0 };
	struct vmexit_bpf *skel, *skel_st;
	struct bpf_link *links[2] = {};
	struct pong p;
	int cpu, rc = 1;

	bench_args(argc, argv, "bench/bench_switch.c");

	if (geteuid() != 0) {
		fprintf(stderr, "bench_switch: needs root to load BPF programs\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	skel = load_split(false);
	skel_st = load_split(true);
	if (!skel || !skel_st) {
		fprintf(stderr, "bench_switch: cannot load the --split%s programs\n",
			skel ? " --stacks" : "");
		vmexit_bpf__destroy(skel);
		vmexit_bpf__destroy(skel_st);
		return 1;
	}
	cpu = sched_getcpu();
	pin(cpu);
	if (pong_start(&p, cpu)) {
		fprintf(stderr, "bench_switch: cannot start the partner: %s\n", strerror(errno));
		goto out;
	}
	trips_ns(&p, TRIPS);	/* warm up */
	for (int r = 0; r < ROUNDS; r++) {
		alone[r] = trips_ns(&p, TRIPS);
		for (int s = 0; s < NR_ST; s++) {
			struct vmexit_bpf *sk = s == ST_STACKS ? skel_st : skel;
			unsigned int ref = s == ST_STACKS ? 1 : s == ST_IN_FLIGHT ? CELL_FULL : 0;
			int stats_fd;

			links[0] = bpf_program__attach(sk->progs.sched_switch);
			links[1] = bpf_program__attach(sk->progs.sched_wakeup);
			if (!links[0] || !links[1]) {
				fprintf(stderr, "bench_switch: cannot attach: %s\n", strerror(errno));
				detach(links);
				goto stop;
			}
			if (s != ST_NONE && (storage_set(sk, getpid(), ref) ||
					     storage_set(sk, p.pid, ref))) {
				fprintf(stderr, "bench_switch: cannot set task storage: %s\n",
					strerror(errno));
				detach(links);
				goto stop;
			}
			with[s][r] = trips_ns(&p, TRIPS);
			prog_ns[s][r] = -1;
			stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
			if (stats_fd >= 0 && !prog_stats(sk, &s0) &&
			    trips_ns(&p, TRIPS / 5) > 0 && !prog_stats(sk, &s1) &&
			    s1.cnt > s0.cnt) {
				prog_ns[s][r] = (double)(s1.ns - s0.ns) / (s1.cnt - s0.cnt);
				runs[s] += s1.cnt - s0.cnt;
			}
			if (stats_fd >= 0)
				close(stats_fd);
			storage_clear(sk, getpid());
			storage_clear(sk, p.pid);
			detach(links);
		}
		if (alone[r] < 0) {
			fprintf(stderr, "bench_switch: ping-pong failed\n");
			goto stop;
		}
	}
	qsort(alone, ROUNDS, sizeof(alone[0]), cmp_double);
	printf("context switch cost of --split: pipe ping-pong of 2 processes on CPU %d, %d round "
	       "trips, best and median of %d rounds (ns per switch)\n", cpu, TRIPS, ROUNDS);
	printf("%-52s %8s %8s %8s %9s %6s\n", "case", "best", "median", "added", "prog ns",
	       "ours%");
	printf("%-52s %8.1f %8.1f %8s %9s %6s\n", "nothing attached", alone[0],
	       alone[ROUNDS / 2], "-", "-", "-");
	for (int s = 0; s < NR_ST; s++) {
		qsort(with[s], ROUNDS, sizeof(with[s][0]), cmp_double);
		qsort(prog_ns[s], ROUNDS, sizeof(prog_ns[s][0]), cmp_double);
		printf("%-52s %8.1f %8.1f %8.1f %9.1f %5.0f%%\n", what[s], with[s][0],
		       with[s][ROUNDS / 2], with[s][0] - alone[0], prog_ns[s][ROUNDS / 2],
		       runs[s] ? 100.0 * 2 * (TRIPS / 5) * ROUNDS / runs[s] : 0);
	}
	printf("added: best minus best, the end-to-end cost (dispatch included) of a switch that is\n"
	       "also a pipe write, a wakeup and a read. prog ns: median of the programs' own\n"
	       "run time (switch + wakeup) per switch (kernel statistics; -1: none); ours%%: the\n"
	       "share of the switches that were the ping-pong's own.\n");
	rc = 0;
stop:
	pong_stop(&p);
out:
	vmexit_bpf__destroy(skel);
	vmexit_bpf__destroy(skel_st);
	return rc;
}
