// SPDX-License-Identifier: GPL-2.0
/*
 * The tracker keeps of each cell only the run of buckets that has counted (live/cell_seen.h):
 * deltas stay exact when the run widens below and above, when a bucket inside it needs more
 * bytes (past 255 and 65,535) or wraps past 2^32, when a cell is handed back and reused by
 * another thread, and when the cells come through an at() hook that can fail (the kernel map's
 * window): nothing is counted twice or lost across the failed sample. Expected values are the
 * exits the test makes, bucket by bucket.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tracker.h"

#define NR	3

struct src {
	struct cell cells[NR];
	__u32 nr;
	int fail_at;		/* at() of this cell fails once (-1: never) */
	__u32 released;
};

static __u32 src_nr(void *ctx)
{
	return ((struct src *)ctx)->nr;
}

static const struct cell *src_at(void *ctx, __u32 i)
{
	struct src *s = ctx;

	if ((int)i == s->fail_at) {
		s->fail_at = -1;
		return NULL;
	}
	return &s->cells[i];
}

static void src_release(void *ctx, __u32 i)
{
	struct src *s = ctx;

	memset(&s->cells[i], 0, sizeof(s->cells[i]));
	s->released++;
}

static void key(struct src *s, __u32 i, __u32 tgid, __u32 reason)
{
	struct cell *c = &s->cells[i];

	memset(c, 0, sizeof(*c));
	c->key.tgid = tgid;
	c->key.tid = tgid + i;
	c->key.vcpu = (__s32)i;
	c->key.isa = VMEXIT_ISA_VMX;
	c->key.reason = reason;
	c->key.ready = 1;
	c->min_ns = ~0ULL;
}

/* n exits counted in bucket b of cell i (the bucket's value modulo 2^32, as the kernel's). */
static void exits(struct src *s, __u32 i, __u32 b, __u64 n)
{
	struct cell *c = &s->cells[i];

	c->started += n;
	c->count += n;
	c->total_ns += n * 10;
	c->hist[b] += (__u32)n;
}

static const struct row *row_of(struct tracker *t, __u32 tgid, __u32 reason)
{
	struct row_key k = { .tgid = tgid, .vcpu = -1, .isa = VMEXIT_ISA_VMX, .reason = reason };
	__u32 *at = row_index_find(&t->cum.index, &k);

	return at ? &t->cum.rows[*at] : NULL;
}

/* The row's buckets equal want[] (NR_BUCKETS of them), and its count their sum. */
static void check_hist(const struct row *r, const __u64 *want)
{
	__u64 sum = 0;

	CHECK(r != NULL);
	if (!r)
		return;
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (r->hist[b] != want[b])
			fprintf(stderr, "bucket %u: %llu, expected %llu\n", b,
				(unsigned long long)r->hist[b], (unsigned long long)want[b]);
		CHECK_EQ_U64(r->hist[b], want[b]);
		sum += want[b];
	}
	CHECK_EQ_U64(r->count, sum);
}

static void test_runs(bool through_at)
{
	static struct src s;
	struct cell_source cs = { .nr_cells = src_nr, .release = src_release, .ctx = &s };
	struct tracker t;
	__u64 *want = calloc(NR_BUCKETS, sizeof(*want)), *want2 = calloc(NR_BUCKETS, sizeof(*want));

	memset(&s, 0, sizeof(s));
	s.fail_at = -1;
	if (through_at)
		cs.at = src_at;
	else
		cs.cells = s.cells;
	CHECK(tracker_init(&t, &cs, BY_VM, -1, false) == 0);
	key(&s, 0, 100, 1);
	key(&s, 1, 200, 1);
	s.nr = 2;
	/* A run in the middle. */
	exits(&s, 0, 40, 3);
	want[40] += 3;
	CHECK(tracker_sample(&t, 0, NULL) == 0);
	check_hist(row_of(&t, 100, 1), want);
	/* Wider on both sides, and the bucket inside moves on. */
	exits(&s, 0, 2, 1);
	exits(&s, 0, NR_BUCKETS - 1, 5);
	exits(&s, 0, 40, 2);
	want[2] += 1;
	want[NR_BUCKETS - 1] += 5;
	want[40] += 2;
	/* Cell 1: one bucket close to 2^32, then past it. */
	exits(&s, 1, 100, 0xfffffff0ull);
	want2[100] += 0xfffffff0ull;
	CHECK(tracker_sample(&t, 1, NULL) == 0);
	check_hist(row_of(&t, 100, 1), want);
	check_hist(row_of(&t, 200, 1), want2);
	exits(&s, 1, 100, 0x20);	/* the kernel's bucket wraps to 0x10 */
	exits(&s, 1, 99, 4);		/* and the run widens below */
	want2[100] += 0x20;
	want2[99] += 4;
	exits(&s, 0, 41, 7);
	want[41] += 7;
	exits(&s, 0, 40, 300);		/* past 255 inside the run: 2 bytes a bucket */
	want[40] += 300;
	if (through_at) {
		/* Cell 1 cannot be reached: the sample fails; the next counts it all, once. */
		s.fail_at = 1;
		CHECK(tracker_sample(&t, 2, NULL) != 0);
	}
	CHECK(tracker_sample(&t, 3, NULL) == 0);
	check_hist(row_of(&t, 100, 1), want);
	check_hist(row_of(&t, 200, 1), want2);
	CHECK(tracker_sample(&t, 4, NULL) == 0);	/* nothing new: nothing added */
	check_hist(row_of(&t, 100, 1), want);
	check_hist(row_of(&t, 200, 1), want2);
	exits(&s, 0, 40, 70000);	/* past 65,535: 4 bytes */
	want[40] += 70000;
	CHECK(tracker_sample(&t, 4, NULL) == 0);
	check_hist(row_of(&t, 100, 1), want);
	/* Cell 0's thread exits after 1 more exit; the cell is reused by guest 300 whose exits
	 * are in a lower bucket only: the old run must not be taken from. */
	exits(&s, 0, 41, 1);
	want[41] += 1;
	s.cells[0].ended = 1;
	CHECK(tracker_sample(&t, 5, NULL) == 0);
	CHECK_EQ_U64(s.released, 1);
	check_hist(row_of(&t, 100, 1), want);
	key(&s, 0, 300, 1);
	exits(&s, 0, 41, 2);
	exits(&s, 0, 5, 9);
	CHECK(tracker_sample(&t, 6, NULL) == 0);
	memset(want2, 0, NR_BUCKETS * sizeof(*want2));
	want2[41] = 2;
	want2[5] = 9;
	check_hist(row_of(&t, 300, 1), want2);
	check_hist(row_of(&t, 100, 1), want);
	tracker_free(&t);
	free(want);
	free(want2);
}

int main(void)
{
	test_runs(false);
	test_runs(true);
	CHECK_DONE("cell_seen");
}
