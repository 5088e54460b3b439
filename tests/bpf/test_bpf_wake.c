// SPDX-License-Identifier: GPL-2.0
/*
 * stat --wake's halt bookkeeping (bpf/wake_common.bpf.h) run in the kernel through
 * BPF_PROG_TEST_RUN with hand-made events (bpf/wake_test.bpf.c): a halt's figures wait in its
 * thread's record and reach the hlt cell at the entry's one lookup, or when the record is full,
 * or when the thread ends, or when its record stops naming the vCPU. Each case's expected cell
 * is derived from the halts it sends (comments); every halt must be counted exactly once.
 */
#include <stdlib.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../unit/check.h"
#include "wake.h"
#include "hist.h"
#include "wake_test.skel.h"
#include "wake_test.h"
#include "bpf_test_util.h"

#define TGID	4242

static struct wake_test_bpf *skel;
static int prog_fd, cells_fd;

static void ev(__u64 op, __u32 tid, __s32 vcpu, __u64 ns, bool waited, bool valid)
{
	struct wake_test_ctx c = {
		.op = op, .tgid = TGID, .tid = tid, .vcpu = (__u64)vcpu,
		.ns = ns, .waited = waited, .valid = valid,
	};
	LIBBPF_OPTS(bpf_test_run_opts, o, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(prog_fd, &o) || o.retval) {
		fprintf(stderr, "test_run op %llu failed (retval %u)\n", (unsigned long long)op,
			o.retval);
		check_failures++;
	}
}

static void halt(__u32 tid, __u64 ns, bool waited, bool valid)
{
	ev(WT_HALT_END, tid, 0, ns, waited, valid);
}

/* The hlt cell of (TGID, vcpu) into *out, zeroed if there is none; how many matched. */
static int cell_of(__s32 vcpu, struct hlt_cell *out)
{
	struct hlt_key k, *prev = NULL;
	int n = 0;

	memset(out, 0, sizeof(*out));
	while (!bpf_map_get_next_key(cells_fd, prev, &k)) {
		if (k.tgid == TGID && k.vcpu == vcpu) {
			CHECK(!bpf_map_lookup_elem(cells_fd, &k, out));
			n++;
		}
		prev = &k;
	}
	return n;
}

static __u64 hist_total(const struct hlt_cell *c)
{
	__u64 s = 0;

	for (unsigned int i = 0; i < NR_BUCKETS; i++)
		s += c->hist[i];
	return s;
}

/*
 * Four halts in one exit: polled 100 ns, polled 3,000 ns, slept 70,000 ns (no sleep or wake-up
 * seen by the test, so its start-to-wake-up is 0: the wake-up is clamped to its start), polled
 * 500 ns not valid. None is in the cell until the entry; then the cell has them all and the
 * one exit.
 */
static void test_one_exit(void)
{
	struct hlt_cell c;
	__u64 want[NR_BUCKETS] = {};

	ev(WT_EXIT, 5001, 1, 0, 0, 0);
	halt(5001, 100, false, true);
	halt(5001, 3000, false, true);
	halt(5001, 70000, true, true);
	halt(5001, 500, false, false);
	cell_of(1, &c);
	CHECK_EQ_U64(c.halts, 0);
	ev(WT_ENTRY, 5001, 1, 0, 0, 0);
	CHECK_EQ_U64(cell_of(1, &c), 1);
	CHECK_EQ_U64(c.exits, 1);
	CHECK_EQ_U64(c.halts, 4);
	CHECK_EQ_U64(c.polled, 3);
	CHECK_EQ_U64(c.slept, 1);
	CHECK_EQ_U64(c.poll_slept, 0);
	CHECK_EQ_U64(c.invalid, 1);
	CHECK_EQ_U64(c.halt_ns, 100 + 3000 + 70000 + 500);
	CHECK_EQ_U64(c.slept_halt_ns, 70000);
	CHECK_EQ_U64(c.wake_sum_ns, 100 + 3000 + 0 + 500);
	want[hist_bucket(100)]++;
	want[hist_bucket(3000)]++;
	want[hist_bucket(0)]++;
	want[hist_bucket(500)]++;
	CHECK(!memcmp(c.hist, want, sizeof(want)));
	/* An exit without halts adds nothing; nothing is counted twice. */
	ev(WT_EXIT, 5001, 1, 0, 0, 0);
	ev(WT_ENTRY, 5001, 1, 0, 0, 0);
	cell_of(1, &c);
	CHECK_EQ_U64(c.exits, 1);
	CHECK_EQ_U64(c.halts, 4);
	CHECK_EQ_U64(hist_total(&c), 4);
}

/*
 * More halts in one exit than a record holds (17: past any room of up to 16): polled, the
 * i-th 1,000 * i ns. Every one is counted, its bucket included.
 */
static void test_many_halts(void)
{
	__u64 want[NR_BUCKETS] = {}, sum = 0;
	struct hlt_cell c;

	ev(WT_EXIT, 5002, 2, 0, 0, 0);
	for (__u64 i = 1; i <= 17; i++) {
		halt(5002, 1000 * i, false, true);
		want[hist_bucket(1000 * i)]++;
		sum += 1000 * i;
	}
	ev(WT_ENTRY, 5002, 2, 0, 0, 0);
	cell_of(2, &c);
	CHECK_EQ_U64(c.exits, 1);
	CHECK_EQ_U64(c.halts, 17);
	CHECK_EQ_U64(c.polled, 17);
	CHECK_EQ_U64(c.halt_ns, sum);
	CHECK_EQ_U64(c.wake_sum_ns, sum);
	CHECK(!memcmp(c.hist, want, sizeof(want)));
}

/*
 * Halts with no entry after them (KVM_RUN ended by a signal, then the thread exits): 200 and
 * 400 ns polled. Counted at the thread's end; no exit is (none completed).
 */
static void test_thread_end(void)
{
	struct hlt_cell c;

	ev(WT_EXIT, 5003, 3, 0, 0, 0);
	halt(5003, 200, false, true);
	halt(5003, 400, false, true);
	ev(WT_THREAD_END, 5003, 0, 0, 0, 0);
	CHECK_EQ_U64(cell_of(3, &c), 1);
	CHECK_EQ_U64(c.exits, 0);
	CHECK_EQ_U64(c.halts, 2);
	CHECK_EQ_U64(c.polled, 2);
	CHECK_EQ_U64(c.halt_ns, 600);
	CHECK_EQ_U64(hist_total(&c), 2);
	CHECK_EQ_U64(c.hist[hist_bucket(200)] + c.hist[hist_bucket(400)], 2);
}

/*
 * vCPU 4 moves from thread 5004, which has a halt of 800 ns held, to thread 5005: the halt is
 * vCPU 4's, counted when 5004 stops naming it, none under vCPU -1 (an un-named record).
 */
static void test_vcpu_moves(void)
{
	struct hlt_cell c;

	ev(WT_EXIT, 5004, 4, 0, 0, 0);
	halt(5004, 800, false, true);
	ev(WT_EXIT, 5005, 4, 0, 0, 0);
	cell_of(4, &c);
	CHECK_EQ_U64(c.halts, 1);
	CHECK_EQ_U64(c.halt_ns, 800);
	CHECK_EQ_U64(cell_of(-1, &c), 0);
	ev(WT_ENTRY, 5005, 4, 0, 0, 0);
	ev(WT_THREAD_END, 5004, 0, 0, 0, 0);
	cell_of(4, &c);
	CHECK_EQ_U64(c.halts, 1);
}

/*
 * Thread 5006 runs vCPU 5, a halt of 900 ns held, then another vCPU (its record is made anew
 * for vCPU 6): the halt stays vCPU 5's.
 */
static void test_record_anew(void)
{
	struct hlt_cell c;

	ev(WT_EXIT, 5006, 5, 0, 0, 0);
	halt(5006, 900, false, true);
	ev(WT_EXIT, 5006, 6, 0, 0, 0);
	cell_of(5, &c);
	CHECK_EQ_U64(c.halts, 1);
	CHECK_EQ_U64(c.halt_ns, 900);
	ev(WT_ENTRY, 5006, 6, 0, 0, 0);
	cell_of(6, &c);
	CHECK_EQ_U64(c.halts, 0);
}

int main(void)
{
	struct bpf_program *p;

	if (geteuid() != 0) {
		printf("SKIP: test_bpf_wake: needs root to load BPF programs (run as root)\n");
		return 77;
	}
	libbpf_set_print(libbpf_print_quiet);
	skel = wake_test_bpf__open();
	if (!skel) {
		fprintf(stderr, "cannot open the wake test object\n");
		return 1;
	}
	/* The tracepoint programs need the kvm module's BTF: only the driver is loaded. */
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.run_wake);
	if (wake_test_bpf__load(skel)) {
		fprintf(stderr, "cannot load the wake test object\n");
		wake_test_bpf__destroy(skel);
		return 1;
	}
	prog_fd = bpf_program__fd(skel->progs.run_wake);
	cells_fd = bpf_map__fd(skel->maps.hlt_cells);
	test_one_exit();
	test_many_halts();
	test_thread_end();
	test_vcpu_moves();
	test_record_anew();
	CHECK_EQ_U64(skel->bss->wake_lost[WAKE_LOST_CELLS], 0);
	wake_test_bpf__destroy(skel);
	CHECK_DONE("test_bpf_wake");
}
