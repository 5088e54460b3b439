// SPDX-License-Identifier: GPL-2.0
/* A guest's own trace into the Perfetto output, on the host's clock (guest_merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array_grow.h"
#include "guest_merge.h"
#include "guest_trace.h"
#include "text_escape.h"
#include "trace_writer.h"

int guest_trace_spec_parse(const char *arg, struct guest_trace_spec *s, char *err,
			   size_t errlen)
{
	const char *eq = strchr(arg, '='), *opt;
	size_t glen, plen;

	memset(s, 0, sizeof(*s));
	if (!eq || eq == arg || !eq[1]) {
		snprintf(err, errlen, "'%s' is not GUEST=FILE[,clock=ns]", arg);
		return -EINVAL;
	}
	glen = eq - arg;
	opt = strstr(eq + 1, ",clock=");
	plen = opt ? (size_t)(opt - eq - 1) : strlen(eq + 1);
	if (glen >= sizeof(s->guest) || plen >= sizeof(s->path) || !plen) {
		snprintf(err, errlen, "'%s': guest name or file name too long or empty", arg);
		return -EINVAL;
	}
	memcpy(s->guest, arg, glen);
	memcpy(s->path, eq + 1, plen);
	if (opt) {
		opt += strlen(",clock=");
		if (strcmp(opt, "ns") && strcmp(opt, "tsc")) {
			snprintf(err, errlen, "'%s': clock=%s is not a clock (ns: guest "
				 "nanoseconds; tsc: guest TSC ticks, the default)", arg, opt);
			return -EINVAL;
		}
		s->ns = !strcmp(opt, "ns");
	}
	return 0;
}

/* The guest threads seen, each a track: by vCPU when the events say it, else pid/tid. */
struct merge_track {
	__s32 vcpu;
	__s64 pid, tid;
};

struct merge {
	const struct guest_trace_spec *s;
	__u32 tgid;
	const struct guest_clock *gc;
	struct evout *out;
	const char *capture;
	struct merge_track *tracks;
	size_t nr, cap;
	__u64 events;
};

static int track_of(struct merge *m, const struct guest_trace_event *e, char *name, size_t len)
{
	size_t i;

	for (i = 0; i < m->nr; i++) {
		const struct merge_track *t = &m->tracks[i];

		if (e->vcpu >= 0 ? t->vcpu == e->vcpu :
				   t->vcpu < 0 && t->pid == e->pid && t->tid == e->tid)
			break;
	}
	if (i == m->nr) {
		if (array_reserve(m->tracks, m->nr, m->cap, 8))
			return -ENOMEM;
		m->tracks[m->nr++] = (struct merge_track){ .vcpu = e->vcpu, .pid = e->pid,
							   .tid = e->tid };
	}
	if (e->vcpu >= 0)
		snprintf(name, len, "guest vCPU %d", e->vcpu);
	else if (e->tid >= 0)
		snprintf(name, len, "guest tid %lld", (long long)e->tid);
	else if (e->pid >= 0)	/* uftrace leaves tid out of a single-threaded trace */
		snprintf(name, len, "guest pid %lld", (long long)e->pid);
	else
		snprintf(name, len, "guest");
	return (int)i;
}

/* One guest time (TSC ticks, or ns with clock=ns, times 1000 as read) on the host's clock. */
static int place(struct merge *m, const struct guest_trace_event *e, __s32 vcpu, __u64 t,
		 __u64 *ns)
{
	char nb[TEXT_NAME_MAX];
	int ret;

	if (m->s->ns) {	/* guest ns to guest ticks, at the vCPU's guest TSC rate */
		long double ticks = (long double)t * guest_clock_guest_hz(m->gc, m->tgid, vcpu) /
				    1e9L;

		/* Past 2^64 the conversion would be undefined: no guest TSC says that. */
		if (!(ticks < 0x1p64L)) {
			fprintf(stderr, "vmexit: %s:%u: guest time %llu ns is past 2^64 TSC ticks "
				"of guest '%s' (clock=ns): not a time of this recording\n",
				m->s->path, e->line, (unsigned long long)t,
				text_esc(nb, m->s->guest));
			return -ERANGE;
		}
		t = (__u64)ticks;
	}
	ret = guest_clock_to_host(m->gc, m->tgid, vcpu, t, ns);
	if (ret == -ERANGE)
		fprintf(stderr, "vmexit: %s:%u: guest time %llu lands before the host clock's "
			"0 for guest '%s' (%s): a trace of another run or clock (clock=ns?)\n",
			m->s->path, e->line, (unsigned long long)t, text_esc(nb, m->s->guest),
			m->s->ns ? "clock=ns" : "TSC ticks");
	return ret;
}

static int one_event(void *ctx, const struct guest_trace_event *e)
{
	struct merge *m = ctx;
	struct trace_guest_event ge = { .tgid = m->tgid, .ph = e->ph, .name = e->name };
	char track[64], nb[TEXT_NAME_MAX];
	__s32 vcpu = guest_clock_vcpu(m->gc, m->tgid, e->vcpu);
	int idx;

	if (vcpu < 0) {
		if (e->vcpu >= 0)
			fprintf(stderr, "vmexit: %s:%u: vCPU %d of guest '%s' has no TSC offset "
				"in %s\n", m->s->path, e->line, e->vcpu,
				text_esc(nb, m->s->guest), m->capture);
		else
			fprintf(stderr, "vmexit: --guest-trace %s: guest '%s' has no TSC offset "
				"in %s (KVM writes it as the vCPU is created: record from before "
				"the VM starts)\n", m->s->path, text_esc(nb, m->s->guest),
				m->capture);
		return -EINVAL;
	}
	idx = track_of(m, e, track, sizeof(track));
	if (idx < 0)
		return idx;
	ge.track = idx;
	ge.track_name = track;
	if (place(m, e, vcpu, e->ts, &ge.ts_ns))
		return -EINVAL;
	if (e->ph == 'X') {
		__u64 end;

		if (place(m, e, vcpu, e->ts + e->dur, &end))
			return -EINVAL;
		ge.dur_ns = end > ge.ts_ns ? end - ge.ts_ns : 0;
	}
	m->events++;
	evout_guest_event(m->out, &ge);
	return m->out->err;
}

int guest_merge(const struct guest_trace_spec *s, __u32 tgid, const struct guest_clock *gc,
		struct evout *out, const char *capture)
{
	struct merge m = { .s = s, .tgid = tgid, .gc = gc, .out = out, .capture = capture };
	char err[512] = "";
	int ret = guest_trace_read(s->path, one_event, &m, err, sizeof(err));

	free(m.tracks);
	if (ret && ret == out->err)
		return ret;
	if (ret == -EINVAL && !err[0])
		return ret;		/* said by one_event */
	if (ret && !err[0]) {
		fprintf(stderr, "vmexit: --guest-trace: %s: %s\n", s->path, strerror(-ret));
		return ret;
	}
	if (ret) {
		fprintf(stderr, "vmexit: --guest-trace: %s\n", err);
		return -EINVAL;
	}
	return 0;
}
