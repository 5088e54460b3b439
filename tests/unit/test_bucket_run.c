// SPDX-License-Identifier: GPL-2.0
/*
 * A cell's run of buckets at the fewest bytes a value (live/bucket_run.h): every value stored
 * reads back as the kernel's, and every delta taken from it is the exits added, whatever the
 * width it was stored at, across the widths' edges (255/256, 65,535/65,536), past 2^32 (the
 * kernel's wrap) and when the run widens below and above. The expected values are the exits the
 * test adds, kept in 64 bits beside the 32-bit cell.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "bucket_run.h"
#include "../xorshift64.h"

/* A cell's buckets (32-bit, as the kernel's) and the test's own 64-bit tally of them. */
struct cell_hist {
	__u32 now[NR_BUCKETS];
	__u64 added[NR_BUCKETS];	/* since the last store */
};

/* One look, as the tracker's: fit, the deltas against what was stored, then store. */
static void look(struct bucket_run *r, struct cell_hist *c)
{
	__u64 d[NR_BUCKETS];

	CHECK(bucket_run_fit(r, c->now) == 0);
	/* Outside the run the kernel's buckets were zero: the delta is the value itself. */
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		d[b] = c->now[b];
	bucket_run_sub(r, c->now, d);
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (d[b] != (__u32)c->added[b])
			fprintf(stderr, "bucket %u: delta %llu, added %llu\n", b,
				(unsigned long long)d[b], (unsigned long long)c->added[b]);
		CHECK_EQ_U64(d[b], (__u32)c->added[b]);
	}
	bucket_run_store(r, c->now);
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (r->n && b >= r->lo && b < (__u32)r->lo + r->n)
			CHECK_EQ_U64(bucket_run_get(r, b - r->lo), c->now[b]);
		else
			CHECK_EQ_U64(c->now[b], 0);	/* all that counted is in the run */
	}
	memset(c->added, 0, sizeof(c->added));
}

static void add(struct cell_hist *c, __u32 b, __u64 n)
{
	c->now[b] += (__u32)n;
	c->added[b] += n;
}

/* The edges, one bucket at a time: the width follows the largest value, never back. */
static void test_edges(void)
{
	static struct cell_hist c;
	struct bucket_run r = {};

	memset(&c, 0, sizeof(c));
	look(&r, &c);				/* nothing counted: nothing kept */
	CHECK(r.v == NULL && r.n == 0);
	add(&c, 40, 255);
	look(&r, &c);
	CHECK_EQ_U64(r.shift, 0);
	CHECK_EQ_U64(r.lo, 40);
	CHECK_EQ_U64(r.n, 1);
	add(&c, 40, 1);				/* 256: inside the run, wider values */
	look(&r, &c);
	CHECK_EQ_U64(r.shift, 1);
	add(&c, 3, 7);				/* wider below, 2 bytes kept */
	add(&c, 40, 65535 - 256);		/* 65,535 */
	look(&r, &c);
	CHECK_EQ_U64(r.shift, 1);
	CHECK_EQ_U64(r.lo, 3);
	CHECK_EQ_U64(r.n, 38);
	add(&c, 40, 1);				/* 65,536 */
	look(&r, &c);
	CHECK_EQ_U64(r.shift, 2);
	/* Past 2^32: the kernel's bucket wraps to 4. */
	add(&c, 40, 0xffffffffull - 65536 + 5);
	add(&c, NR_BUCKETS - 1, 1);		/* and the run widens above */
	look(&r, &c);
	CHECK_EQ_U64(c.now[40], 4);
	CHECK_EQ_U64(r.shift, 2);
	CHECK_EQ_U64(r.n, NR_BUCKETS - 3);
	add(&c, 3, 1);
	look(&r, &c);				/* small values stay 4 bytes: never narrowed */
	CHECK_EQ_U64(r.shift, 2);
	bucket_run_free(&r);
	CHECK(r.v == NULL && r.n == 0);
}

/* Random exits over many looks: few per bucket first, then thousands, then millions. */
static void test_random(void)
{
	static struct cell_hist c;
	struct bucket_run r = {};
	__u64 seed = XORSHIFT64_SEED;
	__u8 widths = 0;

	memset(&c, 0, sizeof(c));
	for (int i = 0; i < 3000; i++) {
		__u32 adds = 1 + xorshift64(&seed) % 8;
		__u64 most = i < 1000 ? 3 : i < 2000 ? 200 : 3000000;

		for (__u32 k = 0; k < adds; k++) {
			/* Clustered around a middle that drifts, as one thread's exits are. */
			__u32 b = (i / 40 + xorshift64(&seed) % 24) % NR_BUCKETS;

			add(&c, b, xorshift64(&seed) % (most + 1));
		}
		look(&r, &c);
		widths |= 1u << r.shift;
	}
	CHECK_EQ_U64(widths, 7);		/* all three widths were taken */
	bucket_run_free(&r);
}

int main(void)
{
	test_edges();
	test_random();
	CHECK_DONE("bucket_run");
}
