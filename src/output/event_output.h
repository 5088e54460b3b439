/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-event output shared by `vmexit stream` (live) and `vmexit report --events` (from a
 * record file): the default line or a --format rules file (template engine), one JSON object
 * per line, or a Perfetto/Chrome trace, each a format of its own (EVOUT_FORMATS below). Lost
 * records are never silent: each increase of a kernel loss counter becomes a marker in the
 * same output, and the summary states the totals.
 */
#ifndef VMEXIT_EVENT_OUTPUT_H
#define VMEXIT_EVENT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "vmexit.h"
#include "wake.h"
#include "inflight.h"
#include "name_cache.h"

/*
 * The per-event formats, once: X(MODE, name, OPTION, ARG, HELP) is the format EVOUT_MODE, whose
 * operations and private state are evout_name in event_name.c (event_format.h says what a
 * format provides), chosen by --OPTION (which takes ARG, a file, or nothing: NULL), whose help
 * is HELP. A format's option excludes every other's (evout_opts_check()). LINES, the default
 * (its option: lines from a rules file), stays first.
 */
#define EVOUT_FORMATS(X)								\
	X(LINES, lines, "format", "FILE", "One line per exit, rendered with the rules in FILE "	\
	  "(docs/formats.md)")									\
	X(JSON, json, "json", NULL, "One JSON object per exit, one per line")			\
	X(PERFETTO, perfetto, "perfetto", "FILE", "Write a Perfetto trace to FILE (- for "	\
	  "standard output) instead of lines: protobuf if FILE ends in .pftrace, else Chrome "	\
	  "JSON")										\
	X(TSV, tsv, "tsv", NULL, "One tab-separated line per exit: ts_ns, pid, tid, vcpu, "	\
	  "reason, latency_ns, in_flight (other events: use --json)")				\
	/* a new format: its line above this one */

enum evout_mode {
#define EVOUT_MODE_ENUM(M, ...) EVOUT_##M,
	EVOUT_FORMATS(EVOUT_MODE_ENUM)
#undef EVOUT_MODE_ENUM
	EVOUT_NR
};

struct evout_opts {
	enum evout_mode mode;		/* from what was asked: evout_opts_check() */
	/* Each format's option as given: its ARG ("" for one without); NULL: not given. So
	 * arg[EVOUT_LINES]: a rules file, NULL the built-in rules; arg[EVOUT_PERFETTO]: the
	 * trace's file, "-" standard output. */
	const char *arg[EVOUT_NR];
	int perfetto_format;		/* enum trace_format: TRACE_AUTO by the path */
	double tsc_mhz;			/* > 0: cycles in lines (%(tsc)) and in JSON */
	bool split;			/* exits carry oncpu/blocked/runq: JSON has them */
	bool keys;			/* exits carry their key (--keys): JSON, lines show it */
	/* CLOCK_REALTIME - CLOCK_MONOTONIC at capture, for the default line's wall-clock time
	 * (0: unknown, the line then shows CLOCK_MONOTONIC and its header says so). */
	__s64 real_offset_ns;
	/* The clock the events' times are on, for the lines' header (an import's: trace-cmd's
	 * "trace_clock_local", ...); NULL: CLOCK_MONOTONIC. */
	const char *clock;
	__u64 unit_ns;			/* report -u: latencies in lines in this unit; 0 scaled */
	struct name_cache *names;		/* guest names, owned by the caller */
};

struct tmpl_rules;
struct tmpl_env;
struct trace_writer_ops;
struct evout_ops;

struct evout {
	enum evout_mode mode;
	const struct evout_ops *ops;	/* the mode's (event_format.h) */
	FILE *f;
	bool own_file;
	double tsc_mhz;
	bool split;
	bool keys;
	const char *clock;		/* evout_opts' */
	struct name_cache *names;
	void *state;			/* the format's own (evout_ops.state_size bytes, zeroed) */
	__u64 first_ts;			/* relative times in JSON and lost markers */
	__u64 events;			/* events written */
	__u64 lost[NR_LOST];		/* totals of the lost counters reported so far */
	__u64 wake_lost[NR_WAKE_LOSSES];	/* --wake's, likewise */
	int err;			/* first output error (-EIO, -ENOMEM), sticky */
};

/*
 * Opens the output. On failure prints one line on stderr (for a bad rules file the engine's
 * "file:line:col: ..." message) and returns -EINVAL for a bad rules file, else -errno.
 */
int evout_open(struct evout *o, const struct evout_opts *opts);
/* 0, or the sticky output error (-EIO: e.g. the reader of a pipe went away). */
int evout_event(struct evout *o, const struct vmexit_event *ev);
/* A VM's name, as soon as it is known (perfetto process names; lines look names up), with its
 * VMM's start time (rec_item.start). */
void evout_guest(struct evout *o, __u32 tgid, __u64 start, const char *name);
/* An exit passed the --stuck threshold while the stream runs: one marker, its age at now_ns. */
void evout_stuck(struct evout *o, const struct inflight_exit *e, __u64 now_ns);
/* The kernel's loss counters grew by delta around ts_ns: one marker per cause that grew. */
void evout_lost(struct evout *o, __u64 ts_ns, const __u64 delta[NR_LOST]);
/* A value of an outside counter (report --counters) at ts_ns: Perfetto output only. */
void evout_counter(struct evout *o, const char *name, __u64 ts_ns, double value);
struct trace_guest_event;
/* An event of a guest's own trace on the host's clock (report --guest-trace): Perfetto only. */
void evout_guest_event(struct evout *o, const struct trace_guest_event *e);
/* Whether the format draws guest traces (evout_guest_event does something). */
bool evout_has_guest_events(const struct evout *o);
/* Pushes buffered lines out (called once per poll in live mode). */
void evout_flush(struct evout *o);
/* Finishes the output and frees it; 0 or the first error. */
int evout_close(struct evout *o);
/* "vmexit: N events, M lost (cause n, ...)[; tail]" on f: the last line of stream and record. */
void evout_summary(FILE *f, const char *tail, __u64 events, const __u64 lost[NR_LOST]);
/*
 * --wake: the delivery programs' loss counters grew by delta around ts_ns: a marker per cause
 * that loses deliveries (slots, threads, ring; a full cell map costs stat's cells only, every
 * delivery is still sent), in the format's own way; all are kept for evout_wake_summary().
 */
void evout_wake_lost(struct evout *o, __u64 ts_ns, const __u64 delta[NR_WAKE_LOSSES]);
/* "vmexit: --wake lost: N what" on f, a line per cause that counted (after evout_summary). */
void evout_wake_summary(FILE *f, const __u64 lost[NR_WAKE_LOSSES]);
/*
 * Whether format m shows stream --wake's deliveries and their losses (its evout_ops have a
 * wake_lost: a format that cannot say a lost delivery shows none), for stream to refuse the
 * others before loading anything.
 */
bool evout_mode_has_wake(enum evout_mode m);

#endif /* VMEXIT_EVENT_OUTPUT_H */
