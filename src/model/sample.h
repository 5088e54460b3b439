/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One sample: everything a run has gathered up to one moment, as the views (stat, top, the
 * exporter) read it. A live run's sampler (live/sampler.h) fills one at each sampler_sample();
 * report fills the same from its event source, so that a view never knows whether the run is
 * live or replayed. A sample points into its filler's tables: it is valid until the filler's
 * next sample (the exporter reads a locked copy, serve/sampler_share.h).
 */
#ifndef VMEXIT_SAMPLE_H
#define VMEXIT_SAMPLE_H

#include <stdbool.h>
#include "inflight.h"
#include "lost_causes.h"
#include "name_cache.h"
#include "qmp_names.h"
#include "rows.h"
#include "stack_table.h"
#include "tracing_info.h"
#include "wake_rows.h"

struct sample {
	/* Rows keyed as the run asked (--by): since the previous sample, and since the start
	 * (rows may be NULL: a run that keeps only the totals). */
	struct row_table *rows;
	struct row_table *cum;
	/* Rows by key (--by key/rip, top --keys, serve --keys), likewise; NULL without. */
	struct row_table *key_rows;
	struct row_table *key_cum;
	double interval_s;		/* the period rows cover */
	double elapsed_s;		/* since the start */
	__u64 samples;			/* this sample's number */
	__u64 lost[NR_LOST];		/* since the start */
	enum lost_source lost_source;	/* who took the events (report: the importer) */
	/*
	 * The exits in flight at the sample, those stuck in the interval that completed or were
	 * left by their thread, and the same since the start; read against now_ns (the sample's
	 * CLOCK_MONOTONIC time). stuck_ns 0: a replay, nothing in flight to show.
	 */
	const struct inflight_exit *inflight;
	__u32 nr_inflight;
	const struct inflight_exit *stuck;
	__u32 nr_stuck;
	const struct inflight_exit *cum_stuck;
	__u32 nr_cum_stuck;
	__u64 cum_ended;		/* exits left by their exiting thread, since the start */
	__u64 now_ns;
	__u64 stuck_ns;
	const struct hooks_info *hooks;	/* the kernel hooks in use; NULL in a replay */
	const struct bpf_cost *overhead;	/* --overhead: our programs' cost, or NULL */
	const struct stack_table *stacks;	/* --stacks since the start, sorted; or NULL */
	struct name_cache *names;	/* every guest seen */
	struct qmp_names *qmp;		/* --qmp: keys named by each QEMU's memory map; or NULL */
	/* --wake: every delivery and halted-exit cell the kernel keeps (all guests: the views
	 * keep their own), since the start; or NULL. */
	const struct wake_snapshot *wake;
};

#endif /* VMEXIT_SAMPLE_H */
