/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `vmexit serve` answers a scrape with: a fresh snapshot of a sampler's rows since start,
 * less the guests that ended more than --keep ago, plus loss counters, vmexit's own BPF cost
 * and build information, rendered in the format asked for. The HTTP thread renders; the
 * sampler's owner calls exporter_tick() between samples.
 */
#ifndef VMEXIT_EXPORTER_H
#define VMEXIT_EXPORTER_H

#include <pthread.h>
#include "expo_runs.h"
#include "guest_select.h"
#include "key_series.h"
#include "prom_protobuf.h"
#include "prom_exposition.h"
#include "sampler_share.h"
#include "serve_guests.h"
#include "wake_series.h"

#define EXPORTER_MAX_PROGS	48	/* the session's (17 at most) and --wake's (11) */

struct bpf_object;

struct exporter {
	struct sampler *sp;
	const struct expo_buckets *buckets;
	bool by_vcpu;
	/* The HTTP thread's, reused across scrapes. */
	struct sampler_snapshot snap;	/* no rows: each one is taken into counts */
	/* Every row since the start (nr_series of them), then those exported, in the rows'
	 * order: its numbers, and its guest. */
	struct expo_counts *counts;
	struct expo_series *series;
	__u32 nr_series;
	__u32 series_cap;
	__u64 *le_counts;		/* buckets->nr + 1 per row taken, in the rows' order */
	__u64 *native_counts;		/* NATIVE_SLOTS per row taken, in the rows' order */
	struct expo_runs runs;		/* the sampler's coarse rows taken as kept (m set) */
	struct expo_pb_keep pb;		/* the protobuf renderer's, kept across scrapes */
	enum expo_hists hists;		/* --histograms: what a protobuf scrape gets */
	__u64 max_series;		/* --max-series */
	bool max_series_said;		/* the cap's log line is written once */
	__u64 stuck_ns;
	pthread_mutex_t guests_lock;	/* guests: HTTP thread vs the sampler's owner */
	struct serve_guests guests;
	struct expo_prog progs[EXPORTER_MAX_PROGS];
	int prog_fds[EXPORTER_MAX_PROGS];
	int nr_progs;
	bool run_stats;			/* the kernel accounts the programs' run time */
	struct key_series *keys;	/* --keys, or NULL; the HTTP thread's */
	__u64 scrape_ms;		/* the scrape's time (Unix ms), for key_guest() */
	/* serve -g: the guests exported, picked from all the kernel counts; NULL: all. */
	const struct guest_select *select;
	char kernel[65];
	/* serve --wake: the HTTP thread's; the exported guests by pid and start time (as the
	 * wake cells are keyed), and their delivery and halt series. */
	bool wake;
	struct exporter_pid *pids;
	__u32 nr_pids, cap_pids;
	struct wake_series wake_series;
};

struct exporter_pid {
	__u32 tgid;
	__u64 start;
	const char *guest;
	__u64 created_ms;
};

/* An exporter over sp (started); exits in flight for stuck_ns or more are listed. 0 or -errno. */
int exporter_init(struct exporter *x, struct sampler *sp, const struct expo_buckets *buckets,
		  bool by_vcpu, __u64 keep_ms, __u64 stuck_ns);
/* Exports the run time of the nr programs in list (run_stats: the kernel is accounting it). */
void exporter_watch_progs(struct exporter *x, struct bpf_program *const *list, int nr,
			  bool run_stats);
/* Notes the guests whose VMM has exited since the last call. */
void exporter_tick(struct exporter *x);
/* What a scrape takes under the sampler's lock: a fresh sample, and of each row since the
 * start what the exposition shows (x->counts, x->nr_series). 0 or -ENOMEM. */
int exporter_snapshot(struct exporter *x);
/* A scrape (http_render_fn; ctx is the exporter). */
int exporter_render(void *ctx, enum expo_format fmt, struct expo_buf *out);
void exporter_free(struct exporter *x);

#endif /* VMEXIT_EXPORTER_H */
