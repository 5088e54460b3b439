// SPDX-License-Identifier: GPL-2.0
/*
 * Time to read and print one interval of `vmexit stat` at scale: 100 VMs x 8 vCPUs x 30
 * reasons = 24,000 cells in the real (kernel-allocated, mmapped) cell array. The cells are
 * written from userspace through the mmap, every cell changed in every interval (the worst
 * case: the tracker skips unchanged cells), then tracker_sample + stat_print are timed, for
 * --by vm and --by vcpu, table and JSON, to /dev/null. Figures are printed, not asserted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "hist.h"
#include "stat_output.h"
#include "tracker.h"
#include "name_cache.h"
#include "vmexit_bench.skel.h"
#include "../tests/bpf/bpf_test_util.h"
#include "bench_args.h"

#define NR_VMS		100
#define NR_VCPUS	8
#define NR_REASONS	30
#define NR_CELLS	(NR_VMS * NR_VCPUS * NR_REASONS)
#define INTERVALS	20

/* 25 common VMX reasons and 5 KVM_EXIT_* ones, as a busy host would show. */
static const struct { __u32 isa, reason; } reasons[NR_REASONS] = {
	{ 1, 0 }, { 1, 1 }, { 1, 2 }, { 1, 7 }, { 1, 9 }, { 1, 10 }, { 1, 12 }, { 1, 13 },
	{ 1, 14 }, { 1, 18 }, { 1, 28 }, { 1, 29 }, { 1, 30 }, { 1, 31 }, { 1, 32 }, { 1, 40 },
	{ 1, 44 }, { 1, 45 }, { 1, 48 }, { 1, 49 }, { 1, 52 }, { 1, 54 }, { 1, 55 }, { 1, 56 },
	{ 1, 58 },
	{ 3, 2 }, { 3, 6 }, { 3, 7 }, { 3, 24 }, { 3, 0x80000004 },
};

struct bench {
	struct vmexit_bench_bpf *skel;
	struct cell *cells;
	size_t cells_len;
	__u32 epoch;
	__u64 rng;
};

static __u32 bench_nr_cells(void *ctx)
{
	struct bench *b = ctx;
	__u32 n = b->skel->bss->next_cell;

	return n < NR_CELLS ? n : NR_CELLS;
}

static __u64 rnd(struct bench *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng;
}

/* What the handlers would have done in one interval: a few hundred exits per cell. */
static void advance(struct bench *b, __u32 epoch)
{
	for (__u32 i = 0; i < NR_CELLS; i++) {
		struct cell *c = &b->cells[i];
		__u32 n = 100 + rnd(b) % 400;
		__u64 lat = 500 + rnd(b) % 20000;

		c->started += n;
		c->count += n;
		c->total_ns += n * lat;
		if (lat < c->min_ns)
			c->min_ns = lat;
		if (lat > c->max_ns)
			c->max_ns = lat;
		c->iv_epoch = epoch;
		c->iv_min_ns = lat / 2;
		c->iv_max_ns = lat * 3;
		c->hist[hist_bucket(lat / 2)] += n / 4;
		c->hist[hist_bucket(lat)] += n - n / 4 - n / 8;
		c->hist[hist_bucket(lat * 3)] += n / 8;
	}
}

static int fill(struct bench *b)
{
	__u32 i = 0;

	for (__u32 vm = 0; vm < NR_VMS; vm++) {
		for (__u32 v = 0; v < NR_VCPUS; v++) {
			for (__u32 r = 0; r < NR_REASONS; r++, i++) {
				struct cell_key *k = &b->cells[i].key;

				k->tgid = 10000 + vm * 100;
				k->tid = k->tgid + 1 + v;
				k->vcpu = v;
				k->isa = reasons[r].isa;
				k->reason = reasons[r].reason;
				b->cells[i].min_ns = ~0ULL;
				b->cells[i].iv_epoch = ~0U;
				__atomic_store_n(&k->ready, 1, __ATOMIC_RELEASE);
			}
		}
	}
	b->skel->bss->next_cell = NR_CELLS;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, strlen(field))) {
			kb = strtol(line + strlen(field), NULL, 10);
			break;
		}
	}
	fclose(f);
	return kb;
}

static int run(struct bench *b, enum group_by by, enum out_format fmt, FILE *out)
{
	struct name_cache names = { .resolve = false };
	struct stat_view view = { .by = by, .fmt = fmt, .sort = SORT_COUNT, .names = &names };
	struct stat_report rep = { .interval_s = 1, .elapsed_s = 1 };
	struct cell_source src = { .cells = b->cells, .nr_cells = bench_nr_cells, .ctx = b };
	double first = 0, sum = 0, worst = 0, sample_sum = 0;
	struct row_table rows;
	struct tracker t;
	__u32 nr_rows = 0;

	tracker_init(&t, &src, by, -1, false);
	row_table_init(&rows);
	for (int i = 0; i <= INTERVALS; i++) {
		__u32 closed = b->epoch++;
		double t0, t1, t2;

		advance(b, closed);
		b->skel->bss->epoch = b->epoch;
		t0 = now_ms();
		if (tracker_sample(&t, closed, &rows)) {
			fprintf(stderr, "bench_read: out of memory\n");
			return -1;
		}
		t1 = now_ms();
		rep.rows = &rows;
		stat_print(&view, &rep, out);
		t2 = now_ms();
		nr_rows = rows.nr;
		if (i == 0) {
			first = t2 - t0;	/* includes discovering the 24,000 cells */
			continue;
		}
		sum += t2 - t0;
		sample_sum += t1 - t0;
		if (t2 - t0 > worst)
			worst = t2 - t0;
	}
	/* RSS while the tracker and its row tables are alive (freed before the next run). */
	printf("%-6s %-5s %7u %10.2f %10.2f %10.2f %10.2f %9.1f\n", by == BY_VM ? "vm" : "vcpu",
	       fmt == OUT_JSON ? "json" : "table", nr_rows, first, sample_sum / INTERVALS,
	       sum / INTERVALS, worst, status_kb("VmRSS:") / 1024.0);
	tracker_free(&t);
	row_table_free(&rows);
	name_cache_free(&names);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { enum group_by by; enum out_format fmt; } runs[] = {
		{ BY_VM, OUT_TABLE }, { BY_VM, OUT_JSON }, { BY_VCPU, OUT_TABLE },
		{ BY_VCPU, OUT_JSON },
	};
	struct bench b = { .rng = 0x9e3779b97f4a7c15ULL };
	size_t stride = (sizeof(struct cell) + 7) & ~7ul;
	long rss0;
	FILE *out;
	int err;

	bench_args(argc, argv, "bench/bench_read.c");

	if (geteuid() != 0) {
		fprintf(stderr, "bench_read: needs root to create the BPF cell array\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	b.skel = vmexit_bench_bpf__open();
	if (!b.skel) {
		fprintf(stderr, "bench_read: cannot open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	/* The cell array as src/kernel/session.c sizes it; nothing runs, so no program is loaded. */
	b.skel->rodata->max_cells = NR_CELLS;
	b.skel->rodata->use_task_storage = false;
	bpf_map__set_max_entries(b.skel->maps.cells, NR_CELLS);
	bpf_map__set_autocreate(b.skel->maps.thread_storage, false);
	bpf_program__set_autoload(b.skel->progs.bench_task, false);
	err = vmexit_bench_bpf__load(b.skel);
	if (err) {
		fprintf(stderr, "bench_read: cannot load the BPF object: %s\n", strerror(-err));
		vmexit_bench_bpf__destroy(b.skel);
		return 1;
	}
	b.cells_len = (stride * NR_CELLS + getpagesize() - 1) & ~((size_t)getpagesize() - 1);
	b.cells = mmap(NULL, b.cells_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       bpf_map__fd(b.skel->maps.cells), 0);
	out = fopen("/dev/null", "w");
	if (b.cells == MAP_FAILED || !out) {
		fprintf(stderr, "bench_read: cannot map the cells / open /dev/null: %s\n",
			strerror(errno));
		vmexit_bench_bpf__destroy(b.skel);
		return 1;
	}
	fill(&b);
	rss0 = status_kb("VmRSS:");

	printf("Reading one interval: %d VMs x %d vCPUs x %d reasons = %d cells (%.1f MiB mmapped),"
	       " every cell changed each interval, %d intervals, output to /dev/null\n",
	       NR_VMS, NR_VCPUS, NR_REASONS, NR_CELLS, b.cells_len / 1048576.0, INTERVALS);
	printf("%-6s %-5s %7s %10s %10s %10s %10s %9s\n", "--by", "fmt", "rows", "first ms",
	       "sample ms", "total ms", "worst ms", "RSS MiB");
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		if (run(&b, runs[i].by, runs[i].fmt, out))
			break;
	}
	printf("sample: tracker_sample only; total: tracker_sample + stat_print, mean per "
	       "interval; first: the first interval, which also discovers the cells\n");
	printf("RSS: %ld KiB after filling the cells (mmapped array, touched), peak %ld KiB\n",
	       rss0, status_kb("VmHWM:"));
	fclose(out);
	munmap(b.cells, b.cells_len);
	vmexit_bench_bpf__destroy(b.skel);
	return 0;
}
