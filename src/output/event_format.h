/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What one per-event format does, for event_output.c, which keeps what every format shares
 * (the first timestamp, the events counted, the sticky error, the loss totals, the output
 * file) and calls a format's operations for the rest. The formats are listed once, in
 * EVOUT_FORMATS (event_output.h).
 *
 * A new per-event format: a file event_NAME.c defining `const struct evout_ops evout_NAME`,
 * and its line in EVOUT_FORMATS; the option that asks for it is a line in
 * options/event_output_options.c (shared by stream and report).
 */
#ifndef VMEXIT_EVENT_FORMAT_H
#define VMEXIT_EVENT_FORMAT_H

#include <stddef.h>
#include "event_output.h"

struct evout_ops {
	size_t state_size;		/* the format's private state: o->state */
	/*
	 * Sets the format up in o (o->f is standard output; a format writing elsewhere opens
	 * its file there and sets o->own_file). 0, or -errno with err filled (said by the
	 * caller); -EINVAL for a usage error (a bad rules file). NULL: nothing to set up.
	 */
	int (*open)(struct evout *o, const struct evout_opts *opts, char *err, size_t errlen);
	/* One event (a completed or in-flight exit, a TSC offset write, a kvm event): 0, or
	 * -errno, which becomes the output's sticky error. */
	int (*event)(struct evout *o, const struct vmexit_event *ev);
	/* A VM's name as soon as it is known; NULL: the format looks names up when it needs. */
	void (*guest)(struct evout *o, __u32 tgid, const char *name);
	/* An exit in flight past --stuck for age_ns, its guest and reason named. */
	void (*stuck)(struct evout *o, const struct inflight_exit *e, __u64 age_ns,
		      const char *guest, const char *rname);
	/* n records lost by cause (one that drops events: lost_cause_drops_events()) by ts_ns. */
	void (*lost)(struct evout *o, __u64 ts_ns, __u64 n, int cause);
	/* n interrupt deliveries lost by cause (enum wake_lost) by ts_ns; NULL: the format has
	 * no wake events (stream --wake refuses it: evout_mode_has_wake()). */
	void (*wake_lost)(struct evout *o, __u64 ts_ns, __u64 n, int cause);
	/* A value of an outside counter (report --counters); NULL: the format has no counters. */
	void (*counter)(struct evout *o, const char *name, __u64 ts_ns, double value);
	/* An event of a guest's own trace (report --guest-trace); NULL: the format has none. */
	void (*guest_event)(struct evout *o, const struct trace_guest_event *e);
	/* Pushes what is buffered out, once per read while live; NULL: written at close. */
	void (*flush)(struct evout *o);
	/* Writes what is left and frees the format's state, before o->f is flushed and closed;
	 * also after a failed open. 0 or -errno. NULL: nothing to finish. */
	int (*close)(struct evout *o);
};

/* A flush op for formats written as they go: o->f's buffer out (a failure is the sticky error). */
void evout_flush_file(struct evout *o);

#define EVOUT_OPS_DECL(M, name, ...) extern const struct evout_ops evout_##name;
EVOUT_FORMATS(EVOUT_OPS_DECL)
#undef EVOUT_OPS_DECL

#endif /* VMEXIT_EVENT_FORMAT_H */
