/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sampling loop behind stat, top and serve: one session, its cells followed by a tracker
 * (rows per interval and since start), guests named while their VMMs still exist, one epoch
 * per sample, a schedule that does not burst after a stop (SIGSTOP, a suspended laptop), and
 * the end of the run: Ctrl-C/SIGTERM, the traced command exiting, every -p process gone. The
 * front ends only present the rows.
 *
 * Everything a run gathers besides the cells is the sampler's too, asked for in its options: the
 * key rows (the filters' key mode), the kvm events' counts, the kernel stacks, QMP's names and
 * --keep's upkeep. Each sampler_sample() fills one struct sample (model/sample.h) with all of
 * it: the front ends present that and never see the BPF objects.
 *
 * A typical front end:
 *
 *	sampler_open(&sp, &filters, &(struct sampler_opts){ .by = BY_VM, .interval = 1 });
 *	sampler_start(&sp);
 *	while (sampler_wait(&sp) == SAMPLER_DUE) {
 *		sampler_sample(&sp);
 *		print(&sp.sample);
 *	}
 *	return sampler_close(&sp, err);
 *
 * Threads. A sampler has one owner thread, the one that opened it; the owner calls the
 * functions below (sampler_sample() may also be called by another thread that the owner
 * hands it to, never by two at once). Only the owner reads the public fields. The exception
 * is sampler_snapshot() (serve/sampler_share.h): any thread may call it at any time between
 * sampler_start() and sampler_close(), concurrently with the owner's calls: it copies, under
 * the sampler's lock, the rows since start, the loss counters and the guests' names, and may
 * take a fresh sample first (a scrape). The owner's wait never holds the lock while it sleeps.
 */
#ifndef VMEXIT_SAMPLER_H
#define VMEXIT_SAMPLER_H

#include <pthread.h>
#include <stdbool.h>
#include "cli_filters.h"
#include "key_rows.h"
#include "kvm_event_counts.h"
#include "overhead.h"
#include "qmp_names.h"
#include "sample.h"
#include "serve_guests.h"
#include "session.h"
#include "stack_table.h"
#include "symbol_map.h"
#include "tracker.h"
#include "wake_progs.h"
#include "name_cache.h"

struct sampler_opts {
	enum group_by by;		/* how rows are keyed */
	double interval;		/* seconds between samples; 0: none due (sample at the end) */
	double first;			/* the first sample this long after the start; 0: interval */
	bool end_with_pids;		/* -p: the run ends when every traced process has exited */
	bool overhead;			/* --overhead: vmexit's own BPF run time, sampled too */
	/* Rows since the start only: sp->rows stays empty (serve shows no interval; a
	 * table of 10,000 rows less to fill per sample). */
	bool no_interval_rows;
	/* Called on every tick of sampler_wait() with sampler_now() (serve: guest_follow). */
	void (*tick)(void *ctx, double now);
	void *tick_ctx;
	/*
	 * Key rows, when the filters load the key programs (opts.key_mode; their cap is
	 * opts.max_keys): keyed by key_by (serve: BY_VM whatever --by), of key_vcpu (-c; -1:
	 * every vCPU).
	 */
	enum group_by key_by;
	__s32 key_vcpu;
	/* --kvm-events (opts.kvm_events): counted from their records into the rows. */
	bool kvm_events;
	bool stacks;			/* --stacks: the kernel's table read at every sample */
	const char *qmp;		/* --qmp: keys named by each QEMU's memory map; NULL: off */
	int qmp_timeout_ms;		/* --qmp-timeout: one ask's time; 0: QMP_TIMEOUT_MS */
	__u64 stuck_ns;			/* --stuck: exits in flight this long are stuck */
	/*
	 * --keep (stat): after the views are done with a sample (the next sampler_wait(), or
	 * sampler_settle()), the guests ended more than keep_ns ago join the (ended) rows and
	 * their keys leave the kernel's table (sampler_fold()). 0: off (serve keeps its own).
	 */
	__u64 keep_ns;
	/* --wake (x86): interrupt delivery and halted-exit cells (bpf/wake.bpf.c), loaded with
	 * the session and read at every sample into sample.wake. */
	bool wake;
	/*
	 * serve: the rows since the start kept at this resolution (t.ccum, not t.cum), the
	 * buckets the exposition sums (coarse_rows.h); sample.cum is then empty. NULL: the
	 * kernel's (stat, top). Outlives the sampler.
	 */
	const struct hist_coarse *hist_coarse;
};

enum sampler_wake {
	SAMPLER_DUE,			/* the interval is over: sampler_sample() */
	SAMPLER_SIGNALLED,		/* Ctrl-C, SIGTERM or SIGHUP (`exiting`) */
	SAMPLER_COMMAND_EXITED,		/* the traced command exited */
	SAMPLER_PIDS_EXITED,		/* every -p process has exited (end_with_pids; said on stderr) */
};

/* Where a sampler's cells come from: the kernel's (sampler_open), or a test's. */
struct sampler_source {
	struct cell_source cells;	/* cells.ctx is every hook's ctx */
	/* Starts a new epoch; returns the one that just ended (whose min/max the cells carry). */
	__u32 (*turn_epoch)(void *ctx);
	void (*lost)(void *ctx, __u64 lost[NR_LOST]);
	/* The command line the kernel kept for tgid (name_cache' args hook); may be NULL. */
	int (*proc_args)(void *ctx, __u32 tgid, char *buf, size_t len);
	bool use_proc;			/* names and vCPUs from /proc as well (off in tests) */
};

struct sampler {
	struct session s;		/* when opened with sampler_open() */
	struct session_opts *opts;	/* likewise: -p, the command */
	struct sampler_source src;
	struct tracker t;		/* t.cum: the rows since start */
	struct name_cache names;		/* every guest seen, named while it ran */
	struct sampler_opts so;
	/* Filled by sampler_sample(): */
	struct row_table rows;		/* since the previous sample */
	double interval_s;		/* the period rows cover */
	double elapsed_s;		/* since sampler_start() */
	__u64 lost[NR_LOST];		/* kernel loss counters, since the start */
	__u64 samples;			/* sampler_sample() calls so far */
	/* --overhead: its statistics at the last sample; NULL without, or if they failed then. */
	const struct overhead *overhead;
	/* The sample the views read: points into the fields above and below. */
	struct sample sample;
	/* Private. */
	struct overhead ov;
	struct hooks_info hooks;
	struct key_rows keys;		/* keys.map_fd < 0: no key rows */
	struct row_table key_rows;	/* the key rows since the previous sample */
	struct kvm_event_counts ev;	/* ev.rb NULL: no --kvm-events */
	struct stack_table stacks;
	struct symbol_map *ksyms;	/* --stacks: frames named from this kernel; NULL: addresses */
	struct qmp_names qmp;		/* with so.qmp */
	struct serve_guests kept;	/* --keep: the guests seen, and when they ended */
	struct wake_progs wake;		/* so.wake: wake.skel, else NULL */
	struct wake_snapshot wake_cells;	/* so.wake: the kernel's cells at the last sample */
	bool keep_due;			/* a sample whose --keep upkeep is still to run */
	double start, last, next, next_alive_check, next_reap;
	bool reap_failed;		/* tracker_reap() ran out of memory: said at the next sample */
	bool started;
	pthread_mutex_t lock;		/* tracker, names, rows: against sampler_snapshot() */
};

/* CLOCK_MONOTONIC in seconds: the sampler's time base (start, last sample, deadlines). */
double sampler_now(void);

/*
 * Preflight, the filters' guests to pids, load and attach (f->opts), BPF run-time statistics on
 * with so->overhead, and Ctrl-C/SIGTERM handled through `exiting`. Prints the reason and returns -1 when tracing cannot start; the sampler is
 * then closed already.
 */
int sampler_open(struct sampler *sp, struct cli_filters *f, const struct sampler_opts *so);
/* A sampler over other cells than the kernel's (tests); no session, no command. 0 or -ENOMEM. */
int sampler_init(struct sampler *sp, const struct sampler_source *src,
		 const struct sampler_opts *so);
/* Starts the clock and lets the traced command run. */
void sampler_start(struct sampler *sp);
/*
 * Sleeps in short ticks until the next sample is due or the run ends, naming new guests and
 * vCPUs on every tick while their processes still exist.
 */
enum sampler_wake sampler_wait(struct sampler *sp);
/* One tick of sampler_wait() for front ends that wait on something else (a key, a socket). */
void sampler_poll(struct sampler *sp);
/* Seconds until the next sample is due (<= 0: due now; a large number when none is). */
double sampler_due_in(const struct sampler *sp);
/* A new interval length, the next sample due that long after the last one. */
void sampler_set_interval(struct sampler *sp, double interval);
/*
 * Closes the epoch and takes the rows since the previous sample into sp->rows (and into
 * sp->t.cum), with interval_s, elapsed_s and lost; schedules the next one (after a stop, one
 * interval from now: no burst of catch-up samples). 0, or -ENOMEM.
 */
int sampler_sample(struct sampler *sp);
/* sampler_sample()'s sample without the schedule, for a caller that holds sp->lock
 * (serve/sampler_share.c). 0, or -ENOMEM. */
int sampler_sample_locked(struct sampler *sp);

/*
 * --keep's upkeep of the last sample now, not at the next sampler_wait(): a front end that
 * waits no more (stat's count of intervals reached) before its summary. 0, or -ENOMEM.
 */
int sampler_settle(struct sampler *sp);

/*
 * Hands the key rows since the start, as of the last sample (a fresh sampler_snapshot()'s
 * included), to fn under the sampler's lock (serve: the HTTP thread exports the busiest).
 * fn's value; 0 without key rows.
 */
int sampler_with_key_rows(struct sampler *sp,
			  int (*fn)(void *ctx, const struct row_table *key_cum), void *ctx);

/*
 * --wake: hands the kernel's wake cells as of the last sample (a fresh sampler_snapshot()'s
 * included) to fn under the sampler's lock (serve: the HTTP thread exports them). fn's value;
 * 0 without --wake.
 */
int sampler_with_wake(struct sampler *sp,
		      int (*fn)(void *ctx, const struct wake_snapshot *w), void *ctx);

/* The rows since the start (t.cum's, or t.ccum's with so.hist_coarse): how many, and the
 * key of row i. The caller holds sp->lock, or is the owner. */
__u32 sampler_cum_nr(const struct sampler *sp);
const struct row_key *sampler_cum_key(const struct sampler *sp, __u32 i);

/*
 * Forgets the rows since start and the names of the guests gone() says are over (serve: ended
 * more than --keep ago), so that a sampler that runs for months holds only what it still
 * shows; their key rows go too, and their keys leave the kernel's table. Thread-safe like
 * sampler_snapshot(). 0, or -ENOMEM (then nothing is forgotten).
 */
int sampler_forget(struct sampler *sp, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		   void *ctx);

/*
 * The same for a consumer that must keep every count (stat's summary): the rows since start
 * of the guests gone() says are over join one row per reason of guest 0, named
 * SAMPLER_ENDED_NAME, so that a run of months holds only the guests it still shows and its
 * totals stay exact. 0, or -ENOMEM (then nothing changes).
 */
#define SAMPLER_ENDED_NAME	"(ended)"
int sampler_fold(struct sampler *sp, bool (*gone)(void *ctx, __u32 tgid, __u64 start),
		 void *ctx);

/*
 * Ends the run: says on stderr what err was (-ENOMEM: out of memory) and how the traced
 * command ended (left running, failed), frees everything. Returns vmexit's exit status:
 * 1 on err, else the failing command's status, else 0.
 */
int sampler_close(struct sampler *sp, int err);

#endif /* VMEXIT_SAMPLER_H */
