// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of the BPF handlers per event pair (exit + entry, user exit + KVM_RUN), measured in the
 * kernel with bpf_loop (bpf/vmexit_bench.bpf.c) and printed next to the cost of an empty loop
 * and of the two clock reads every pair needs anyway. Figures are printed, not asserted.
 *
 * The tracepoint's own dispatch to BPF is measured apart: a getpgid() loop alone, then with an
 * empty program on sys_enter, raw and classic (the record built, perf's dispatch). What none of
 * this includes: cache misses of a real vCPU thread, whose state and cells are cold after the
 * guest ran. The loops keep them hot: a lower bound.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "vmexit.h"
#include "vmexit_bench.skel.h"
#include "../bench/vmexit_bench.h"
#include "../tests/bpf/bpf_test_util.h"
#include "bench_time.h"
#include "bench_args.h"

#define ITERS		1000000
#define REPS		7
#define TARGET_NS	100.0
#define TARGET_OWN_NS	60.0

struct inst {
	struct vmexit_bench_bpf *skel;
	int fd;
	bool task;			/* raw_tp + task storage, else syscall + thread hash */
	struct ring_buffer *rb;
	__u64 drained;
};

static int drain_cb(void *ctx, void *data, size_t len)
{
	(void)data;
	(void)len;
	((struct inst *)ctx)->drained++;
	return 0;
}

/*
 * --by key: key programs' table on, each exit charged to its key (none here) as well; --by
 * rip: each guest exit to its RIP (one of 8).
 */
static __u32 bench_keys;	/* enum vmexit_key_mode */

static int inst_open(struct inst *in, bool task, bool stream, bool split)
{
	struct vmexit_bench_bpf *skel;
	int err;

	memset(in, 0, sizeof(*in));
	skel = vmexit_bench_bpf__open();
	if (!skel)
		return -errno;
	in->skel = skel;
	in->task = task;
	skel->rodata->use_task_storage = task;
	skel->rodata->max_cells = 64;
	skel->rodata->stream_enabled = stream;
	skel->rodata->split_enabled = split;
	skel->rodata->key_mode = bench_keys;
	skel->rodata->max_keys = 1024;
	if (bench_keys)
		bpf_map__set_max_entries(skel->maps.key_table, 1024 + 128);
	bpf_map__set_max_entries(skel->maps.cells, 64);
	if (task) {
		bpf_program__set_autoload(skel->progs.bench_sys, false);
	} else {
		bpf_map__set_max_entries(skel->maps.thread_hash, 16384);
		bpf_map__set_autocreate(skel->maps.thread_storage, false);
		bpf_program__set_autoload(skel->progs.bench_task, false);
	}
	/* Room for a whole run: the ring is drained between runs, never full during one. */
	if (stream)
		bpf_map__set_max_entries(skel->maps.events, 128u << 20);
	err = vmexit_bench_bpf__load(skel);
	if (err)
		return err;
	in->fd = bpf_program__fd(task ? skel->progs.bench_task : skel->progs.bench_sys);
	if (stream) {
		in->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), drain_cb, in, NULL);
		if (!in->rb)
			return -errno;
	}
	return 0;
}

static void inst_close(struct inst *in)
{
	ring_buffer__free(in->rb);
	vmexit_bench_bpf__destroy(in->skel);
	memset(in, 0, sizeof(*in));
}

/* ns per iteration of one run, or a negative errno. */
static double run_once(struct inst *in, int variant, __u64 iters)
{
	struct bench_args a = { .variant = variant, .iters = iters, .reason = 30 /* IO */ };
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &a, .ctx_size_in = sizeof(a));
	int err = bpf_prog_test_run_opts(in->fd, &o);

	if (err)
		return err;
	if (o.retval)
		return -EINVAL;
	if (in->rb)
		ring_buffer__consume(in->rb);
	return (double)in->skel->bss->bench_ns / (double)iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	double min, median;
};

/* A warm-up run (allocates the thread state and the cell), then the best and the median. */
static int measure(struct inst *in, int variant, struct result *r)
{
	double v[REPS];

	if (run_once(in, variant, 1000) < 0)
		return -1;
	for (int i = 0; i < REPS; i++) {
		v[i] = run_once(in, variant, ITERS);
		if (v[i] < 0)
			return -1;
	}
	qsort(v, REPS, sizeof(v[0]), cmp_double);
	r->min = v[0];
	r->median = v[REPS / 2];
	return 0;
}

static void print_row(const char *name, const struct result *r, const struct result *empty,
		      const struct result *clock)
{
	printf("%-52s %8.1f %8.1f", name, r->min, r->median);
	if (empty)
		printf(" %11.1f", r->min - empty->min);
	else
		printf(" %11s", "-");
	if (clock)
		printf(" %11.1f", r->min - clock->min);
	else
		printf(" %11s", "-");
	putchar('\n');
}

#define DISP_ITERS	500000
#define DISP_REPS	11

/* ns per getpgid() over one loop. */
static double getpgid_loop_ns(void)
{
	return syscall_loop_ns(SYS_getpgid, DISP_ITERS);
}

/* One loop with prog attached; negative errno if it does not attach. */
static double attached_loop_ns(struct bpf_program *prog)
{
	struct bpf_link *link = bpf_program__attach(prog);
	double v;

	if (!link)
		return -errno;
	v = getpgid_loop_ns();
	bpf_link__destroy(link);
	return v;
}

struct dispatch {
	double alone, raw, classic;	/* medians: the loop alone, and what each door adds */
};

/*
 * What an empty program on sys_enter adds to each getpgid(), through the raw door and the
 * classic one, as medians of rounds that measure the loop alone and with each attached back to
 * back (a busy host drifts less within a round). Both doors turn syscall tracing on for the
 * task, at the same cost to both: their difference is the classic event's record and perf
 * dispatch. 0, or a negative errno.
 */
static int dispatch_measure(struct dispatch *d)
{
	struct vmexit_bench_bpf *skel = vmexit_bench_bpf__open();
	double alone[DISP_REPS], raw[DISP_REPS], classic[DISP_REPS];
	int err;

	if (!skel)
		return -errno;
	bpf_program__set_autoload(skel->progs.bench_sys, false);
	bpf_program__set_autoload(skel->progs.bench_task, false);
	bpf_program__set_autoload(skel->progs.disp_raw, true);
	bpf_program__set_autoload(skel->progs.disp_classic, true);
	err = vmexit_bench_bpf__load(skel);
	getpgid_loop_ns();	/* warm-up */
	for (int r = 0; !err && r < DISP_REPS; r++) {
		double a = getpgid_loop_ns();
		double w = attached_loop_ns(skel->progs.disp_raw);
		double c = attached_loop_ns(skel->progs.disp_classic);

		if (w < 0 || c < 0) {
			err = (int)(w < 0 ? w : c);
			break;
		}
		alone[r] = a;
		raw[r] = w - a;
		classic[r] = c - a;
	}
	vmexit_bench_bpf__destroy(skel);
	if (err)
		return err;
	qsort(alone, DISP_REPS, sizeof(double), cmp_double);
	qsort(raw, DISP_REPS, sizeof(double), cmp_double);
	qsort(classic, DISP_REPS, sizeof(double), cmp_double);
	d->alone = alone[DISP_REPS / 2];
	d->raw = raw[DISP_REPS / 2];
	d->classic = classic[DISP_REPS / 2];
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		bool task, stream, split;
		int variant;
	} rows[] = {
		{ "state lookups only (2x pid_tgid + thread_get), hash", false, false, false,
		  BV_STATE },
		{ "state lookups only, task storage", true, false, false, BV_STATE },
		{ "kvm_exit + kvm_entry, thread hash (syscall prog)", false, false, false,
		  BV_EXIT_ENTRY },
		{ "kvm_exit + kvm_entry, task storage (raw_tp prog)", true, false, false,
		  BV_EXIT_ENTRY },
		{ "user exit + KVM_RUN, thread hash", false, false, false, BV_USER_RUN },
		{ "user exit + KVM_RUN, task storage", true, false, false, BV_USER_RUN },
		{ "user exit -EINTR + KVM_RUN, task storage (hash)", true, false, false,
		  BV_USER_EINTR_RUN },
		{ "kvm_exit + kvm_entry + stream record, thread hash", false, true, false,
		  BV_EXIT_ENTRY },
		{ "kvm_exit + kvm_entry + stream record, task storage", true, true, false,
		  BV_EXIT_ENTRY },
		{ "kvm_exit + kvm_entry, task storage, --split", true, false, true,
		  BV_EXIT_ENTRY },
		{ "user exit + KVM_RUN, task storage, --split", true, false, true, BV_USER_RUN },
		/* One switch = the program for both sides; the task is prev and next at once. */
		{ "sched_switch (--split), task without storage", true, false, true,
		  BV_SWITCH_NONE },
		{ "sched_switch, vmexit storage, no exit in flight", true, false, true,
		  BV_SWITCH_IDLE },
		{ "sched_switch, exit in flight (out + in)", true, false, true,
		  BV_SWITCH_INFLIGHT },
	};
	struct result base[2][2], exit_entry_task = { 0 };
	struct dispatch d = { 0 };
	double clocks, own;
	int err;
	struct inst in;
	cpu_set_t set;
	int cpu;

	bench_args(argc, argv, "bench/bench_handlers.c");

	if (geteuid() != 0) {
		fprintf(stderr, "bench_handlers: needs root to load BPF programs\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	/* One CPU for the whole run: the figures should not depend on migrations. */
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);

	printf("BPF handler cost per event pair: bpf_loop of %d, best and median of %d runs, "
	       "CPU %d\n", ITERS, REPS, cpu);
	printf("%-52s %8s %8s %11s %11s\n", "variant", "ns/pair", "median", "minus-empty",
	       "minus-clock");
	/* Baselines in both program types: the loop and helpers cost the same, but check. */
	for (int t = 0; t < 2; t++) {
		if (inst_open(&in, t, false, false)) {
			fprintf(stderr, "bench_handlers: cannot load the benchmark object\n");
			inst_close(&in);
			return 1;
		}
		if (measure(&in, BV_EMPTY, &base[t][0]) || measure(&in, BV_CLOCK, &base[t][1])) {
			fprintf(stderr, "bench_handlers: test_run failed\n");
			inst_close(&in);
			return 1;
		}
		print_row(t ? "empty bpf_loop iteration (raw_tp)" :
			      "empty bpf_loop iteration (syscall)", &base[t][0], NULL, NULL);
		print_row(t ? "2x bpf_ktime_get_ns (raw_tp)" : "2x bpf_ktime_get_ns (syscall)",
			  &base[t][1], &base[t][0], NULL);
		inst_close(&in);
	}
	/* The second and third passes: the default exit pairs again with --by key's and --by
	 * rip's charging on. */
	for (size_t k = 0; k < 3 * sizeof(rows) / sizeof(rows[0]); k++) {
		size_t i = k % (sizeof(rows) / sizeof(rows[0]));
		char name[80];
		struct result r;
		__u64 lost_rb, expect_cells;

		bench_keys = (__u32)(k / (sizeof(rows) / sizeof(rows[0])));
		if (bench_keys && !(rows[i].task && !rows[i].stream && !rows[i].split &&
				    (rows[i].variant == BV_EXIT_ENTRY || rows[i].variant == BV_USER_RUN)))
			continue;
		snprintf(name, sizeof(name), "%s%s", rows[i].name,
			 bench_keys == KEY_MODE_RIP ? ", --by rip" : bench_keys ? ", --by key" : "");
		if (inst_open(&in, rows[i].task, rows[i].stream, rows[i].split)) {
			fprintf(stderr, "bench_handlers: cannot load the benchmark object (%s)\n",
				rows[i].name);
			inst_close(&in);
			return 1;
		}
		if (measure(&in, rows[i].variant, &r)) {
			fprintf(stderr, "bench_handlers: test_run failed (%s)\n", rows[i].name);
			inst_close(&in);
			return 1;
		}
		/* The state-only rows read no clock: nothing to take off but the loop. */
		print_row(name, &r, &base[rows[i].task][0],
			  rows[i].variant == BV_STATE || rows[i].variant >= BV_SWITCH_NONE ? NULL :
			  &base[rows[i].task][1]);
		if (!bench_keys && rows[i].task && !rows[i].stream && !rows[i].split &&
		    rows[i].variant == BV_EXIT_ENTRY)
			exit_entry_task = r;
		/* Sanity: the steady state the loop was meant to measure. */
		expect_cells = rows[i].variant == BV_STATE || rows[i].variant >= BV_SWITCH_NONE ?
			       0 : 1;
		lost_rb = in.skel->bss->lost[LOST_RINGBUF_FULL];
		if (in.skel->bss->next_cell != expect_cells || lost_rb ||
		    (rows[i].stream && in.drained != 1000 + (__u64)REPS * ITERS)) {
			printf("  (unexpected: %u cells, %llu stream records lost, %llu drained)\n",
			       in.skel->bss->next_cell, (unsigned long long)lost_rb,
			       (unsigned long long)in.drained);
		}
		if (bench_keys == KEY_MODE_RIP && rows[i].variant == BV_EXIT_ENTRY &&
		    (in.skel->bss->keys_used != 8 || in.skel->bss->lost[LOST_KEYS_FULL]))
			printf("  (unexpected: %u RIP keys, not the loop's 8)\n",
			       in.skel->bss->keys_used);
		inst_close(&in);
	}
	printf("minus-empty: the pair as the tracepoints run it (clock reads included); "
	       "minus-clock: the handlers' own work.\n");
	printf("target: kvm_exit + kvm_entry under %.0f ns per pair (task storage, default): "
	       "%.1f ns -> %s\n", TARGET_NS, exit_entry_task.min - base[1][0].min,
	       exit_entry_task.min - base[1][0].min < TARGET_NS ? "met" : "NOT met");

	err = dispatch_measure(&d);
	if (err) {
		fprintf(stderr, "bench_handlers: cannot attach the dispatch programs: %s\n",
			strerror(-err));
		return 1;
	}
	printf("\nDispatch per event: getpgid() x %d, median of %d rounds (alone, raw, classic "
	       "back to back), empty program on sys_enter\n", DISP_ITERS, DISP_REPS);
	printf("  %-50s %8.1f ns/syscall\n", "alone", d.alone);
	printf("  %-50s %+8.1f ns/event\n", "raw (tp_btf/sys_enter), + syscall tracing", d.raw);
	printf("  %-50s %+8.1f ns/event\n", "classic (tp/raw_syscalls/sys_enter), + same",
	       d.classic);
	printf("  %-50s %+8.1f ns/event\n", "classic minus raw: record + perf dispatch",
	       d.classic - d.raw);
	/* The pair, in three parts: two dispatches, the handlers, the two clock reads. */
	clocks = base[1][1].min - base[1][0].min;
	own = exit_entry_task.min - base[1][1].min;
	printf("\nkvm_exit + kvm_entry pair (task storage): dispatch (2 events) + handlers + clocks\n");
	printf("  dispatch, raw tracepoints   %6.1f ns  (2 x the raw figure above: an upper bound, "
	       "syscall tracing included)\n", 2 * d.raw);
	printf("  dispatch, classic           %6.1f ns  (the same with the classic events)\n",
	       2 * d.classic);
	printf("  handlers' own work          %6.1f ns  (target <= %.0f ns: %s)\n", own,
	       TARGET_OWN_NS, own <= TARGET_OWN_NS ? "met" : "NOT met");
	printf("  2 clock reads               %6.1f ns\n", clocks);
	return 0;
}
