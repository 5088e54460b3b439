/* SPDX-License-Identifier: GPL-2.0 */
/* `vmexit stat` output: table, histograms, CSV and JSON, from rows. */
#ifndef VMEXIT_STAT_OUTPUT_H
#define VMEXIT_STAT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "guest_symbols.h"
#include "lost_causes.h"
#include "rows.h"
#include "name_cache.h"
#include "sample.h"
#include "tracing_info.h"

struct inflight_exit;
struct qmp_names;
struct stack_table;

enum out_format { OUT_TABLE, OUT_CSV, OUT_JSON };
enum sort_key { SORT_COUNT, SORT_TIME, SORT_MAX, SORT_P99 };

struct stat_view {
	enum group_by by;
	__u32 key_mode;		/* --by key / rip (enum vmexit_key_mode): a key per row */
	enum out_format fmt;
	enum sort_key sort;
	__u64 unit_ns;		/* 0: scale each value; else 1, 1000 or 1000000 */
	double tsc_mhz;		/* > 0: cycle columns */
	bool hist;
	bool split;		/* rows carry on CPU / blocked / runq (--split) */
	bool asked_csv, asked_json;	/* as given: one of them; report's --json goes with --events */
	struct name_cache *names;
	struct qmp_names *qmp;	/* --qmp: keys named by each QEMU's memory map; may be NULL */
	bool asked_keys;	/* --keys: --by key's other spelling */
	bool per_address;	/* --per-address: --by key rows per port / address, not device */
	int key_w;		/* the KEY column's width, for the table being printed */
	/* --by rip: symbols of guests' addresses (--guest-symbols), rows kept per guest x reason
	 * (--top; 0 before the options' end) */
	struct guest_symbols syms;
	__u32 top;
	bool csv_header_done;
};

struct stat_report {
	struct row_table *rows;
	double interval_s;	/* the period the rows cover */
	double elapsed_s;	/* since tracing started */
	bool final;		/* the summary of the whole run */
	__u64 lost[NR_LOST];	/* since tracing started */
	enum lost_source lost_source;	/* who took the events: whose fix the footer names */
	const struct hooks_info *hooks;	/* the kernel hooks in use; NULL offline (report) */
	const struct bpf_cost *overhead; /* --overhead: our programs' cost since start, or NULL */
	/*
	 * The STUCK section (NULL offline): the exits in flight at the sample for stuck_ns or more
	 * (an interval's: also those their thread exited in after as long; the summary's: not,
	 * they are in stuck), and the exits stuck in the period that completed or were left by
	 * their thread (the interval's: tracker.stuck; the summary's: tracker.cum_stuck). A
	 * thread's last exit, shorter, is no stuck exit: the summary counts them (ended).
	 */
	const struct inflight_exit *inflight;
	__u32 nr_inflight;
	const struct inflight_exit *stuck;
	__u32 nr_stuck;
	__u64 ended;		/* final: exits left by their exiting thread (tracker.cum_ended) */
	__u64 now_ns;		/* CLOCK_MONOTONIC at the sample: ages are now_ns - start_ns */
	__u64 stuck_ns;		/* 0: offline (report), no exits in flight to show */
	const struct stack_table *stacks;	/* --stacks, sorted: after the table, in JSON */
};

/*
 * A sample as stat prints it (live or replayed alike): its interval, or with final everything
 * since the start; by key when the view is (--by key/rip). The view's names and --qmp names
 * come from the sample too.
 */
struct stat_report stat_report_of(struct stat_view *v, const struct sample *s, bool final);
/* What the view names rows with (guests, QEMU's maps), from the sample: stat_report_of() does
 * it; an output of the stacks alone (--folded) needs it too. */
void stat_view_names_of(struct stat_view *v, const struct sample *s);

/* 0, or -errno when the output could not be written (out_flush()). */
int stat_print(struct stat_view *v, const struct stat_report *r, FILE *f);
/* --stacks --folded: the stacks alone, as folded lines (stack_output.h). 0 or -errno. */
int stat_print_folded(const struct stat_view *v, const struct stack_table *t, FILE *f);

#endif /* VMEXIT_STAT_OUTPUT_H */
