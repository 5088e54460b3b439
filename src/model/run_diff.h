/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmexit diff BEFORE AFTER`: two runs' profiles (run_profile.h) compared row by row, per
 * guest matched by name, reason and, where both runs have them, key and vCPU. Each row gets its
 * rates (exits per second of guest time), share of vCPU time in exits, latencies and two tests
 * (rate_tests.h): its count as a rate, its latency histogram as a distribution. A change is
 * significant when its test survives Holm's correction over every test of the diff at level
 * alpha (the chance that any row of two runs of one workload is called different) AND it is at
 * least min_change (relative) in size: of the rate, or of the median latency (not the mean,
 * which one preempted exit of 100 ms moves by tens of percent). Rows are ranked by what the change costs the guest: the
 * change in exit time per second of guest time.
 */
#ifndef VMEXIT_RUN_DIFF_H
#define VMEXIT_RUN_DIFF_H

#include <stdbool.h>
#include "run_profile.h"

#define DIFF_ALPHA_DEFAULT	0.01
#define DIFF_MIN_CHANGE_DEFAULT	0.10

struct diff_opts {
	double alpha;		/* family-wise false-positive level */
	double min_change;	/* smallest relative change called a difference */
	/*
	 * Both runs did one fixed job (a benchmark, a test's exact exit mix): rates and costs per
	 * run, not per second of guest time, so that a run slowed down as a whole (a loaded or
	 * emulated host) shows no change in how many exits its job makes.
	 */
	bool per_run;
};

struct diff_row {
	char guest[PROF_NAME_MAX];
	struct prof_id id;	/* guest: the before run's index */
	__u64 count[2], completed[2];
	double rate[2];		/* exits per second of guest time (per_run: per run) */
	double share[2];	/* fraction of the guest's vCPU time in these exits */
	double cost[2];		/* ns in these exits per second of guest time (per_run: per run) */
	double mean_ns[2];
	__u64 p50[2], p99[2];
	double rate_change;	/* after / before - 1 (HUGE_VAL: new) */
	double median_ns[2];	/* interpolated (prof_row_median()) */
	double lat_change;	/* of the median latency; NAN without latencies on both sides */
	double p_rate, p_lat;	/* the tests' p-values; NAN: not testable */
	bool sig_rate, sig_lat;
	__s32 parent;		/* a key or vCPU row: its reason row's index; else -1 */
};

struct run_diff {
	struct diff_opts o;
	struct diff_row *rows;	/* reason rows by |cost change|, each followed by its own */
	__u32 nr, cap;
	__u32 nr_tests;		/* the family Holm corrected for */
	__u32 nr_sig;		/* rows with a significant change */
	bool keys, vcpus, hist;	/* levels and tests both runs allowed */
	/* Guests named in one run only, "name" each; not compared. */
	char (*only)[PROF_NAME_MAX + 8];
	__u32 nr_only, cap_only;
};

static inline bool diff_row_sig(const struct diff_row *r)
{
	return r->sig_rate || r->sig_lat;
}

/* 0 or -ENOMEM. */
int run_diff_build(const struct run_profile *before, const struct run_profile *after,
		   const struct diff_opts *o, struct run_diff *d);
void run_diff_free(struct run_diff *d);

#endif /* VMEXIT_RUN_DIFF_H */
