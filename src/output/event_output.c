// SPDX-License-Identifier: GPL-2.0
/*
 * The per-event output: what every format shares, and the table of formats (EVOUT_FORMATS in
 * event_output.h) whose operations (event_format.h) do the rest.
 */
#include <errno.h>
#include <string.h>
#include "event_format.h"
#include "lost_causes.h"
#include "out_write.h"
#include "reasons.h"
#include "wake_rows.h"

static const struct evout_ops *const formats[] = {
#define EVOUT_OPS_ENTRY(M, name, ...) [EVOUT_##M] = &evout_##name,
	EVOUT_FORMATS(EVOUT_OPS_ENTRY)
#undef EVOUT_OPS_ENTRY
};

int evout_open(struct evout *o, const struct evout_opts *opts)
{
	char err[512];
	int ret = 0;

	memset(o, 0, sizeof(*o));
	o->mode = opts->mode;
	o->ops = formats[opts->mode];
	o->tsc_mhz = opts->tsc_mhz;
	o->split = opts->split;
	o->keys = opts->keys;
	o->clock = opts->clock;
	o->names = opts->names;
	o->f = stdout;
	if (o->ops->state_size) {
		o->state = calloc(1, o->ops->state_size);
		if (!o->state) {
			fprintf(stderr, "vmexit: out of memory opening the output\n");
			return -ENOMEM;
		}
	}
	if (o->ops->open)
		ret = o->ops->open(o, opts, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "vmexit: %s\n", err);
		evout_close(o);
	}
	return ret;
}

int evout_event(struct evout *o, const struct vmexit_event *ev)
{
	if (o->err)
		return o->err;
	if (!o->first_ts)
		o->first_ts = ev->ts_ns;
	o->events++;
	o->err = o->ops->event(o, ev);
	return o->err;
}

void evout_guest(struct evout *o, __u32 tgid, __u64 start, const char *name)
{
	(void)start;	/* a trace's process is its pid: the name it shows is the latest */
	if (o->ops->guest)
		o->ops->guest(o, tgid, name);
}

void evout_stuck(struct evout *o, const struct inflight_exit *e, __u64 now_ns)
{
	const char *guest = name_cache_get_at_time(o->names, e->tgid, e->start_ns);
	const char *rname = reason_name(e->isa, e->reason);
	char rb[REASON_STR_MAX];

	if (o->err)
		return;
	if (!rname)
		rname = reason_str(e->isa, e->reason, rb, sizeof(rb));
	o->ops->stuck(o, e, inflight_age(e, now_ns), guest, rname);
	if (!o->err)
		o->err = out_error(o->f);
}

void evout_lost(struct evout *o, __u64 ts_ns, const __u64 delta[NR_LOST])
{
	for (int i = 0; i < NR_LOST; i++) {
		if (!delta[i])
			continue;
		o->lost[i] += delta[i];
		if (lost_cause_drops_events(i))
			o->ops->lost(o, ts_ns, delta[i], i);
	}
}

void evout_wake_lost(struct evout *o, __u64 ts_ns, const __u64 delta[NR_WAKE_LOSSES])
{
	for (int i = 0; i < NR_WAKE_LOSSES; i++) {
		if (!delta[i])
			continue;
		o->wake_lost[i] += delta[i];
		if (i != WAKE_LOST_CELLS && !o->err && o->ops->wake_lost)
			o->ops->wake_lost(o, ts_ns, delta[i], i);
	}
}

bool evout_mode_has_wake(enum evout_mode m)
{
	return m >= 0 && m < EVOUT_NR && formats[m]->wake_lost;
}

void evout_wake_summary(FILE *f, const __u64 lost[NR_WAKE_LOSSES])
{
	for (int l = 0; l < NR_WAKE_LOSSES; l++)
		if (lost[l])
			fprintf(f, "vmexit: --wake lost: %llu %s\n", (unsigned long long)lost[l],
				wake_lost_name(l));
}

void evout_counter(struct evout *o, const char *name, __u64 ts_ns, double value)
{
	if (!o->err && o->ops->counter)
		o->ops->counter(o, name, ts_ns, value);
}

void evout_guest_event(struct evout *o, const struct trace_guest_event *e)
{
	if (!o->err && o->ops->guest_event)
		o->ops->guest_event(o, e);
}

bool evout_has_guest_events(const struct evout *o)
{
	return o->ops && o->ops->guest_event;
}

void evout_flush_file(struct evout *o)
{
	if (fflush(o->f) && !o->err)
		o->err = -errno;
}

void evout_flush(struct evout *o)
{
	if (o->ops->flush)
		o->ops->flush(o);
}

int evout_close(struct evout *o)
{
	int ret;

	if (o->ops && o->ops->close) {
		ret = o->ops->close(o);
		if (ret && !o->err)
			o->err = ret;
	}
	if (o->f && fflush(o->f) && !o->err)
		o->err = -errno;
	if (o->own_file && fclose(o->f) && !o->err)
		o->err = -errno;
	o->f = NULL;
	o->own_file = false;
	free(o->state);
	o->state = NULL;
	return o->err;
}

void evout_summary(FILE *f, const char *tail, __u64 events, const __u64 lost[NR_LOST])
{
	__u64 dropped = 0;
	bool first = true;

	for (int i = 0; i < NR_LOST; i++) {
		if (lost_cause_drops_events(i))
			dropped += lost[i];
	}
	fprintf(f, "vmexit: %llu events, %llu lost", (unsigned long long)events,
		(unsigned long long)dropped);
	for (int i = 0; i < NR_LOST; i++) {
		if (!lost[i] || !lost_cause_drops_events(i))
			continue;
		fprintf(f, "%s%s %llu", first ? " (" : ", ", lost_cause_text(i),
			(unsigned long long)lost[i]);
		first = false;
	}
	fprintf(f, "%s%s%s\n", first ? "" : ")", tail ? "; " : "", tail ? tail : "");
}
