/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics `vmexit serve` exports, rendered in the Prometheus text format 0.0.4 or in
 * OpenMetrics 1.0. The metric names and labels are the exporter's contract (README, "serve").
 */
#ifndef VMEXIT_PROM_EXPOSITION_H
#define VMEXIT_PROM_EXPOSITION_H

#include <stdbool.h>
#include <stddef.h>
#include "tracing_info.h"
#include "bpf_run_stats.h"
#include "expo_buckets.h"
#include "inflight.h"
#include "name_cache.h"
#include "process_stats.h"
#include "rows.h"

struct wake_series;

/* EXPO_PROTOBUF: delimited io.prometheus.client.MetricFamily messages (prom_protobuf.h). */
enum expo_format { EXPO_TEXT, EXPO_OPENMETRICS, EXPO_PROTOBUF };

/* The duration histograms a protobuf scrape gets (serve --histograms); text scrapes get the
 * classic ones whatever it says, as the text formats have no native histograms. */
enum expo_hists { EXPO_HISTS_NATIVE, EXPO_HISTS_CLASSIC, EXPO_HISTS_BOTH };

/* One exported row: its guest's name and when it appeared (its numbers: expo_counts). */
struct expo_series {
	const char *guest;
	__u64 created_ms;		/* Unix time, ms */
};

/* What the exposition takes of a row (expo_counts_of()): kept instead of whole rows, 10,000
 * series are 3 MB per scrape, not 23 MB. */
struct expo_counts {
	struct row_key key;
	__u64 count;
	__u64 total_ns;
	__u64 oncpu_ns, blocked_ns, runq_ns;
	const __u64 *le;		/* exits shorter than each bound, then all: nr + 1 */
	const __u64 *native;		/* the native histogram's NATIVE_SLOTS, or NULL */
};

/* c's numbers from r, its cumulative bucket counts into le (b->nr + 1 of them); c->le is left
 * to the caller. */
void expo_counts_of(struct expo_counts *c, const struct row *r, const struct expo_buckets *b,
		    __u64 *le);

/* serve --keys: one key series, its guest x reason's own or the rest of them (kind other). */
struct expo_key {
	const char *guest;
	__u64 created_ms;		/* Unix time, ms */
	struct row_key key;
	char name[64];			/* key_name */
	__u64 count;			/* completed exits */
	__u64 total_ns;
};

struct expo_input {
	const struct expo_series *series;
	const struct expo_counts *counts;	/* series[i]'s numbers, since vmexit started */
	__u32 nr_series;
	bool by_vcpu;			/* a vcpu label on the exit series */
	const struct expo_buckets *buckets;
	/* export_stuck: of the exits in flight at now_ns (CLOCK_MONOTONIC), those in flight for
	 * stuck_ns or more (inflight_stuck()) are exported, their guests named from names. */
	bool export_stuck;
	const struct inflight_exit *inflight;
	__u32 nr_inflight;
	__u64 now_ns;
	__u64 stuck_ns;
	struct name_cache *names;
	__u64 lost[NR_LOST];
	const struct expo_prog *progs;	/* NULL: the kernel does not account run time */
	__u32 nr_progs;
	__u32 guests;			/* VMM processes running */
	const char *version;
	const char *kernel;
	__u64 start_ms;			/* _created of the process-wide counters */
	bool split;			/* --split: the rows carry on CPU / blocked / runq */
	/* The kernel sample the counts come from: how long it took, and when (Unix ms; 0: no
	 * vmexit_sample_* metrics). */
	__u64 sample_ns;
	__u64 sample_ms;
	const struct process_stats *self;	/* NULL: no process_* metrics */
	bool keys_on;			/* --keys: the vmexit_key_* families */
	const struct expo_key *keys;
	__u32 nr_keys;
	bool no_classic;		/* no vmexit_exit_duration_seconds (a native-only scrape) */
	bool no_exits;			/* no vmexit_exits (the protobuf renderer's own) */
	/* --max-series: the cap (0: no vmexit_series_* metrics) and the series it left out. */
	__u64 max_series;
	__u64 series_dropped;
	/* The kvm_exit/kvm_entry programs in use and the path they make ("fast", "classic"):
	 * vmexit_exit_hooks_info; NULL: no such metric (no BPF session). */
	const struct hooks_info *hooks;
	/* serve --wake: the delivery and halt series (wake_series.h); NULL: no such families. */
	struct wake_series *wake;	/* its nr_wake and nr_halt cut by --max-series */
};

/* A growing output buffer. */
struct expo_buf {
	char *p;
	size_t len;
	size_t cap;
};

/* vmexit_exit_duration_seconds' and vmexit_exits' help, for both renderers. */
extern const char expo_duration_help[];
extern const char expo_exits_help[];

/* Series i's labels, escaped as in the text formats, into out (EXPO_LABELS_MAX); the length. */
#define EXPO_LABELS_MAX		1536
size_t expo_series_labels(const struct expo_input *in, __u32 i, char *out);

/* Appends the exposition of in to out (EXPO_TEXT or EXPO_OPENMETRICS); 0 or -ENOMEM. */
int expo_render(const struct expo_input *in, enum expo_format fmt, struct expo_buf *out);
void expo_buf_free(struct expo_buf *b);
/*
 * Whether two guest names make the same guest label (cut and escaped: two names that differ
 * only in ill-formed UTF-8 do): a series' identity is its exported labels.
 */
bool expo_same_guest_label(const char *a, const char *b);

/*
 * For the renderers of other families (wake_exposition.c): the same lines as the exit
 * families', so that every family reads alike. A family's header (name as in OpenMetrics: a
 * text counter's samples add "_total"); a sample name{labels} value; _created (OpenMetrics
 * only). 0 or -ENOMEM.
 */
int expo_family(struct expo_buf *b, enum expo_format fmt, const char *name, const char *type,
		const char *unit, const char *help);
int expo_sample_u64(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		    __u64 v);
int expo_sample_sec(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		    __u64 ns);
int expo_sample_created(struct expo_buf *b, enum expo_format fmt, const char *name,
			const char *labels, size_t llen, __u64 ms);
/* guest="..",pid="..",[vcpu=".."] at p, the name cut and escaped as the exit series' (room:
 * EXPO_GUEST_ESC_MAX + 64); the end. */
#define EXPO_GUEST_ESC_MAX	768
char *expo_guest_labels(char *p, const char *guest, __u32 tgid, __s32 vcpu, bool with_vcpu);
/* Values shorter than each of b's bounds in a kernel histogram (NR_BUCKETS), then all. */
void expo_le_of_hist(const __u64 *hist, const struct expo_buckets *b, __u64 *out);

#endif /* VMEXIT_PROM_EXPOSITION_H */
