// SPDX-License-Identifier: GPL-2.0
/*
 * The log-linear histogram of include/hist.h (shared by the BPF handlers and userspace) and
 * the percentiles src/live/tracker.c reads from it, against values worked out from the definition:
 * below HIST_EXACT (16) every value is its own bucket; from 2^e (e >= 4) on, each power of two
 * is cut into 8 buckets of 2^(e-3), bucket 16 + (e - 4) * 8 + sub; everything from 2^37 up
 * goes to the last bucket.
 */
#include <stdlib.h>
#include "check.h"
#include "hist.h"
#include "tracker.h"
#include "../xorshift64.h"

static void test_layout(void)
{
	/* 16 exact buckets, 33 powers of two (2^4 .. 2^36) of 8, one overflow bucket. */
	CHECK_EQ_U64(HIST_EXACT, 16);
	CHECK_EQ_U64(NR_BUCKETS, 16 + 33 * 8 + 1);
	CHECK_EQ_U64(HIST_SLOTS, 282);
	CHECK_EQ_U64(sizeof(struct cell) % 8, 0);
}

static __u32 log2_slow(__u64 v)
{
	__u32 r = 0;

	while (v >>= 1)
		r++;
	return r;
}

static void test_log2(void)
{
	for (__u32 e = 0; e < 64; e++) {
		__u64 p = 1ULL << e;

		CHECK_EQ_U64(hist_log2(p), e);
		if (p > 1)
			CHECK_EQ_U64(hist_log2(p - 1), e - 1);
		CHECK_EQ_U64(hist_log2(p | (p >> 1)), e);
		CHECK_EQ_U64(hist_log2(p + p / 3), log2_slow(p + p / 3));
	}
	CHECK_EQ_U64(hist_log2(~0ULL), 63);
}

static void test_exact_range(void)
{
	for (__u64 v = 0; v < 16; v++) {
		CHECK_EQ_U64(hist_bucket(v), v);
		CHECK_EQ_U64(hist_bucket_low(v), v);
		CHECK_EQ_U64(hist_bucket_high(v), v + 1);
	}
}

static void test_hand_values(void)
{
	/* 16..31 (e = 4): buckets of 2; 16, 17 -> 16; 18 -> 17; 31 -> 23. */
	CHECK_EQ_U64(hist_bucket(16), 16);
	CHECK_EQ_U64(hist_bucket(17), 16);
	CHECK_EQ_U64(hist_bucket(18), 17);
	CHECK_EQ_U64(hist_bucket(31), 23);
	/* 32..63 (e = 5): buckets of 4 from 24; 35 -> 24, 36 -> 25. */
	CHECK_EQ_U64(hist_bucket(32), 24);
	CHECK_EQ_U64(hist_bucket(35), 24);
	CHECK_EQ_U64(hist_bucket(36), 25);
	/* 1000: e = 9 (512..1023), buckets of 64, sub = (1000 >> 6) & 7 = 15 & 7 = 7:
	 * 16 + 5 * 8 + 7 = 63, covering [512 + 7 * 64, 1024) = [960, 1024). */
	CHECK_EQ_U64(hist_bucket(1000), 63);
	CHECK_EQ_U64(hist_bucket_low(63), 960);
	CHECK_EQ_U64(hist_bucket_high(63), 1024);
	CHECK_EQ_U64(hist_bucket(959), 62);
	CHECK_EQ_U64(hist_bucket(1024), 64);
	/* 100000: e = 16, sub = (100000 >> 13) & 7 = 12 & 7 = 4: 16 + 96 + 4 = 116,
	 * [65536 + 4 * 8192, + 8192) = [98304, 106496). */
	CHECK_EQ_U64(hist_bucket(100000), 116);
	CHECK_EQ_U64(hist_bucket_low(116), 98304);
	CHECK_EQ_U64(hist_bucket_high(116), 106496);
	/* 1 s = 10^9 ns: e = 29 (2^29 = 536870912), sub = (10^9 >> 26) & 7 = 14 & 7 = 6:
	 * 16 + 200 + 6 = 222, [2^29 + 6 * 2^26, + 2^26) = [939524096, 1006632960). */
	CHECK_EQ_U64(hist_bucket(1000000000ULL), 222);
	CHECK_EQ_U64(hist_bucket_low(222), 939524096ULL);
	CHECK_EQ_U64(hist_bucket_high(222), 1006632960ULL);
}

static void test_powers_of_two(void)
{
	for (__u32 e = 4; e < 37; e++) {
		__u64 p = 1ULL << e;
		__u32 first = 16 + (e - 4) * 8;

		CHECK_EQ_U64(hist_bucket(p), first);
		CHECK_EQ_U64(hist_bucket(p - 1), first - 1);
		CHECK_EQ_U64(hist_bucket(p + 1), first);
		CHECK_EQ_U64(hist_bucket_low(first), p);
		CHECK_EQ_U64(hist_bucket_high(first - 1), p);
		/* The power's last bucket: [2^e + 7 * 2^(e-3), 2^(e+1)). */
		CHECK_EQ_U64(hist_bucket(2 * p - 1), first + 7);
		CHECK_EQ_U64(hist_bucket_low(first + 7), p + 7 * (p >> 3));
	}
}

static void test_overflow(void)
{
	const __u64 top = 1ULL << 37;	/* 137.4 s */

	CHECK_EQ_U64(hist_bucket(top - 1), NR_BUCKETS - 2);
	CHECK_EQ_U64(hist_bucket(top), NR_BUCKETS - 1);
	CHECK_EQ_U64(hist_bucket(top * 1000), NR_BUCKETS - 1);
	CHECK_EQ_U64(hist_bucket(~0ULL), NR_BUCKETS - 1);
	CHECK_EQ_U64(hist_bucket_low(NR_BUCKETS - 1), top);
	CHECK_EQ_U64(hist_bucket_high(NR_BUCKETS - 1), ~0ULL);
	CHECK_EQ_U64(hist_bucket_high(NR_BUCKETS - 2), top);
}

/* Every value of a range: in its bucket, buckets contiguous, width at most 1/8 of the value. */
static void check_value(__u64 v, __u32 *prev_b, bool first, unsigned long *bad)
{
	__u32 b = hist_bucket(v);
	__u64 lo = hist_bucket_low(b), hi = hist_bucket_high(b), mid;

	if (b >= NR_BUCKETS || lo > v || (b < NR_BUCKETS - 1 && v >= hi)) {
		if (!(*bad)++)
			fprintf(stderr, "%llu: bucket %u [%llu, %llu)\n", (unsigned long long)v, b,
				(unsigned long long)lo, (unsigned long long)hi);
		return;
	}
	if (!first && b != *prev_b && b != *prev_b + 1) {
		if (!(*bad)++)
			fprintf(stderr, "%llu: bucket %u after %u\n", (unsigned long long)v, b,
				*prev_b);
	}
	*prev_b = b;
	if (v < 16 || b == NR_BUCKETS - 1)
		return;
	/* Width <= lo / 8 <= v / 8 (12.5 %); the middle is within width / 2 <= v / 16. */
	mid = lo + (hi - lo) / 2;
	if ((hi - lo) * 8 > lo || (mid > v ? mid - v : v - mid) * 16 > v) {
		if (!(*bad)++)
			fprintf(stderr, "%llu: bucket %u [%llu, %llu) too wide\n",
				(unsigned long long)v, b, (unsigned long long)lo,
				(unsigned long long)hi);
	}
}

static void test_exhaustive(void)
{
	unsigned long bad = 0;
	__u32 prev = 0;
	__u64 x = 88172645463325252ULL;

	/* Every value up to 2^22 (4.2 ms), then every value around each power of two. */
	for (__u64 v = 0; v <= 1ULL << 22; v++)
		check_value(v, &prev, v == 0, &bad);
	for (__u32 e = 22; e < 40; e++) {
		__u64 p = 1ULL << e;

		for (__u64 v = p - 4096; v < p + 4096; v++)
			check_value(v, &prev, v == p - 4096, &bad);
	}
	/* And a million pseudo-random values over every magnitude (xorshift64). */
	for (int i = 0; i < 1000000; i++) {
		xorshift64(&x);
		check_value(x >> (x & 63), &prev, true, &bad);
	}
	CHECK_EQ_U64(bad, 0);
	/* Each bucket's low bound lands in the bucket itself: low is a true inverse. */
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		CHECK_EQ_U64(hist_bucket(hist_bucket_low(b)), b);
}

static void row_set(struct row *r, __u64 min, __u64 max)
{
	memset(r, 0, sizeof(*r));
	r->min_ns = min;
	r->max_ns = max;
}

static void test_percentiles(void)
{
	struct row *r = calloc(1, sizeof(*r));

	if (!r) {
		CHECK(0);
		return;
	}
	/* Empty: 0. */
	row_set(r, ~0ULL, 0);
	CHECK_EQ_U64(row_percentile(r, 50), 0);
	CHECK_EQ_U64(row_hist_total(r), 0);

	/* Ten values of 7 ns: exact bucket, every percentile is 7. */
	row_set(r, 7, 7);
	r->hist[7] = 10;
	CHECK_EQ_U64(row_percentile(r, 0), 7);
	CHECK_EQ_U64(row_percentile(r, 50), 7);
	CHECK_EQ_U64(row_percentile(r, 100), 7);

	/* 90 values in bucket 63 [960, 1024) and 10 in bucket 116 [98304, 106496), min 970,
	 * max 105000. Rank = ceil(p% of 100): p50 -> 50, p90 -> 90: bucket 63, middle 992;
	 * p90.5 -> 91 and p99 -> 99: bucket 116, middle 98304 + 4096 = 102400. */
	row_set(r, 970, 105000);
	r->hist[63] = 90;
	r->hist[116] = 10;
	CHECK_EQ_U64(row_hist_total(r), 100);
	CHECK_EQ_U64(row_percentile(r, 50), 992);
	CHECK_EQ_U64(row_percentile(r, 90), 992);
	CHECK_EQ_U64(row_percentile(r, 90.5), 102400);
	CHECK_EQ_U64(row_percentile(r, 99), 102400);
	CHECK_EQ_U64(row_percentile(r, 100), 102400);
	/* Clamped to [min, max]: a max of 100000 below the bucket middle wins; so does a min of
	 * 1000 above the middle of 992. */
	r->max_ns = 100000;
	CHECK_EQ_U64(row_percentile(r, 99), 100000);
	r->min_ns = 1000;
	CHECK_EQ_U64(row_percentile(r, 10), 1000);

	/* Three values in buckets 5, 6, 7: p33.4 -> rank ceil(1.002) = 2 -> 6; p33 -> rank
	 * ceil(0.99) = 1 -> 5; p0 -> rank 1 -> 5. */
	row_set(r, 5, 7);
	r->hist[5] = r->hist[6] = r->hist[7] = 1;
	CHECK_EQ_U64(row_percentile(r, 33.4), 6);
	CHECK_EQ_U64(row_percentile(r, 33), 5);
	CHECK_EQ_U64(row_percentile(r, 0), 5);
	CHECK_EQ_U64(row_percentile(r, 66.7), 7);

	/* The overflow bucket has no middle: the max is the answer (a 200 s exit). */
	row_set(r, 1000, 200000000000ULL);
	r->hist[63] = 1;
	r->hist[NR_BUCKETS - 1] = 1;
	CHECK_EQ_U64(row_percentile(r, 50), 1000);
	CHECK_EQ_U64(row_percentile(r, 100), 200000000000ULL);
	free(r);
}

/*
 * The row table the percentiles are read from: after rows_sort() reorders it, it is reindexed
 * from scratch; with more rows than the initial index (256) the reindex must still terminate
 * and every key must find its own row again.
 */
static void test_row_table_reindex(void)
{
	const __u32 n = 3000;	/* 100 VMs x 30 reasons, --by vm */
	struct row_table rt;
	struct row *r;

	row_table_init(&rt);
	for (__u32 i = 0; i < n; i++) {
		struct row_key k = { .tgid = 1000 + i / 30, .vcpu = -1, .isa = 1, .reason = i % 30 };

		r = row_table_get(&rt, &k);
		CHECK(r != NULL);
		if (r)
			r->count = i;
	}
	CHECK_EQ_U64(rt.nr, n);
	/* Reverse the order, as a sort might, then reindex. */
	for (__u32 i = 0; i < n / 2; i++) {
		struct row tmp = rt.rows[i];

		rt.rows[i] = rt.rows[n - 1 - i];
		rt.rows[n - 1 - i] = tmp;
	}
	CHECK(!row_table_reindex(&rt));
	CHECK(rt.index.cap >= 2 * n);
	for (__u32 i = 0; i < n; i++) {
		struct row_key k = { .tgid = 1000 + i / 30, .vcpu = -1, .isa = 1, .reason = i % 30 };

		r = row_table_get(&rt, &k);
		CHECK(r && r->count == i);
	}
	CHECK_EQ_U64(rt.nr, n);
	row_table_free(&rt);
}

int main(void)
{
	test_layout();
	test_log2();
	test_exact_range();
	test_hand_values();
	test_powers_of_two();
	test_overflow();
	test_exhaustive();
	test_percentiles();
	test_row_table_reindex();
	CHECK_DONE("test_hist");
}
