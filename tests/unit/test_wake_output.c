// SPDX-License-Identifier: GPL-2.0
/*
 * stat --wake's rows (src/model/wake_rows.c, src/output/wake_output.c): a hand-made snapshot
 * of the kernel's cells, kept for one pid, sorted and printed as CSV. Every expected number is
 * worked out here from the latencies put in, with include/hist.h's buckets: 1000 ns is in
 * [960, 1024) (2^9 cut in 8: 64 wide), 3000 ns in [2816, 3072), 35000 ns in [32768, 36864).
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "hist.h"
#include "wake_output.h"

static void put(__u64 *hist, __u64 ns)
{
	hist[hist_bucket(ns)]++;
}

static void test_csv(void)
{
	struct wake_snapshot s = {};
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	s.nr_wake = 4;
	s.wkeys = calloc(4, sizeof(*s.wkeys));
	s.wcells = calloc(4, sizeof(*s.wcells));
	s.nr_hlt = 2;
	s.hkeys = calloc(2, sizeof(*s.hkeys));
	s.hcells = calloc(2, sizeof(*s.hcells));
	if (!s.wkeys || !s.wcells || !s.hkeys || !s.hcells)
		abort();
	/* Two MSIs to vCPU 1 of pid 100: 1000 and 3000 ns, the vCPU asleep in a halt. */
	s.wkeys[0] = (struct wake_key){ 100, 1, WAKE_SRC_MSI, 0x41, 0 };
	s.wcells[0].count = 2;
	s.wcells[0].sum_ns = 4000;
	s.wcells[0].max_ns = 3000;
	s.wcells[0].parts[WAKE_PART_POLLED] = 1000;
	s.wcells[0].parts[WAKE_PART_SLEPT] = 1500;
	s.wcells[0].parts[WAKE_PART_RUNQ] = 1000;
	s.wcells[0].parts[WAKE_PART_ONCPU] = 500;
	put(s.wcells[0].hist, 1000);
	put(s.wcells[0].hist, 3000);
	/* And three more of them KVM posted (vCPU 1 in guest mode): counted, not timed. */
	s.wcells[0].posted = 3;
	/* One MSI posted to vCPU 0, none timed: a row of its own, its times 0. */
	s.wkeys[3] = (struct wake_key){ 100, 0, WAKE_SRC_MSI, 0x42, 0 };
	s.wcells[3].posted = 1;
	/* Another guest's: left out. */
	s.wkeys[1] = (struct wake_key){ 200, 0, WAKE_SRC_IPI, 0xfd, 0 };
	s.wcells[1].count = 1;
	/* One timer interrupt to vCPU 0, 10 ns, in guest mode: sorted first. */
	s.wkeys[2] = (struct wake_key){ 100, 0, WAKE_SRC_TIMER, 0x40, 0 };
	s.wcells[2].count = 1;
	s.wcells[2].sum_ns = 10;
	s.wcells[2].max_ns = 10;
	s.wcells[2].parts[WAKE_PART_GUEST] = 10;
	put(s.wcells[2].hist, 10);
	/* vCPU 0 halted twice in one exit: a poll that caught it at 5 us, a sleep woken at 35. */
	s.hkeys[0] = (struct hlt_key){ 200, 0, 0 };
	s.hcells[0].halts = 7;
	s.hkeys[1] = (struct hlt_key){ 100, 0, 0 };
	s.hcells[1] = (struct hlt_cell){ .exits = 1, .halts = 2, .polled = 1, .slept = 1,
					 .sum_ns = 50000, .halt_ns = 40000,
					 .parts = { 5000, 30000, 5000, 10000 } };
	put(s.hcells[1].hist, 5000);
	put(s.hcells[1].hist, 35000);
	s.lost[WAKE_LOST_SLOTS] = 3;
	s.posted = 4;
	s.posted_known = true;

	wake_snapshot_keep(&s, (int[]){ 100 }, 1);
	wake_snapshot_sort(&s);
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	/* halt_poll_ns 20 us: the 5 us halt within it, the 35 us one not. */
	CHECK_EQ_U64(wake_print(&s, OUT_CSV, 20000, f), 0);
	fclose(f);
	CHECK_STR(out,
		  "kind,pid,vcpu,source,vector,count,sum_ns,p50_ns,p99_ns,max_ns,guest_ns,exit_ns,"
		  "polled_ns,slept_ns,runq_ns,oncpu_ns,posted\n"
		  "wake,100,0,msi,66,0,0,0,0,0,0,0,0,0,0,0,1\n"
		  "wake,100,0,timer,64,1,10,10,10,10,10,0,0,0,0,0,0\n"
		  "wake,100,1,msi,65,2,4000,992,2944,3000,0,0,1000,1500,1000,500,3\n"
		  "kind,pid,vcpu,exits,halts,polled,poll_slept,slept,invalid,sum_ns,halt_ns,"
		  "poll_ns,sleep_ns,runq_ns,other_ns\n"
		  "hlt,100,0,1,2,1,0,1,0,50000,40000,5000,30000,5000,10000\n"
		  "kind,pid,halts,poll_cpu_ns,halt_poll_ns,within_now,within_10us,within_50us,"
		  "within_100us,within_200us,within_500us,within_1000us,within_5000us\n"
		  "halt_poll,100,2,5000,20000,1,1,2,2,2,2,2,2\n"
		  "# lost: 3 pending interrupts past the vCPU's slots\n"
		  "# posted: 4 interrupts KVM posted to a vCPU in guest mode (APICv/AVIC): taken "
		  "with no exit, not timed (the rows' posted, not in their count)\n");
	free(out);
	out = NULL;
	/* JSON: each row's posted, and the total. */
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	CHECK_EQ_U64(wake_print(&s, OUT_JSON, 20000, f), 0);
	fclose(f);
	CHECK(strstr(out, "{\"kind\":\"wake\",\"pid\":100,\"vcpu\":0,\"source\":\"msi\","
		      "\"vector\":66,\"count\":0,\"posted\":1,\"sum_ns\":0,") != NULL);
	CHECK(strstr(out, "\"source\":\"msi\",\"vector\":65,\"count\":2,\"posted\":3,"
		      "\"sum_ns\":4000,") != NULL);
	CHECK(strstr(out, ",\"posted\":4}\n") != NULL);
	free(out);
	out = NULL;
	/* The table: POSTED beside COUNT. */
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	CHECK_EQ_U64(wake_print(&s, OUT_TABLE, 20000, f), 0);
	fclose(f);
	CHECK(strstr(out, "PID      VCPU SOURCE   VEC     COUNT    POSTED     AVG_NS") != NULL);
	CHECK(strstr(out, "100         0 msi     0x42         0         1          0") != NULL);
	CHECK(strstr(out, "100         1 msi     0x41         2         3       2000") != NULL);
	free(out);
	out = NULL;
	/* A recording of format 1.8 kept no posted interrupt: no total said, not "0". */
	s.posted_known = false;
	f = open_memstream(&out, &len);
	if (!f)
		abort();
	CHECK_EQ_U64(wake_print(&s, OUT_JSON, 20000, f), 0);
	fclose(f);
	CHECK(strstr(out, "},\"posted\":") == NULL);
	free(out);
	wake_snapshot_free(&s);
}

static void test_at_most(void)
{
	__u64 h[NR_BUCKETS] = {};

	put(h, 35000);
	/* The bucket counts from its low end, 32768: within 1/8 of the value. */
	CHECK_EQ_U64(wake_hist_at_most(h, 32767), 0);
	CHECK_EQ_U64(wake_hist_at_most(h, 32768), 1);
	CHECK_EQ_U64(wake_hist_percentile(h, 35000, 50), 34816);
	CHECK_EQ_U64(wake_hist_percentile(h, 33000, 50), 33000);
}

int main(void)
{
	test_csv();
	test_at_most();
	CHECK_DONE("test_wake_output");
}
