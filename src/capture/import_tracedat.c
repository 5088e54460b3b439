// SPDX-License-Identifier: GPL-2.0
/*
 * report -i trace.dat: a trace-cmd capture, read with libtracecmd (the records of every CPU of
 * the top buffer and of each instance, merged by time) and decoded with libtraceevent from the
 * event formats the file carries, so that the capture's kernel layout is the one read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-cmd.h>
#include "capture_import.h"
#include "tep_field.h"
#include "tracedat_guard.h"
#include "tracedat_file.h"

struct cpu_cursor {
	struct tracecmd_input *in;
	int cpu;
	struct tep_record *rec;		/* the CPU's next record, NULL when done */
};

struct tracedat_source {
	struct event_source s;
	const char *path;
	struct tracecmd_input *top;
	struct tracecmd_input **inst;	/* the instances' buffers */
	int nr_inst;
	struct tep_handle *tep;
	struct cpu_cursor *cur;
	int nr_cur;
	struct capture_import *ci;
	bool ended;
	char clock[48];
};

/* The cursor whose record comes first, or NULL when every CPU is done. */
static struct cpu_cursor *earliest(struct tracedat_source *t)
{
	struct cpu_cursor *best = NULL;

	for (int i = 0; i < t->nr_cur; i++) {
		if (t->cur[i].rec && (!best || t->cur[i].rec->ts < best->rec->ts))
			best = &t->cur[i];
	}
	return best;
}

static int feed(struct tracedat_source *t, struct tep_record *rec)
{
	struct tep_event *e;
	struct tep_field_ctx fc = { .rec = rec };
	struct tp_record r = { .field = tep_field, .ctx = &fc };
	int pid;

	if (!tep_common_fit(t->tep, rec))
		return -EBADMSG;
	e = tep_find_event_by_record(t->tep, rec);
	fc.event = e;

	if (rec->missed_events)
		/* -1: the buffer lost some, it does not know how many; at least one. */
		capture_import_missed(t->ci, rec->ts,
				      rec->missed_events > 0 ? (__u64)rec->missed_events : 1);
	if (!e || !e->system || strcmp(e->system, "kvm"))
		return 0;
	pid = tep_data_pid(t->tep, rec);
	r.event = e->name;
	r.ts_ns = rec->ts;
	r.tid = pid > 0 ? (__u32)pid : 0;
	r.cpu = (__u32)rec->cpu;
	r.comm = pid > 0 ? tep_data_comm_from_pid(t->tep, pid) : "";
	return capture_import_add(t->ci, &r);
}

static int tracedat_next(struct event_source *s, struct rec_item *item, char *err,
			 size_t errlen)
{
	struct tracedat_source *t = (struct tracedat_source *)s;

	while (!capture_import_pop(t->ci, item)) {
		struct cpu_cursor *c;
		int ret;

		if (t->ended)
			return 0;
		c = earliest(t);
		if (!c) {
			t->ended = true;
			capture_import_end(t->ci);
			capture_import_notes(t->ci);
			continue;
		}
		ret = feed(t, c->rec);
		if (ret) {
			snprintf(err, errlen, "%s: offset %llu: %s", t->path, c->rec->offset,
				 ret == -EBADMSG ? "damaged trace.dat: a record shorter than "
				 "where the event formats place its type and pid" : strerror(-ret));
			return -1;
		}
		tracecmd_free_record(c->rec);
		c->rec = tracecmd_read_data(c->in, c->cpu);
	}
	return 1;
}

static void tracedat_close(struct event_source *s)
{
	struct tracedat_source *t = (struct tracedat_source *)s;

	for (int i = 0; i < t->nr_cur; i++) {
		if (t->cur[i].rec)
			tracecmd_free_record(t->cur[i].rec);
	}
	free(t->cur);
	for (int i = 0; i < t->nr_inst; i++)
		tracecmd_close(t->inst[i]);
	free(t->inst);
	if (t->top)
		tracecmd_close(t->top);
	capture_import_free(t->ci);
	free(t);
}

/*
 * The capture's clock as the header names it: the tracefs clocks that are the kernel's POSIX
 * ones by that name, the others as the trace_clock setting they came from. Each buffer says
 * its own (format 7): the first that holds records speaks for the capture.
 */
static void tracedat_clock(struct tracedat_source *t)
{
	struct tracecmd_input *in = t->top;
	static const char *const posix[][2] = {
		{ "mono", "CLOCK_MONOTONIC" }, { "mono_raw", "CLOCK_MONOTONIC_RAW" },
		{ "boot", "CLOCK_BOOTTIME" }, { "tai", "CLOCK_TAI" },
	};
	const char *c;

	for (int i = t->nr_cur - 1; i >= 0; i--) {
		if (t->cur[i].rec)
			in = t->cur[i].in;
	}
	c = tracecmd_get_trace_clock(in);
	/* A file without the option was taken on trace-cmd's default. */
	if (!c || !*c)
		c = "local";
	snprintf(t->clock, sizeof(t->clock), "trace_clock=%s", c);
	for (size_t i = 0; i < sizeof(posix) / sizeof(posix[0]); i++) {
		if (!strcmp(c, posix[i][0]))
			snprintf(t->clock, sizeof(t->clock), "%s", posix[i][1]);
	}
	t->s.clock = t->clock;
}

static const struct event_source_ops tracedat_ops = {
	.next = tracedat_next, .close = tracedat_close,
};

/* A cursor on each CPU of in; 0 or -ENOMEM. */
static int add_cursors(struct tracedat_source *t, struct tracecmd_input *in)
{
	int cpus = tep_get_cpus(tracecmd_get_tep(in));
	struct cpu_cursor *n;

	if (cpus <= 0)
		return 0;
	n = reallocarray(t->cur, t->nr_cur + cpus, sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->cur = n;
	for (int cpu = 0; cpu < cpus; cpu++) {
		struct cpu_cursor *c = &t->cur[t->nr_cur++];

		c->in = in;
		c->cpu = cpu;
		c->rec = tracecmd_read_data(in, cpu);
	}
	return 0;
}

struct event_source *tracedat_source_open(const char *path, char *err, size_t errlen)
{
	struct tracedat_source *t = calloc(1, sizeof(*t));
	int n;

	if (!t)
		goto nomem;
	t->s.ops = &tracedat_ops;
	t->s.lost_source = LOST_SRC_TRACE_CMD;
	/* Keys from the capture's own kvm_pio, kvm_mmio... (capture_import.c). */
	t->s.meta.keys = true;
	t->path = path;
	/* A damaged header or section is named here; a format libtraceevent crashes on too. */
	if (tracedat_guard(path, err, errlen)) {
		free(t);
		return NULL;
	}
	/* The library's own warnings (formats it cannot parse) would say nothing to our user. */
	tracecmd_set_loglevel(TEP_LOG_NONE);
	t->top = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!t->top) {
		/* libtracecmd says neither where nor why, and the checks found nothing. */
		snprintf(err, errlen, "%s: damaged trace.dat: libtracecmd refused it, past the "
			 "checks of its header and sections (it does not say where)", path);
		free(t);
		return NULL;
	}
	t->tep = tracecmd_get_tep(t->top);
	t->ci = capture_import_new(path, "trace-cmd trace.dat", true);
	if (!t->ci || add_cursors(t, t->top))
		goto nomem_close;
	/* `trace-cmd record -B` / `extract -B` keep a tracefs instance's events apart. */
	n = tracecmd_buffer_instances(t->top);
	t->inst = n > 0 ? calloc(n, sizeof(*t->inst)) : NULL;
	if (n > 0 && !t->inst)
		goto nomem_close;
	for (int i = 0; i < n; i++) {
		struct tracecmd_input *in = tracecmd_buffer_instance_handle(t->top, i);

		if (!in)
			continue;
		t->inst[t->nr_inst++] = in;
		if (add_cursors(t, in))
			goto nomem_close;
	}
	tracedat_clock(t);
	return &t->s;
nomem_close:
	tracedat_close(&t->s);
nomem:
	snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
	return NULL;
}
