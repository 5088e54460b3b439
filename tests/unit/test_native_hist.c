// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's log-linear buckets merged into native histogram buckets of schema 0 in ns
 * (src/serve/native_hist.h): each kernel bucket [lo, hi) lies whole in native bucket i, which
 * runs from 2^(i-1) to 2^i ns (lo >= 2^(i-1), hi <= 2^i); bucket 0 (0 ns) is the zero bucket;
 * the overflow bucket goes to the last one; no count is lost or split.
 */
#include "check.h"
#include "hist.h"
#include "native_hist.h"

static void test_slots(void)
{
	CHECK_EQ_U64(native_slot_of(0), 0);
	for (__u32 b = 1; b < NR_BUCKETS - 1; b++) {
		__u32 s = native_slot_of(b);

		CHECK(s >= 1 && s < NATIVE_SLOTS);
		CHECK(hist_bucket_low(b) >= 1ULL << (s - 1));
		CHECK(hist_bucket_high(b) <= 1ULL << s);
	}
	CHECK_EQ_U64(native_slot_of(NR_BUCKETS - 1), NATIVE_SLOTS - 1);
	/* A few by hand: 1 ns, 15 ns, 16 ns, 17 ns (bucket [16, 18)), 2^20 ns, 2^36 + 1 ns. */
	CHECK_EQ_U64(native_slot_of(hist_bucket(1)), 1);
	CHECK_EQ_U64(native_slot_of(hist_bucket(15)), 4);
	CHECK_EQ_U64(native_slot_of(hist_bucket(16)), 5);
	CHECK_EQ_U64(native_slot_of(hist_bucket(17)), 5);
	CHECK_EQ_U64(native_slot_of(hist_bucket(31)), 5);
	CHECK_EQ_U64(native_slot_of(hist_bucket(1ULL << 20)), 21);
	CHECK_EQ_U64(native_slot_of(hist_bucket((1ULL << 36) + 1)), 37);
	CHECK_EQ_U64(native_slot_of(hist_bucket(1ULL << 40)), 38);
}

static void test_merge(void)
{
	__u64 hist[NR_BUCKETS] = {}, out[NATIVE_SLOTS], total = 0, sum = 0;

	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		hist[b] = b * 3 + 1;
		total += hist[b];
	}
	native_hist_of(hist, out);
	for (__u32 s = 0; s < NATIVE_SLOTS; s++)
		sum += out[s];
	CHECK_EQ_U64(sum, total);
	CHECK_EQ_U64(out[0], hist[0]);
	/* 2^4 .. 2^5 - 1 ns: the eight kernel buckets from HIST_EXACT. */
	sum = 0;
	for (__u32 b = HIST_EXACT; b < HIST_EXACT + HIST_SUB; b++)
		sum += hist[b];
	CHECK_EQ_U64(out[5], sum);
	CHECK_EQ_U64(out[NATIVE_SLOTS - 1], hist[NR_BUCKETS - 1]);
}

int main(void)
{
	test_slots();
	test_merge();
	CHECK_DONE("test_native_hist");
}
