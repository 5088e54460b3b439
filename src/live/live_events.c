// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "capture_clock.h"
#include "cells.h"
#include "event_rows.h"
#include "hashmap.h"
#include "live_events.h"
#include "signals.h"
#include "startup_heap.h"
#include "tracker.h"
#include "vcpu_cache.h"
#include "vmexit.skel.h"
#include "wake_progs.h"

static const struct cmd_option options[] = {
	OPT_HEADER("Capture:", 3),
	{ "duration", 'd', "DURATION", 0, "Stop after this long (with its unit: 10s, 5m)", 3,
	  OPT_TO(struct live_args, duration_s, opt_duration_s) },
	{ "min-latency", 0, "DURATION", 0,
	  "Only exits that took at least this long (250us, 1.5ms, 2s; in the kernel)", 3,
	  OPT_TO(struct live_args, filters.sel.f.min_latency_ns, opt_min_latency) },
	{ "sample", 0, "N", 0, "Only one exit in N per vCPU thread (in the kernel)", 3,
	  OPT_TO(struct live_args, filters.opts.sample_every, opt_sample) },
	{ "ringbuf-kb", 0, "KB", 0,
	  "Ring buffer size, a power of two from 4 to 2097152 (default 16384): raise it if "
	  "records are lost",
	  3, OPT_TO(struct live_args, filters.opts.ringbuf_kb, opt_ringbuf_kb) },
	{ "kvm-events", 0, "LIST", 0,
	  "Also capture these kvm tracepoints, one event each: "
	  VMEXIT_KVM_EVENTS(KVM_EVENT_HELP_NAME)
	  "comma-separated, or all (default none; -r, --min-latency and --sample "
	  "apply to exits only)", 3,
	  OPT_TO(struct live_args, filters.opts.kvm_events, opt_kvm_events) },
	{ "keys", 0, NULL, 0, "Each exit with its key, what it was about (port, address, MSR, "
	  "CPUID leaf, hypercall), as stat --by key counts it", 3,
	  OPT_TO(struct live_args, filters.opts.key_mode, opt_key_device) },
	{},
};

/* What only stat, top and serve have: the fast path (a stream needs the classic record's
 * fields) and the key table. */
static void refuse_table_options(void *input, struct argp_state *state)
{
	struct live_args *a = input;

	if (a->filters.opts.check_hooks)
		argp_error(state, "--check-hooks checks the fast path of stat, top and serve: "
			   "stream and record always use the classic kvm_exit tracepoint");
	/* The kernel fills no key table for a stream: --keys or not, nothing to size. */
	cli_filters_keys_check(&a->filters, KEY_MODE_OFF, NULL, state);
	cli_filters_gpa_check(&a->filters, a->filters.opts.key_mode, "--keys", state);
}

const struct cmd_options live_options = {
	.options = options, .end = refuse_table_options,
	.children = (const struct cmd_child[]){
		{ &cli_filters_options, offsetof(struct live_args, filters), NULL, 0 }, {} },
};

DEFINE_HASHMAP(guest_set, struct guest_key, bool)

/* A thread's process, and the cell it was read from (which tells when the thread is gone). */
struct thread_proc {
	__u32 tgid;
	__u32 cell;
	__u64 start;
};

DEFINE_HASHMAP(thread_procs, __u32, struct thread_proc)

struct live_ctx {
	const struct live_sink *sink;
	struct session *session;
	struct name_cache *names;
	struct vcpu_cache vcpus;
	__s32 vcpu_filter;
	struct guest_set announced;	/* VMM processes announced to the sink */
	struct thread_procs procs;	/* tid -> its process */
	__u32 last_tgid;
	__u64 last_start;
	__u64 events;
	__u64 lost[NR_LOST];
	__u64 wake_lost[NR_WAKE_LOSSES];	/* --wake: the delivery programs' counters, as sent */
	__u8 *reap;			/* per cell: seen ended at the last chores */
	__u64 stuck_ns;			/* --stuck: report exits in flight this long; 0: off */
	__u64 *stuck_seen;		/* per cell: the start of the exit last reported stuck */
	__u64 now;			/* the time of this read's look at the cells */
	bool reaping;			/* this read does the chores */
	/*
	 * -d's end while tracing: a read stops there even if the ring is not empty. libbpf's
	 * consume returns only once the ring is empty, so a reader slower than the exits (an
	 * emulated host: the SVM bed) never got back to the clock, and a 1 s trace ran on until
	 * the guest stopped (54 s); the rest is read once the programs are detached. 0: none.
	 */
	__u64 read_until;
	/* This read stops here (capture_clock_read_until: a slice, or -d's end), so that the
	 * clock's work (the sink's tick: record's QMP asks) is done while the guest runs; 0: the
	 * read goes on until the ring is empty (the drain, once the programs are detached). */
	__u64 stop_at;
	bool cut;		/* the last read stopped at stop_at, the ring maybe not empty */
	__u32 since_clock;		/* events read since the clock was last looked at */
	/* stream --wake: the delivery programs, writing into the same ring; NULL skel: off. */
	struct wake_progs wake;
	const struct event_filter *filter;	/* -p, -c: the deliveries' (the kernel's: exits') */
	int err;
};

/* on_sample's "-d's end has come" (not an error): the ring buffer calls return it. */
#define READ_PAST_END	(-ETIME)

static __u64 now_ns(void)
{
	struct timespec ts;

	/* bpf_ktime_get_ns() is CLOCK_MONOTONIC: the events' time base. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/*
 * Names a VMM process the first time one of its events arrives, while it most likely still
 * runs; from then on names knows it, so that each event is named by the process that made it.
 */
static int announce_guest(struct live_ctx *c, __u32 tgid, __u64 start)
{
	struct guest_key k = guest_key_of(tgid, start);
	bool added;

	if (tgid == c->last_tgid && start == c->last_start)
		return 0;
	c->last_tgid = tgid;
	c->last_start = start;
	if (!guest_set_get(&c->announced, &k, &added))
		return -ENOMEM;
	if (!added)
		return 0;
	if (start && name_cache_born(c->names, tgid, start))
		return -ENOMEM;
	if (c->sink->guest)
		c->sink->guest(c->sink->ctx, tgid, start, name_cache_get_at(c->names, tgid, start));
	return 0;
}

/*
 * Whether the thread of cell i can have made an event of tgid at ts: its key is (tid, tgid) and
 * it had not exited by ts (a tid reused by a new thread, maybe of a new VMM on the same pid, is
 * another thread; the old one's cell stays until a round of chores after it ended).
 */
static bool cell_made(const struct session *s, __u32 i, __u32 tgid, __u32 tid, __u64 ts)
{
	const struct cell *cl = &s->cells[i];

	return cell_ready(cl) && cl->key.tid == tid && cl->key.tgid == tgid &&
	       cl->key.proc_start <= ts && !(cell_ended(cl) && ts > cl->ended_ts);
}

/*
 * The start time of the process that made ev: its thread's cells say (the kernel made one at
 * the thread's first exit of a reason, before any of its events came out), looked up once per
 * thread and checked against the cell at each event. An event with no cell of its thread (a
 * TSC offset write before the first exit) goes to the pid's process known then.
 */
static __u64 event_start(struct live_ctx *c, const struct session *s,
			 const struct vmexit_event *ev)
{
	struct thread_proc *tp = thread_procs_find(&c->procs, &ev->tid);
	__u32 n = session_nr_cells(s), best = n;
	bool added;

	/* The key is read once ready (cell_made): a recycled cell is another thread's. */
	if (tp && tp->tgid == ev->tgid && tp->cell < n &&
	    cell_made(s, tp->cell, ev->tgid, ev->tid, ev->ts_ns) &&
	    s->cells[tp->cell].key.proc_start == tp->start)
		return tp->start;
	for (__u32 i = 0; i < n; i++) {
		if (cell_made(s, i, ev->tgid, ev->tid, ev->ts_ns) &&
		    (best == n || s->cells[i].key.proc_start > s->cells[best].key.proc_start))
			best = i;
	}
	if (best == n)
		return name_cache_start_at_time(c->names, ev->tgid, ev->ts_ns);
	tp = thread_procs_get(&c->procs, &ev->tid, &added);
	if (tp)		/* else no memory: looked up again next time */
		*tp = (struct thread_proc){ ev->tgid, best, s->cells[best].key.proc_start };
	return s->cells[best].key.proc_start;
}

/* A thread's vCPU from the name the kernel stored in its statistics cell when the thread
 * made its first exit of a reason: short-lived vCPU threads are gone from /proc by the time
 * their events are read, their cells are not. */
static __s32 vcpu_from_cells(void *ctx, const struct vmexit_event *ev)
{
	const struct session *s = ctx;
	__u32 n = session_nr_cells(s);

	/* Not the cell of an exited thread whose tid ev's thread now has (cell_made). */
	for (__u32 i = 0; i < n; i++) {
		if (cell_made(s, i, ev->tgid, ev->tid, ev->ts_ns))
			return cell_key_vcpu(&s->cells[i].key);
	}
	return -1;
}

/* One event from the kernel, on its way to the sink: the ring buffer's, and the flush's. */
static int deliver(void *ctx, const struct vmexit_event *kev)
{
	struct live_ctx *c = ctx;
	struct vmexit_event ev = *kev;
	__u64 start = event_start(c, c->session, &ev);
	int err;

	vcpu_cache_resolve(&c->vcpus, &ev, start);
	/* The kernel lets userspace exits of a thread with no known vCPU through -c. */
	if (c->vcpu_filter >= 0 && ev.vcpu != c->vcpu_filter)
		return 0;
	err = announce_guest(c, ev.tgid, start);
	if (!err)
		err = c->sink->event(c->sink->ctx, &ev);
	if (err) {
		c->err = err;
		return err;	/* stops ring_buffer__poll() */
	}
	c->events++;
	return 0;
}

/* A look at the clock per this many events: a vDSO call each, against 1 ms of a backlog. */
#define READ_CLOCK_EVERY	64

static int on_sample(void *ctx, void *data, size_t len)
{
	struct live_ctx *c = ctx;
	struct vmexit_event ev = {};
	int err;

	/* Without --split the kernel sends the event without its split fields. */
	if (len < VMEXIT_EVENT_BASE_LEN)
		return 0;
	memcpy(&ev, data, len < sizeof(ev) ? len : sizeof(ev));
	err = deliver(ctx, &ev);
	if (err || !c->stop_at || ++c->since_clock < READ_CLOCK_EVERY)
		return err;
	c->since_clock = 0;
	if (now_ns() < c->stop_at)
		return 0;
	c->cut = true;
	return READ_PAST_END;
}

/*
 * The cells of exited threads go back to the kernel (stream and record read no statistics
 * from them), one round of chores (capture_clock.h) after they ended: each round reads the ring
 * first, so the thread's last events have been read by then, and its vCPU found from its cells.
 */
static void reap_cell(struct live_ctx *c, __u32 i, const struct cell *cl)
{
	if (!cell_ended(cl))
		c->reap[i] = 0;
	else if (!c->reap[i])
		c->reap[i] = 1;
	else {
		session_release_cell(c->session, i);
		c->reap[i] = 0;
	}
}

/*
 * --stuck: each exit in flight for stuck_ns or more, once, while it still is. One load per cell
 * in use at each read, and nothing on the hot path: the kernel stamps every exit in its cell.
 */
static void check_stuck(struct live_ctx *c, __u32 i, const struct cell *cl)
{
	__u64 start = cell_inflight_ts(cl);
	struct inflight_exit e;

	if (!start || start == c->stuck_seen[i] || c->now < start + c->stuck_ns || cell_ended(cl))
		return;
	c->stuck_seen[i] = start;
	inflight_of_cell(&e, &cl->key, cell_key_vcpu(&cl->key), start);
	/* The -c filter the kernel could not apply (a vCPU it did not know). */
	if (c->vcpu_filter >= 0 && e.vcpu != c->vcpu_filter)
		return;
	c->err = announce_guest(c, e.tgid, cl->key.proc_start);
	if (!c->err)
		c->sink->stuck(c->sink->ctx, &e, c->now);
}

/* One walk over the cells in use per read: --stuck, and with the chores the reaping. */
static int cell_due(void *ctx, __u32 i, const struct cell *cl)
{
	struct live_ctx *c = ctx;

	if (c->stuck_seen && !c->err)
		check_stuck(c, i, cl);
	if (c->reaping && c->reap)
		reap_cell(c, i, cl);
	return 0;
}

/* --wake: what the delivery programs could not keep grew: a delivery lost, said to the sink. */
static void check_wake_lost(struct live_ctx *c)
{
	__u64 cur[NR_WAKE_LOSSES], delta[NR_WAKE_LOSSES];
	bool grew = false;

	if (!c->wake.skel || !c->sink->wake_lost)
		return;
	wake_progs_lost(&c->wake, cur);
	cur[WAKE_LOST_RING] = wake_progs_events_lost(&c->wake);
	for (int i = 0; i < NR_WAKE_LOSSES; i++) {
		delta[i] = cur[i] - c->wake_lost[i];
		grew |= delta[i] != 0;
	}
	if (!grew)
		return;
	memcpy(c->wake_lost, cur, sizeof(cur));
	c->sink->wake_lost(c->sink->ctx, now_ns(), delta);
}

static void check_lost(struct live_ctx *c, const struct session *s)
{
	__u64 cur[NR_LOST], delta[NR_LOST];
	bool grew = false;

	check_wake_lost(c);

	/* stream --wake's deliveries the shared ring refused are the wake losses' (ring). */
	session_lost(s, cur);
	for (int i = 0; i < NR_LOST; i++) {
		delta[i] = cur[i] - c->lost[i];
		grew |= delta[i] != 0;
	}
	if (!grew)
		return;
	memcpy(c->lost, cur, sizeof(cur));
	if (c->sink->lost)
		c->sink->lost(c->sink->ctx, now_ns(), delta);
}

/*
 * What the reader does on its clock (capture_clock.h): the records the kernel did not wake it
 * for, the --stuck lines (at once), the output written out; with the chores, the loss counters
 * and the cells to reap, after the read so that every event of a thread that ended is in.
 */
static int read_due(struct live_ctx *c, struct session *s, struct ring_buffer *rb,
		    unsigned int due)
{
	const struct live_sink *sink = c->sink;
	int err = 0;

	c->stop_at = capture_clock_read_until(now_ns(), c->read_until);
	c->cut = false;
	if (!c->err)
		err = ring_buffer__consume(rb);
	if (err == READ_PAST_END)
		err = 0;
	c->now = now_ns();
	/* A thread's cell goes back only once the ring was read out after it ended: a read cut
	 * short may have its last events still unread, which need its cell (vCPU, process). */
	c->reaping = (due & CAPTURE_CHORES) && !c->cut;
	if (c->stuck_ns || c->reaping)
		cells_walk(s->cells, session_nr_cells(s), cell_due, c);
	if (due & CAPTURE_CHORES)
		check_lost(c, s);
	if (!c->err && sink->tick)
		c->err = sink->tick(sink->ctx, now_ns());
	return err < 0 ? err : 0;
}

/* Hands events to the sink until Ctrl-C, the sink fails, the command exits or end (if set):
 * 0, or 1 when the ring buffer could not be read. */
static int poll_until_end(struct live_ctx *c, struct session *s, struct ring_buffer *rb,
			  __u64 end)
{
	struct capture_clock clock;
	__u64 now = now_ns();

	capture_clock_start(&clock, now);
	c->read_until = end;
	while (!exiting && !c->err) {
		int err;
		unsigned int due;

		c->stop_at = capture_clock_read_until(now, end);
		/* The kernel wakes it only for a batch: see capture_clock.h. */
		err = ring_buffer__poll(rb, capture_clock_wait_ms(&clock, now, end));

		/* A signal: Ctrl-C ends the loop through `exiting`; others (SIGCHLD) do not. */
		if (err == -EINTR || err == READ_PAST_END)
			err = 0;
		now = now_ns();
		due = capture_clock_due(&clock, now);
		if (err >= 0 && due)
			err = read_due(c, s, rb, due);
		if (err < 0 && !c->err) {
			fprintf(stderr, "vmexit: reading the ring buffer: %s\n", strerror(-err));
			c->read_until = c->stop_at = 0;
			return 1;
		}
		if (session_command_done(s, NULL))
			break;
		if (end && now >= end)
			break;
	}
	/* What is left is read whole, once the programs are detached. */
	c->read_until = c->stop_at = 0;
	return 0;
}

/* Whatever the kernel wrote before we stopped still belongs to the capture. */
static void drain(struct live_ctx *c, const struct session *s, struct ring_buffer *rb)
{
	if (!c->err)
		ring_buffer__consume(rb);
	check_lost(c, s);
	if (!c->err && c->sink->tick)
		c->err = c->sink->tick(c->sink->ctx, now_ns());
}

/* From the start of tracing (and of the command) to its end, drained: the exit status. */
static int capture(struct live_ctx *c, struct session *s, struct ring_buffer *rb,
		   double duration_s, struct live_result *res)
{
	const struct live_sink *sink = c->sink;
	__u64 start, end = 0;
	int rc;

	/* Last, once the programs are attached: tests wait on it (lib.sh wait_tracing). */
	install_signal_handlers();
	res->started = true;
	start = now_ns();
	if (sink->start)
		c->err = sink->start(sink->ctx, start);
	if (!c->err)
		session_start_command(s);
	if (duration_s > 0)
		end = start + (__u64)(duration_s * 1e9);
	rc = poll_until_end(c, s, rb, end);
	/* Then every exit still in flight, once: nothing begins or completes after this. */
	session_stop_exits(s);
	/* Nor is a delivery: its entry would come after the stream's end. */
	if (c->wake.skel)
		wake_progs_detach(&c->wake);
	res->end_ns = now_ns();
	drain(c, s, rb);
	if (!c->err) {
		int err = session_flush_in_flight(s, res->end_ns, deliver, c);

		if (err < 0 && !c->err) {
			fprintf(stderr, "vmexit: cannot read the exits still in flight: %s\n",
				strerror(-err));
			rc = 1;
		}
	}
	/* A thread that ended meanwhile emitted what it left in flight. */
	drain(c, s, rb);
	if (!c->err && c->sink->end)
		c->err = c->sink->end(c->sink->ctx, s);
	if (c->err)
		rc = 1;
	return session_command_report(s, rc);
}

int live_run(struct live_args *a, struct name_cache *names, const struct live_sink *sink,
	     struct live_result *res)
{
	struct live_ctx c = { .sink = sink, .names = names, .vcpu_filter = a->filters.opts.filter.vcpu };
	struct ring_buffer *rb = NULL;
	struct session s = {};
	int rc = 0;
	bool opened = false;

	memset(res, 0, sizeof(*res));
	c.vcpus.use_proc = true;
	a->filters.opts.stream = true;
	if (cli_filters_open_session(&a->filters, &s)) {
		rc = 1;
		goto out;
	}
	opened = true;
	names->args = session_proc_args;
	names->args_ctx = &s;
	c.vcpus.lookup = vcpu_from_cells;
	c.vcpus.lookup_ctx = &s;
	c.session = &s;
	c.reap = calloc(s.max_cells, 1);	/* without it cells are not reused: no harm */
	c.stuck_ns = a->stuck_ns;
	if (c.stuck_ns) {
		c.stuck_seen = calloc(s.max_cells, sizeof(*c.stuck_seen));
		if (!c.stuck_seen) {
			fprintf(stderr, "vmexit: out of memory\n");
			rc = 1;
			goto out;
		}
	}
	c.filter = &a->filters.opts.filter;
	/* A delivery program that fails to load or attach fails the run, as the exits' would. */
	if (a->wake && wake_progs_open_stream(&c.wake, &(struct wake_scope){
			.pid_fd = bpf_map__fd(s.skel->maps.pid_filter),
			.filter_pids = s.skel->rodata->filter_pids,
			.vcpu = s.skel->rodata->filter_vcpu },
			bpf_map__fd(s.skel->maps.events), s.skel->rodata->stream_wake_shift)) {
		rc = 1;
		goto out;
	}
	/* Every object is loaded (the wake programs last): the heap back to glibc's ways. */
	startup_heap_release();
	rb = ring_buffer__new(bpf_map__fd(s.skel->maps.events), on_sample, &c, NULL);
	if (!rb) {
		fprintf(stderr, "vmexit: cannot open the ring buffer: %s\n", strerror(errno));
		rc = 1;
		goto out;
	}
	rc = capture(&c, &s, rb, a->duration_s, res);
out:
	res->events = c.events;
	memcpy(res->lost, c.lost, sizeof(c.lost));
	res->sink_err = c.err;
	ring_buffer__free(rb);
	if (c.wake.skel)
		wake_progs_close(&c.wake);
	/* The session lives on this stack: names must not ask it once we return. */
	names->args = NULL;
	if (opened)
		session_close(&s);
	vcpu_cache_free(&c.vcpus);
	free(c.reap);
	free(c.stuck_seen);
	guest_set_free(&c.announced);
	thread_procs_free(&c.procs);
	return rc;
}
