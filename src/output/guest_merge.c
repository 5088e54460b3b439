// SPDX-License-Identifier: GPL-2.0
/* A guest's own trace into the Perfetto output, on the host's clock (guest_merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	struct stat st;

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
	/*
	 * A guest trace is read twice (placed, then written) and a trace.dat by offsets: a FIFO
	 * or a terminal gives its bytes once. A missing file is said when it is opened.
	 */
	if (!stat(s->path, &st) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s': %s is not a regular file (a pipe?): a guest trace is "
			 "read twice, copy it to a file first", arg, s->path);
		return -EINVAL;
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
	const struct guest_merge_ctx *mc;
	struct evout *out;
	bool dry;			/* the first pass: placed and counted, not written */
	struct merge_track *tracks;
	size_t nr, cap;
	__u64 events;
	__u64 before, after;		/* events placed outside the recording's span */
	__u64 before_max, after_max;	/* and how far out, ns */
	__u64 after_min;		/* the nearest after its end */
	double err_max;			/* the largest error bound of a placed time, ns */
	__u64 neg;			/* times that land before the clock's 0 */
	unsigned int neg_line;		/* the first of them */
};

/* Where a placed time falls against the recording (first pass). */
static void tally(struct merge *m, __u64 ns)
{
	const struct guest_merge_ctx *mc = m->mc;
	double e = guest_clock_error_ns(m->gc, ns);

	if (e > m->err_max)
		m->err_max = e;
	if (ns < mc->span_from) {
		m->before++;
		if (mc->span_from - ns > m->before_max)
			m->before_max = mc->span_from - ns;
	} else if (ns > mc->span_to) {
		if (!m->after++ || ns - mc->span_to < m->after_min)
			m->after_min = ns - mc->span_to;
		if (ns - mc->span_to > m->after_max)
			m->after_max = ns - mc->span_to;
	}
}

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
			return -EOVERFLOW;	/* said: not counted as outside the recording */
		}
		t = (__u64)ticks;
	}
	ret = guest_clock_to_host(m->gc, m->tgid, vcpu, t, ns);
	if (ret == -EOVERFLOW) {
		fprintf(stderr, "vmexit: %s:%u: guest time %llu of guest '%s' lands past 2^63 host "
			"ns at the recording's TSC rate (%.3f MHz): is --tsc-mhz right?\n",
			m->s->path, e->line, (unsigned long long)t, text_esc(nb, m->s->guest),
			m->gc->tsc_hz / 1e6);
		return ret;	/* said */
	}
	/* Said after the first pass, with what the whole file tells (a uftrace file). */
	if (ret == -ERANGE && !m->neg++)
		m->neg_line = e->line;
	return ret;
}

static int one_event(void *ctx, const struct guest_trace_event *e)
{
	struct merge *m = ctx;
	struct trace_guest_event ge = { .tgid = m->tgid, .ph = e->ph, .name = e->name };
	char track[64], nb[TEXT_NAME_MAX];
	__s32 vcpu = guest_clock_vcpu(m->gc, m->tgid, e->vcpu);
	int idx, ret;

	if (vcpu < 0) {
		if (e->vcpu >= 0)
			fprintf(stderr, "vmexit: %s:%u: vCPU %d of guest '%s' has no TSC offset "
				"in %s\n", m->s->path, e->line, e->vcpu,
				text_esc(nb, m->s->guest), m->mc->capture);
		else
			fprintf(stderr, "vmexit: --guest-trace %s: guest '%s' has no TSC offset "
				"in %s (record it with debugfs mounted, or from before the VM "
				"starts)\n", m->s->path, text_esc(nb, m->s->guest),
				m->mc->capture);
		return -EINVAL;
	}
	ret = place(m, e, vcpu, e->ts, &ge.ts_ns);
	if (!ret && e->ph == 'X') {
		__u64 end;

		ret = place(m, e, vcpu, e->ts + e->dur, &end);
		ge.dur_ns = end > ge.ts_ns ? end - ge.ts_ns : 0;
	}
	if (ret == -ERANGE && m->dry)
		return 0;	/* counted: the first pass goes on to learn the file's kind */
	if (ret)
		return -EINVAL;
	m->events++;
	if (m->dry) {
		tally(m, ge.ts_ns);
		return 0;
	}
	idx = track_of(m, e, track, sizeof(track));
	if (idx < 0)
		return idx;
	ge.track = idx;
	ge.track_name = track;
	evout_guest_event(m->out, &ge);
	return m->out->err;
}

/* KVM traced offsets of this guest that it did not apply: placed by the applied ones. */
static void say_mismatch(const struct merge *m)
{
	const struct guest_tsc_mismatch *last = NULL;
	char nb[TEXT_NAME_MAX];
	size_t n = 0;

	/* The latest: the offset the guest was meant to run with last. */
	for (size_t i = 0; i < m->gc->nr_mis; i++) {
		if (m->gc->mis[i].tgid != m->tgid)
			continue;
		n++;
		last = &m->gc->mis[i];
	}
	if (!n)
		return;
	fprintf(stderr, "vmexit: note: --guest-trace %s: KVM traced the TSC offset %lld for "
		"vCPU %d of guest '%s' but applies %lld (its debugfs tsc-offset; %zu write%s so): "
		"placed by the applied one\n", m->s->path, (long long)last->traced, last->vcpu,
		text_esc(nb, m->s->guest), (long long)last->applied, n, n == 1 ? "" : "s");
}

static void fmt_s(char *buf, size_t len, __u64 ns)
{
	snprintf(buf, len, "%.6f s", ns / 1e9);
}

/*
 * Events outside the recording: all of them is an error (unless kept), some a note. Those
 * before the host clock's 0 cannot be placed at all, kept or not: an error. A trace whose
 * offset KVM traced and did not apply lands there on a host whose TSC has not yet run past
 * the offset (2^50 ticks is days), before the recording's start on one up for longer.
 */
static int say_outside(const struct merge *m)
{
	const struct guest_merge_ctx *mc = m->mc;
	__u64 out = m->before + m->after + m->neg, all = m->events + m->neg;
	bool fatal = m->neg || (out == all && !mc->keep_outside);
	char a[32], b[32], c[32], nb[TEXT_NAME_MAX];
	char sep = ':';

	if (!out)
		return 0;
	fmt_s(a, sizeof(a), m->before_max);
	fmt_s(b, sizeof(b), m->after_min);
	fmt_s(c, sizeof(c), m->after_max);
	fprintf(stderr, "vmexit: %s--guest-trace %s: %s%llu of its %llu events fall%s outside "
		"the recording of guest '%s' (%.3f s long)", fatal ? "" : "note: ", m->s->path,
		out == all ? "all " : "", (unsigned long long)out, (unsigned long long)all,
		out == 1 ? "s" : "", text_esc(nb, m->s->guest),
		(mc->span_to - mc->span_from) / 1e9);
	if (m->neg) {
		fprintf(stderr, ": %llu before the host clock's 0 (the first at line %u), where "
			"nothing can be placed", (unsigned long long)m->neg, m->neg_line);
		sep = ';';
	}
	if (m->before) {
		fprintf(stderr, "%c %llu before its start, by up to %s", sep,
			(unsigned long long)m->before, a);
		sep = ';';
	}
	if (m->after)
		fprintf(stderr, "%c %llu after its end, by %s to %s", sep,
			(unsigned long long)m->after, b, c);
	if (!fatal && out < all) {
		fprintf(stderr, " (the trace runs longer than the recording)\n");
		return 0;
	}
	fprintf(stderr, ": a trace of another run, another clock (clock=ns?) or an offset KVM "
		"did not apply%s\n", m->neg || mc->keep_outside ? "" :
		" (--keep-outside writes it anyway)");
	return fatal ? -EINVAL : 0;
}

/* The route's error bound against the exits the trace is lined up with. */
static void say_bound(const struct merge *m, enum guest_trace_kind kind)
{
	char nb[TEXT_NAME_MAX];

	if (kind == GUEST_TRACE_UFTRACE && !m->s->ns)
		fprintf(stderr, "vmexit: warning: --guest-trace %s: a uftrace trace read as guest "
			"TSC ticks: uftrace stamps nanoseconds of the guest's clock (add "
			"',clock=ns') unless it was patched to stamp the TSC\n", m->s->path);
	if (!m->mc->exit_ns)
		return;
	if (m->s->ns)
		fprintf(stderr, "vmexit: warning: --guest-trace %s: clock=ns places guest '%s' "
			"only as well as its clock matches its TSC (the guest's boot offset: from "
			"its vCPUs' creation to its clock's start, unknown here and typically "
			"0.1 s or more), far more than its exits (about %llu ns): for an exact "
			"timeline trace the guest with `trace-cmd record -C x86-tsc`\n", m->s->path,
			text_esc(nb, m->s->guest), (unsigned long long)m->mc->exit_ns);
	else if (m->err_max > (double)m->mc->exit_ns)
		fprintf(stderr, "vmexit: warning: --guest-trace %s: guest TSCs are placed to "
			"within %.0f ns (the host TSC's rate over the recording), more than guest "
			"'%s''s exits (about %llu ns): give the rate with --tsc-mhz, or record "
			"shorter\n", m->s->path, m->err_max, text_esc(nb, m->s->guest),
			(unsigned long long)m->mc->exit_ns);
}

int guest_merge(const struct guest_trace_spec *s, __u32 tgid, const struct guest_clock *gc,
		const struct guest_merge_ctx *mc, struct evout *out)
{
	struct merge m = { .s = s, .tgid = tgid, .gc = gc, .mc = mc, .out = out, .dry = true };
	enum guest_trace_kind kind = GUEST_TRACE_JSON;
	char err[512] = "";
	int ret;

	say_mismatch(&m);
	/* Placed twice: nothing is written of a trace that lands wholly outside. */
	ret = guest_trace_read_kind(s->path, one_event, &m, &kind, err, sizeof(err));
	if (!ret) {
		ret = say_outside(&m);
		if (ret)
			return ret;
		/* After: a trace refused as outside needs no word on how well it is placed. */
		say_bound(&m, kind);
		m.dry = false;
		m.events = 0;
		ret = guest_trace_read(s->path, one_event, &m, err, sizeof(err));
	}
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
