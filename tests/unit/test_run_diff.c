// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit diff's statistics and ranking (rate_tests.h, run_diff.h) on runs read back through
 * run_load() from recordings and stat --json files of simulated workloads (sim_runs.h):
 *  - the tests' p-values against values worked out by hand;
 *  - 20 pairs of identical runs (the same workload, other seeds): the number with any
 *    significant row, which --alpha 0.01 (family-wise) keeps at about 0.2 in 20;
 *  - 20 % more MMIO exits: MMIO ranked first and significant (a rate change);
 *  - IO exits handled 50 us slower: IO ranked first, its latency significant;
 *  - a recording and the stat --json of the same exits give the same answer;
 *  - --per-run: one job run 1.4 times slower as a whole (the same exits over a longer span) is
 *    a rate change per second of guest time, and no change per run; 20 % more MMIO exits in
 *    the slow run is found per run all the same.
 */
#include <math.h>
#include <unistd.h>
#include "check.h"
#include "rate_tests.h"
#include "reasons.h"
#include "run_diff.h"
#include "run_load.h"
#include "sim_runs.h"

static char dir[] = "/tmp/test_run_diff-XXXXXX";

#define PORT(p)	{ .key = (p), .kind = KEY_PORT, .dir = KEY_DIR_OUT }
#define ADDR(a)	{ .key = (a), .kind = KEY_MMIO, .dir = KEY_DIR_WRITE }

/* The bundled guest's mix, per vCPU: --io, --mmio and --hlt exits to the VMM. */
static const struct sim_kind base[] = {
	{ VMEXIT_ISA_USER, 2, PORT(0xe9), 3000, 10000, 0, 0.02, NULL },
	{ VMEXIT_ISA_USER, 6, ADDR(0x10000000), 1000, 12000, 0, 0.02, NULL },
	{ VMEXIT_ISA_USER, 5, {}, 500, 8000, 0, 0.02, NULL },
};

static void sim_pair(const struct sim_kind *after, __u64 seed, const char *name, bool json)
{
	char a[256], b[256], ja[256], jb[256];
	struct sim_run r = { "sim", 2, 1.0, base, 3 };

	snprintf(b, sizeof(b), "%s/%s-before.vmexit", dir, name);
	snprintf(a, sizeof(a), "%s/%s-after.vmexit", dir, name);
	snprintf(jb, sizeof(jb), "%s/%s-before.json", dir, name);
	snprintf(ja, sizeof(ja), "%s/%s-after.json", dir, name);
	sim_write(&r, seed, b, json ? jb : NULL);
	r.kinds = after;
	sim_write(&r, seed * 7919 + 1, a, json ? ja : NULL);
}

static int diff_files_opts(const char *name, const char *ext, const struct diff_opts *o,
			   struct run_diff *d, struct run_profile p[2])
{
	char path[2][256], err[512];
	struct run_load_info info;

	snprintf(path[0], sizeof(path[0]), "%s/%s-before.%s", dir, name, ext);
	snprintf(path[1], sizeof(path[1]), "%s/%s-after.%s", dir, name, ext);
	for (int i = 0; i < 2; i++) {
		run_profile_init(&p[i], false);
		if (run_load(path[i], &p[i], &info, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			CHECK(0);
			return -1;
		}
	}
	CHECK(!run_diff_build(&p[0], &p[1], o, d));
	return 0;
}

static int diff_files(const char *name, const char *ext, double min_change, struct run_diff *d,
		      struct run_profile p[2])
{
	return diff_files_opts(name, ext, &(struct diff_opts){ 0.01, min_change, false }, d, p);
}

static void diff_done(struct run_diff *d, struct run_profile p[2])
{
	run_diff_free(d);
	run_profile_free(&p[0]);
	run_profile_free(&p[1]);
}

static void test_p_values(void)
{
	/* 0 before, 10 after, equal times: both tails of Binomial(10, 1/2), 2 / 2^10. */
	CHECK(fabs(rate_test_p(0, 1, 10, 1) - 2.0 / 1024) < 1e-12);
	CHECK(fabs(rate_test_p(5, 1, 5, 1) - 1) < 1e-12);
	/* Twice the time for after: 10 v 20 is no change. */
	CHECK(fabs(rate_test_p(10, 1, 20, 2) - 1) < 1e-9);
	/* The normal approximation above RATE_EXACT_MAX: 150000 v 150000 is no change, and
	 * 150000 v 152000 (z = 2000 / sqrt(300000 / 4) / 2 = 3.65) is p ~ 2.6e-4. */
	CHECK(rate_test_p(150000, 1, 150000, 1) > 0.99);
	CHECK(fabs(rate_test_p(150000, 1, 152000, 1) - 2.6e-4) < 0.3e-4);
	/* Chi-square's 95th and 99th percentiles, from its tables. */
	CHECK(fabs(chi2_sf(3.841459, 1) - 0.05) < 1e-6);
	CHECK(fabs(chi2_sf(9.210340, 2) - 0.01) < 1e-6);
	CHECK(fabs(chi2_sf(30.577914, 15) - 0.01) < 1e-6);
	{
		__u64 h1[4] = { 100, 200, 300, 50 }, h2[4] = { 100, 200, 300, 50 };
		__u64 h3[4] = { 200, 200, 200, 50 };

		CHECK(hist_test_p(h1, h2, 4) > 0.999);
		CHECK(hist_test_p(h1, h3, 4) < 1e-6);
	}
	{
		/* Holm: 0.001 <= 0.05/3, 0.02 <= 0.05/2, 0.04 <= 0.05/1: all three. */
		double p[3] = { 0.04, 0.001, 0.02 }, q[3] = { 0.04, 0.001, 0.03 };
		unsigned char rej[3];

		CHECK(!holm_reject(p, 3, 0.05, rej));
		CHECK(rej[0] && rej[1] && rej[2]);
		/* 0.03 > 0.05/2 stops there: only 0.001. */
		CHECK(!holm_reject(q, 3, 0.05, rej));
		CHECK(!rej[0] && rej[1] && !rej[2]);
	}
}

/* Identical workloads: how many of 20 pairs show any significant row. */
static void test_false_positives(void)
{
	__u32 flagged = 0, flagged_min = 0, tests = 0;

	for (int i = 0; i < 20; i++) {
		struct run_profile p[2];
		struct run_diff d;

		sim_pair(base, 1000 + i, "same", false);
		/* The tests alone (--min-change 0%), then with the default 10 %. */
		if (diff_files("same", "vmexit", 0, &d, p))
			return;
		flagged += d.nr_sig > 0;
		tests = d.nr_tests;
		diff_done(&d, p);
		if (diff_files("same", "vmexit", DIFF_MIN_CHANGE_DEFAULT, &d, p))
			return;
		flagged_min += d.nr_sig > 0;
		diff_done(&d, p);
	}
	printf("false positives: %u of 20 identical pairs (--min-change 0%%), %u with 10%%; "
	       "%u tests each, family-wise alpha 0.01\n", flagged, flagged_min, tests);
	/* Each pair is flagged with probability <= 0.01: 2 or more of 20 has p < 0.02. */
	CHECK(flagged <= 1);
	CHECK(flagged_min == 0);
	CHECK(tests >= 20);	/* rates and latencies of reasons, keys and vCPUs */
}

static const struct diff_row *first_reason(const struct run_diff *d)
{
	for (__u32 i = 0; i < d->nr; i++) {
		if (d->rows[i].id.level == PROF_REASON)
			return &d->rows[i];
	}
	return NULL;
}

static void check_mmio(const struct run_diff *d)
{
	const struct diff_row *r = first_reason(d);

	CHECK(r && r->id.reason == 6);
	CHECK(r && r->sig_rate);
	CHECK(r && r->rate_change > 0.1 && r->rate_change < 0.3);
	for (__u32 i = 0; i < d->nr; i++) {
		/* Nothing else changed: every other reason row stays insignificant. */
		if (d->rows[i].id.level == PROF_REASON && d->rows[i].id.reason != 6)
			CHECK(!diff_row_sig(&d->rows[i]));
	}
}

static void check_io_latency(const struct run_diff *d)
{
	const struct diff_row *r = first_reason(d);

	CHECK(r && r->id.reason == 2);
	CHECK(r && r->sig_lat);
	/* 10 us + 50 us: the median goes up about six times. */
	CHECK(r && r->p50[1] > 4 * r->p50[0]);
	CHECK(r && !r->sig_rate);
}

/* The reason rows' order and verdicts of two diffs. */
static void check_same(const struct run_diff *a, const struct run_diff *b)
{
	__u32 j = 0;

	for (__u32 i = 0; i < a->nr; i++) {
		const struct diff_row *x = &a->rows[i];

		if (x->id.level != PROF_REASON)
			continue;
		while (j < b->nr && b->rows[j].id.level != PROF_REASON)
			j++;
		CHECK(j < b->nr);
		if (j >= b->nr)
			return;
		CHECK_EQ_U64(x->id.reason, b->rows[j].id.reason);
		CHECK_EQ_U64(x->count[1], b->rows[j].count[1]);
		CHECK_EQ_U64(x->sig_rate, b->rows[j].sig_rate);
		CHECK_EQ_U64(x->sig_lat, b->rows[j].sig_lat);
		j++;
	}
}

static void test_changes(void)
{
	struct sim_kind mmio[3], slow[3];
	struct run_profile p[2], q[2];
	struct run_diff d, e;

	memcpy(mmio, base, sizeof(mmio));
	mmio[1].rate *= 1.2;
	memcpy(slow, base, sizeof(slow));
	slow[0].median_ns += 50000;
	slow[0].blocked = 0.8;

	sim_pair(mmio, 77, "mmio", true);
	if (!diff_files("mmio", "vmexit", DIFF_MIN_CHANGE_DEFAULT, &d, p)) {
		check_mmio(&d);
		if (!diff_files("mmio", "json", DIFF_MIN_CHANGE_DEFAULT, &e, q)) {
			check_mmio(&e);
			check_same(&d, &e);
			diff_done(&e, q);
		}
		diff_done(&d, p);
	}
	sim_pair(slow, 78, "slow", true);
	if (!diff_files("slow", "vmexit", DIFF_MIN_CHANGE_DEFAULT, &d, p)) {
		check_io_latency(&d);
		if (!diff_files("slow", "json", DIFF_MIN_CHANGE_DEFAULT, &e, q)) {
			check_io_latency(&e);
			check_same(&d, &e);
			diff_done(&e, q);
		}
		diff_done(&d, p);
	}
}

/* The after run: base's exits (times f for MMIO) spread over `slower` times the span. */
static void sim_slower(const char *name, double slower, double mmio, __u64 seed)
{
	struct sim_run r = { "sim", 2, 1.0, base, 3 };
	struct sim_kind k[3];
	char a[256], b[256];

	memcpy(k, base, sizeof(k));
	for (int i = 0; i < 3; i++)
		k[i].rate /= slower;
	k[1].rate *= mmio;
	snprintf(b, sizeof(b), "%s/%s-before.vmexit", dir, name);
	snprintf(a, sizeof(a), "%s/%s-after.vmexit", dir, name);
	sim_write(&r, seed, b, NULL);
	r.kinds = k;
	r.seconds = slower;
	sim_write(&r, seed * 7919 + 1, a, NULL);
}

static void test_per_run(void)
{
	struct diff_opts per_s = { 0.01, DIFF_MIN_CHANGE_DEFAULT, false };
	struct diff_opts per_run = { 0.01, DIFF_MIN_CHANGE_DEFAULT, true };
	const struct diff_row *r;
	struct run_profile p[2];
	struct run_diff d;

	sim_slower("slower", 1.4, 1.0, 91);
	if (!diff_files_opts("slower", "vmexit", &per_s, &d, p)) {
		/* Per second of guest time every rate fell by ~29 %: a change, rightly. */
		r = first_reason(&d);
		CHECK(r && r->sig_rate && r->rate_change < -0.2);
		diff_done(&d, p);
	}
	if (!diff_files_opts("slower", "vmexit", &per_run, &d, p)) {
		for (__u32 i = 0; i < d.nr; i++)
			CHECK(!d.rows[i].sig_rate);
		/* IO, 6000 exits a run: within 5 % (3 sigma of its Poisson noise). */
		for (__u32 i = 0; i < d.nr; i++) {
			r = &d.rows[i];
			if (r->id.level == PROF_REASON && r->id.reason == 2)
				CHECK(fabs(r->rate_change) < 0.05);
		}
		diff_done(&d, p);
	}
	sim_slower("slower-mmio", 1.4, 1.2, 92);
	if (!diff_files_opts("slower-mmio", "vmexit", &per_run, &d, p)) {
		for (__u32 i = 0; i < d.nr; i++) {
			r = &d.rows[i];
			if (r->id.level != PROF_REASON)
				continue;
			if (r->id.reason == 6)
				CHECK(r->sig_rate && r->rate_change > 0.1 && r->rate_change < 0.3);
			else
				CHECK(!r->sig_rate);
		}
		diff_done(&d, p);
	}
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	test_p_values();
	test_false_positives();
	test_changes();
	test_per_run();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		CHECK(!system(cmd));
	}
	if (check_failures) {
		fprintf(stderr, "test_run_diff: %d check(s) failed\n", check_failures);
		return 1;
	}
	printf("test_run_diff: ok\n");
	return 0;
}
