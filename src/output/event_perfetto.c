// SPDX-License-Identifier: GPL-2.0
/*
 * The per-event format of --perfetto: a Perfetto trace, in the trace format asked for
 * (--perfetto-format, or by the file name): trace_writer.h lists the writers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "event_format.h"
#include "lost_causes.h"
#include "trace_writer.h"
#include "wake_rows.h"

/* The format's own state (o->state). */
struct perfetto_state {
	const struct trace_writer_ops *tw;	/* the trace format's writer */
	void *pw;				/* its state */
};

static struct perfetto_state *pf(const struct evout *o)
{
	return o->state;
}

static int perfetto_fmt_open(struct evout *o, const struct evout_opts *opts, char *err,
			     size_t errlen)
{
	if (strcmp(opts->arg[EVOUT_PERFETTO], "-")) {
		o->f = fopen(opts->arg[EVOUT_PERFETTO], "we");
		if (!o->f) {
			int e = errno;

			snprintf(err, errlen, "cannot create %s: %s", opts->arg[EVOUT_PERFETTO],
				 strerror(e));
			return -e;
		}
		o->own_file = true;
	}
	pf(o)->tw = trace_writer_for(opts->perfetto_format, opts->arg[EVOUT_PERFETTO]);
	pf(o)->pw = pf(o)->tw->open(o->f, opts->clock);
	if (!pf(o)->pw) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static int perfetto_fmt_event(struct evout *o, const struct vmexit_event *ev)
{
	pf(o)->tw->event(pf(o)->pw, ev, NULL);
	return 0;
}

static void perfetto_fmt_guest(struct evout *o, __u32 tgid, const char *name)
{
	if (pf(o)->pw)
		pf(o)->tw->guest(pf(o)->pw, tgid, name);
}

static void perfetto_fmt_stuck(struct evout *o, const struct inflight_exit *e, __u64 age_ns,
			       const char *guest, const char *rname)
{
	char line[256];

	snprintf(line, sizeof(line), "stuck: %s of %s (tid %u) in flight for %.6f s", rname,
		 guest, e->tid, age_ns / 1e9);
	pf(o)->tw->stuck(pf(o)->pw, e->start_ns + age_ns, line);
}

static void perfetto_fmt_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	pf(o)->tw->lost(pf(o)->pw, ts_ns, n, lost_cause_text(cause));
}

/*
 * stream --wake: deliveries lost where they were lost, as the exits' losses are, the cause
 * saying they were --wake's (a flow is missing there, not an exit).
 */
static void perfetto_fmt_wake_lost(struct evout *o, __u64 ts_ns, __u64 n, int cause)
{
	char what[128];

	snprintf(what, sizeof(what), "--wake: %s", wake_lost_name(cause));
	pf(o)->tw->lost(pf(o)->pw, ts_ns, n, what);
}

static void perfetto_fmt_counter(struct evout *o, const char *name, __u64 ts_ns, double value)
{
	if (pf(o)->pw)
		pf(o)->tw->counter(pf(o)->pw, name, ts_ns, value);
}

static void perfetto_fmt_guest_event(struct evout *o, const struct trace_guest_event *e)
{
	if (pf(o)->pw)
		pf(o)->tw->guest_event(pf(o)->pw, e);
}

static int perfetto_fmt_close(struct evout *o)
{
	int ret = 0;

	if (pf(o)->pw)
		ret = pf(o)->tw->close(pf(o)->pw);
	pf(o)->pw = NULL;
	return ret;
}

/* No flush: the trace is one JSON document, whole only at close. */
const struct evout_ops evout_perfetto = {
	.state_size = sizeof(struct perfetto_state),
	.open = perfetto_fmt_open, .event = perfetto_fmt_event, .guest = perfetto_fmt_guest,
	.stuck = perfetto_fmt_stuck, .lost = perfetto_fmt_lost,
	.wake_lost = perfetto_fmt_wake_lost, .counter = perfetto_fmt_counter,
	.guest_event = perfetto_fmt_guest_event, .close = perfetto_fmt_close,
};
