/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live capture loop behind `vmexit stream` and `vmexit record`: loads the programs with the
 * ring buffer on, polls it until Ctrl-C, -d or the traced command ends (then the exits still in
 * flight, flagged VMEXIT_EV_IN_FLIGHT, so that every exit is emitted), and hands each event to
 * a sink after the userspace part of the filtering (vCPUs the kernel did not know), with the
 * guest's name first whenever a new VMM appears, and every growth of the kernel's loss
 * counters as it is seen. Also the options both commands share, as an argp child.
 */
#ifndef VMEXIT_LIVE_EVENTS_H
#define VMEXIT_LIVE_EVENTS_H

#include "vmexit.h"
#include "wake.h"
#include "cli_filters.h"
#include "inflight.h"
#include "session.h"
#include "name_cache.h"

struct live_args {
	struct cli_filters filters;	/* and --min-latency, --sample, ... in filters.opts */
	double duration_s;		/* -d; 0: until Ctrl-C or the command ends */
	__u64 stuck_ns;			/* stream --stuck: 0 off */
	bool wake;			/* stream --wake: each interrupt delivery, an event */
};

/* -d/--duration, --min-latency, --sample, --ringbuf-kb, --kvm-events, and the filters
 * (cli_filters_options). Input: live_args. */
extern const struct cmd_options live_options;

struct live_sink {
	/* A completed exit, TSC offset write or kvm event; a negative return ends the capture. */
	int (*event)(void *ctx, const struct vmexit_event *ev);
	/* An exit in flight for live_args.stuck_ns or more at now_ns, once (only with stuck_ns
	 * set). */
	void (*stuck)(void *ctx, const struct inflight_exit *e, __u64 now_ns);
	/* A VMM seen for the first time, before its first event: its pid, its process's start
	 * time (cell_key.proc_start; 0 when unknown) and name. A pid reused by a new VMM is
	 * another guest: an event of tgid at ts_ns is the one of the latest that started by then. */
	void (*guest)(void *ctx, __u32 tgid, __u64 start, const char *name);
	/* The loss counters grew by delta (some cause > 0) by ts_ns (CLOCK_MONOTONIC). */
	void (*lost)(void *ctx, __u64 ts_ns, const __u64 delta[NR_LOST]);
	/* --wake: the delivery programs' loss counters (enum wake_lost, the ring's included)
	 * grew by delta by ts_ns (checked with the others); may be NULL. */
	void (*wake_lost)(void *ctx, __u64 ts_ns, const __u64 delta[NR_WAKE_LOSSES]);
	/* Tracing is attached and about to begin (before the command starts): may be NULL. */
	int (*start)(void *ctx, __u64 now_ns);
	/* After each read on the reader's clock (CAPTURE_READ_NS, capture_clock.h), and at the
	 * end: write out what the events made; a negative return ends the capture. */
	int (*tick)(void *ctx, __u64 now_ns);
	/* Tracing has stopped and every event was handed over: the kernel's tables may be read
	 * (record --stacks). A negative return fails the run. May be NULL. */
	int (*end)(void *ctx, struct session *s);
	void *ctx;
};

struct live_result {
	__u64 events;			/* handed to the sink */
	__u64 lost[NR_LOST];		/* kernel loss counters at the end */
	int sink_err;			/* the sink's error that ended the capture, or 0 */
	__u64 end_ns;			/* CLOCK_MONOTONIC when tracing stopped */
	bool started;			/* tracing ran (false: it could not start) */
};


/*
 * Preflight, filters, load, attach, run, drain, close. names collects the guests, by
 * process (the caller owns it, resolve = true): name_cache_get_at_time() names each event. Returns the process exit status: 0, 1 when tracing could not
 * start or failed, or the traced command's failing status.
 */
int live_run(struct live_args *a, struct name_cache *names, const struct live_sink *sink,
	     struct live_result *res);

#endif /* VMEXIT_LIVE_EVENTS_H */
