// SPDX-License-Identifier: GPL-2.0
/*
 * serve's sample (live/tracker.c with coarse rows since the start): the cells' deltas summed
 * straight into each row's runs (bucket_run_advance), and cells none of whose exits began or
 * completed since the last look not read at all. Against the test's own tally of every exit it
 * makes, bucket by bucket, summed into the same runs: random cells move at each sample, most
 * stay idle, values cross the 1-, 2- and 4-byte widths and wrap past 2^32, runs widen below and
 * above, and some samples close an epoch the cells' interval extremes are not of (the delta's
 * own buckets then). A bucket counted in a copy that missed its exit's count (the kernel adds
 * the count first) is counted once that cell moves again, not dropped.
 */
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "tracker.h"
#include "expo_resolution.h"
#include "../xorshift64.h"

#define CELLS	24
#define SAMPLES	300

struct src {
	struct cell cells[CELLS];
	__u64 tally[CELLS][NR_BUCKETS];		/* exits made, in 64 bits */
	__u64 count[CELLS], total[CELLS];
};

static __u32 src_nr(void *ctx)
{
	(void)ctx;
	return CELLS;
}

static __u64 rng = XORSHIFT64_SEED;

/* n exits of cell i in bucket b, as the kernel counts them (buckets modulo 2^32). */
static void exits(struct src *s, __u32 i, __u32 b, __u64 n, __u32 epoch)
{
	struct cell *c = &s->cells[i];

	c->started += n;
	c->count += n;
	c->total_ns += n * 3;
	c->hist[b] += (__u32)n;
	c->iv_epoch = epoch;
	c->iv_min_ns = 1;
	c->iv_max_ns = 2;
	s->tally[i][b] += n;
	s->count[i] += n;
	s->total[i] += n * 3;
}

/* Cell i's coarse row against the tally: its counts, and each run the sum of its buckets. */
static void check_row(struct tracker *t, const struct hist_coarse *m, struct src *s, __u32 i)
{
	const struct cell_key *ck = &s->cells[i].key;
	struct row_key k = { .tgid = ck->tgid, .start = ck->proc_start, .vcpu = -1,
			     .isa = ck->isa, .reason = ck->reason };
	struct coarse_row *c = coarse_rows_get(&t->ccum, &k, NULL);
	__u64 runs[NR_BUCKETS] = {};

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ_U64(c->count, s->count[i]);
	CHECK_EQ_U64(c->completed, s->count[i]);
	CHECK_EQ_U64(c->total_ns, s->total[i]);
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		runs[m->slot[b]] += s->tally[i][b];
	for (__u32 r = 0; r < m->nr; r++) {
		if (c->hist[r] != runs[r])
			fprintf(stderr, "cell %u run %u: %llu, expected %llu\n", i, r,
				(unsigned long long)c->hist[r], (unsigned long long)runs[r]);
		CHECK_EQ_U64(c->hist[r], runs[r]);
	}
}

static void test_random(void)
{
	static struct src s;
	static struct hist_coarse m;
	struct cell_source cs = { .cells = s.cells, .nr_cells = src_nr, .ctx = &s };
	struct expo_buckets bk;
	struct tracker t;
	__u32 epoch = 0, widths = 0;

	expo_buckets_default(&bk);
	expo_resolution(&bk, &m);
	for (__u32 i = 0; i < CELLS; i++) {
		struct cell_key *k = &s.cells[i].key;

		k->tgid = 100 + i / 4;
		k->tid = 1000 + i;
		k->vcpu = 0;
		k->isa = VMEXIT_ISA_VMX;
		k->reason = i % 4;
		k->ready = 1;
		s.cells[i].min_ns = ~0ULL;
	}
	CHECK(tracker_init(&t, &cs, BY_VM, -1, false) == 0);
	tracker_coarse_cum(&t, &m);
	for (int n = 0; n < SAMPLES; n++) {
		/* A quarter of the cells move, a few buckets each, near the cell's usual ones. */
		for (__u32 i = 0; i < CELLS; i++) {
			if (xorshift64(&rng) % 4)
				continue;
			/* At most 5 x 2^29 a bucket between samples: the kernel's 32-bit bucket
			 * wraps past 2^32 over the run, never twice between two looks. */
			for (int j = 0; j < 1 + (int)(xorshift64(&rng) % 5); j++) {
				__u32 b = (i * 11 + xorshift64(&rng) % 40) % NR_BUCKETS;
				__u64 big = xorshift64(&rng) % 50 ? 0 : 1ULL << (8 + xorshift64(&rng) % 22);

				/* Every 8th cell a few exits a bucket: 1-byte values. */
				exits(&s, i, b, i % 8 == 7 ? 1 : 1 + xorshift64(&rng) % 300 + big,
				      epoch);
			}
		}
		/* 3 x 10^9 twice into one bucket: past 2^32, wrapped as the kernel's. */
		if (n == 100 || n == 101)
			exits(&s, 5, 55, 3000000000ULL, epoch);
		/* A bucket ahead of its count: seen in this copy, counted at its next move. */
		if (n % 37 == 5) {
			s.cells[n % CELLS].hist[3] += 1;
			s.tally[n % CELLS][3] += 1;
			s.count[n % CELLS] += 1;
			s.total[n % CELLS] += 3;
		}
		/* Every 7th sample closes an epoch the cells' extremes are not of. */
		CHECK(tracker_sample(&t, n % 7 ? epoch : epoch + 1000, NULL) == 0);
		if (n % 37 == 5) {
			s.cells[n % CELLS].started += 1;
			s.cells[n % CELLS].count += 1;
			s.cells[n % CELLS].total_ns += 3;
		}
		epoch++;
	}
	/* Every cell moves once more: what was ahead of its count is in. */
	for (__u32 i = 0; i < CELLS; i++)
		exits(&s, i, 0, 1, epoch);
	CHECK(tracker_sample(&t, epoch, NULL) == 0);
	for (__u32 i = 0; i < CELLS; i++) {
		check_row(&t, &m, &s, i);
		widths |= 1u << t.prev[i].hist.shift;
	}
	CHECK_EQ_U64(widths, 7);	/* runs of 1-, 2- and 4-byte values all met */
	tracker_free(&t);
}

/*
 * The other order: a look between the kernel's count of an exit and its bucket (lat_add()
 * counts first) has the count only; the cell then stays idle. Its bucket must still come in at
 * the next look, not wait for an exit that may never come (a guest gone, an idle reason).
 */
static void test_count_ahead(void)
{
	static struct src s;
	static struct hist_coarse m;
	struct cell_source cs = { .cells = s.cells, .nr_cells = src_nr, .ctx = &s };
	struct expo_buckets bk;
	struct tracker t;

	expo_buckets_default(&bk);
	expo_resolution(&bk, &m);
	for (__u32 i = 0; i < CELLS; i++) {
		s.cells[i].key = (struct cell_key){ .tgid = 200, .tid = 2000 + i, .vcpu = 0,
						     .isa = VMEXIT_ISA_SVM, .reason = i, .ready = 1 };
		s.cells[i].min_ns = ~0ULL;
	}
	CHECK(tracker_init(&t, &cs, BY_VM, -1, false) == 0);
	tracker_coarse_cum(&t, &m);
	exits(&s, 3, 7, 5, 1);
	CHECK(tracker_sample(&t, 1, NULL) == 0);
	/* One more exit of cell 3: counted, its bucket not yet, when the sampler looks. */
	exits(&s, 3, 9, 1, 1);
	s.cells[3].hist[9] -= 1;
	CHECK(tracker_sample(&t, 1, NULL) == 0);
	s.cells[3].hist[9] += 1;
	/* Idle from now on: two looks at unchanged counters. */
	CHECK(tracker_sample(&t, 1, NULL) == 0);
	CHECK(tracker_sample(&t, 1, NULL) == 0);
	check_row(&t, &m, &s, 3);
	tracker_free(&t);
}

int main(void)
{
	test_random();
	test_count_ahead();
	CHECK_DONE("coarse_sample");
}
