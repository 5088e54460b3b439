// SPDX-License-Identifier: GPL-2.0
/* vmexit record: every exit, the guests' names and the losses into a file for `vmexit report`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli_filters.h"
#include "commands.h"
#include "durations.h"
#include "event_output.h"
#include "live_events.h"
#include "kvm_tsc_state.h"
#include "record_file.h"
#include "record_tsc.h"
#include "wake_progs.h"
#include "wake_rows.h"
#include "qmp_names.h"
#include "qmp_ask.h"
#include "qmp_option.h"
#include "stack_options.h"
#include "stack_snapshot.h"

/* How often buffered records reach the file: a kill -9 loses at most this much. */
#define FLUSH_EVERY_NS	1000000000ull

static const char doc[] =
"Record KVM exits into a file, for `vmexit report` (which needs no root).\n"
"\n"
"USAGE: vmexit record -o FILE [OPTION...] [-- COMMAND [ARG...]]\n"
"\n"
"Stores every exit with its details (one still in flight when recording\n"
"ends, or when its thread exits, flagged in_flight with its age so far), the\n"
"guests' names, and how many records the kernel lost and why. Ends on\n"
"Ctrl-C, SIGTERM or SIGHUP, after -d seconds or when COMMAND exits; the file\n"
"is complete and closed in each case. Records reach the file at least once a\n"
"second, so even a killed recorder leaves a readable file; on a full disk it\n"
"says how many exits the file holds. --kvm-events records other kvm\n"
"tracepoints too (see `vmexit stream --help`). Each traced vCPU's TSC offset\n"
"and scaling as KVM applies them are read from KVM's debugfs as recording\n"
"starts, when a VMM appears and after each offset write, for report\n"
"--guest-trace of guests started long before (mount -t debugfs none\n"
"/sys/kernel/debug where it is not mounted).\n"
"\n"
"EXAMPLES:\n"
"    vmexit record -o exits.vmexit -d 60s  # one minute of every VM\n"
"    vmexit record -o web.vmexit -g web01  # one guest, until Ctrl-C\n"
"    vmexit record -o slow.vmexit --min-latency 100us   # slow exits only\n"
"    vmexit record -o run.vmexit -- qemu-system-x86_64 ...   # from its start\n"
"    vmexit record -o io.vmexit --kvm-events all   # other kvm events too\n"
"    vmexit record -o st.vmexit --split --stacks   # kernel stacks too\n"
"    vmexit record -o k.vmexit --keys --qmp auto   # QEMU's names kept\n"
"    vmexit record -o w.vmexit --wake -p 4242   # + each interrupt delivery\n"
"    vmexit report -i exits.vmexit         # then: the stat table, offline\n"
"\v" DURATION_HELP;

struct record_args {
	struct live_args live;
	const char *path;
	bool force;
	double tsc_mhz;
	struct stack_opts stk;
	const char *qmp;	/* --qmp */
	int qmp_timeout_ms;	/* --qmp-timeout; 0: the default */
};

static const struct cmd_option options[] = {
	OPT_HEADER("Output:", 2),
	{ "output", 'o', "FILE", 0, "Write the recording to FILE (- for standard output)", 2,
	  OPT_TO(struct record_args, path, opt_string) },
	{ "force", 0, NULL, 0, "Overwrite FILE if it exists", 2,
	  OPT_TO(struct record_args, force, opt_true) },
	{ "tsc-mhz", 0, "MHZ", 0, "Store the TSC frequency (report's cycle columns)", 2,
	  OPT_TO(struct record_args, tsc_mhz, opt_tsc_mhz) },
	QMP_OPTION(struct record_args, qmp, 2),
	{ "wake", 0, NULL, 0, "(x86, arm64) Also each interrupt delivered to a vCPU (posted ones too), "
	  "each halt and each halted exit, with their parts (the events of stream --wake): "
	  "report prints stat --wake's delivery rows, halted exits and halt-poll advice from "
	  "them, --perfetto a flow from pending to the entry and a slice per halt. "
	  "Deliveries the kernel could not keep are counted and reported", 2, OPT_TO(struct record_args, live.wake, opt_true) },
	{},
};

static void need_output(void *input, struct argp_state *state)
{
	struct record_args *a = input;

	if (!a->path)
		argp_error(state, "give the output file with -o FILE");
	if (a->qmp && a->live.filters.opts.key_mode != KEY_MODE_DEVICE)
		argp_error(state, "--qmp names ports and addresses: add --keys");
	qmp_option_check(a->qmp, a->qmp_timeout_ms, state);
	stack_opts_apply(&a->stk, &a->live.filters.opts, state);
}

static const struct cmd_options record_options = {
	.options = options, .end = need_output, .args_doc = "-o FILE [-- COMMAND...]", .doc = doc,
	.children = (const struct cmd_child[]){
		{ &live_options, offsetof(struct record_args, live), NULL, 0 },
		{ &stack_options, offsetof(struct record_args, stk), NULL, 6 }, {} },
};

struct recorder {
	struct rec_writer *w;
	struct record_tsc tsc;		/* the guests' applied TSC offsets */
	bool stacks;			/* --stacks: the kernel's table goes in at the end */
	__u64 last_flush;
	int err;			/* first write error: the file is incomplete */
	struct qmp_names *qmp;		/* --qmp: the maps the file keeps at its end; or NULL */
	struct name_cache *names;
	__u64 wake_lost[NR_WAKE_LOSSES];	/* --wake: what the delivery programs lost, in all */
};

static int sink_event(void *ctx, const struct vmexit_event *ev)
{
	struct recorder *r = ctx;

	r->err = rec_writer_add_event(r->w, ev);
	if (!r->err && VMEXIT_EV_TYPE(ev->type) == VMEXIT_EV_TSC_OFFSET)
		r->err = record_tsc_write(&r->tsc, ev);
	return r->err;
}

static void sink_guest(void *ctx, __u32 tgid, __u64 start, const char *name)
{
	struct recorder *r = ctx;
	int err = rec_writer_add_guest(r->w, tgid, start, name) ?: record_tsc_guest(&r->tsc, tgid);

	if (err && !r->err)
		r->err = err;
}

static void sink_lost(void *ctx, __u64 ts_ns, const __u64 delta[NR_LOST])
{
	struct recorder *r = ctx;
	int err = rec_writer_add_lost(r->w, ts_ns, delta);

	if (err && !r->err)
		r->err = err;
}

static void sink_wake_lost(void *ctx, __u64 ts_ns, const __u64 delta[NR_WAKE_LOSSES])
{
	struct recorder *r = ctx;
	int err = rec_writer_add_wake_lost(r->w, ts_ns, delta);

	for (int i = 0; i < NR_WAKE_LOSSES; i++)
		r->wake_lost[i] += delta[i];
	if (err && !r->err)
		r->err = err;
}

/* Empty lost records stamp when tracing began and ended: report's duration and rates. */
static int sink_start(void *ctx, __u64 now_ns)
{
	struct recorder *r = ctx;
	__u64 zero[NR_LOST] = {};

	r->last_flush = now_ns;
	return r->err = rec_writer_add_lost(r->w, now_ns, zero) ?:
			record_tsc_start(&r->tsc, r->tsc.f != NULL);
}

static int sink_tick(void *ctx, __u64 now_ns)
{
	struct recorder *r = ctx;

	if (!r->err && now_ns - r->last_flush >= FLUSH_EVERY_NS) {
		r->err = rec_writer_flush(r->w);
		r->last_flush = now_ns;
		/* Each guest's map while it runs (a VMM gone has none to give), kept fresh. */
		if (r->qmp) {
			qmp_names_watch(r->qmp);
			qmp_names_tick(r->qmp, r->names, now_ns / 1e9);
		}
	}
	return r->err;
}

/* --stacks: the whole recording's, frames named here (report may run on another host). */
static int sink_end(void *ctx, struct session *s)
{
	struct recorder *r = ctx;
	struct stack_table t = {};

	if (!r->stacks)
		return 0;
	/* A table not read whole was said; what was read is kept. */
	stack_snapshot(s, &t);
	for (size_t i = 0; !r->err && i < t.nr; i++)
		r->err = rec_writer_add_stack(r->w, &t.rows[i]);
	stack_table_free(&t);
	return r->err;
}

/* For readers of 1.6, which know no applied records: the ratios that are not 1. */
static int add_region(void *ctx, __u32 tgid, __u64 start, bool io, __u64 lo, __u64 hi,
		      const char *name)
{
	return rec_writer_add_key_region(ctx, tgid, start, io, lo, hi, name);
}

/* For readers of 1.6, which know no applied records: the ratios that are not 1. */
static int add_tsc_scale(void *ctx, const struct kvm_tsc_state *st)
{
	if (!st->ratio || st->ratio == 1ull << st->frac_bits)
		return 0;
	return rec_writer_add_tsc_scale(ctx, st->tgid, st->vcpu, st->ratio, st->frac_bits);
}

/*
 * The second TSC pair (with the header's, the TSC's rate over the recording) and the scaling
 * ratios of the VMs still running: what report --guest-trace needs to place guest TSCs.
 */
static int add_tsc_clock(struct rec_writer *w)
{
	struct tsc_pair p;

	if (tsc_pair_now(&p))
		return 0;
	return rec_writer_add_tsc_clock(w, &p) ?: kvm_tsc_state_each(0, -1, add_tsc_scale, w);
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = {};
	struct name_cache names = { .resolve = true };
	struct recorder rec = {};
	struct qmp_names qmp;
	struct live_result res;
	struct rec_meta meta;
	struct live_sink sink = {
		.event = sink_event, .guest = sink_guest, .lost = sink_lost, .start = sink_start,
		.tick = sink_tick, .end = sink_end, .wake_lost = sink_wake_lost,
		.ctx = &rec,
	};
	__u64 zero[NR_LOST] = {}, in_file;
	char err[512], tail[600];
	bool regular;
	int rc, ret;

	a.live.filters.opts.command = cli_split_command(&argc, argv);
	if (cmd_options_parse(&record_options, argc, argv, ARGP_IN_ORDER, &a))
		return 2;
	rec_meta_now(&meta);
	meta.tsc_mhz = a.tsc_mhz;
	meta.split = a.live.filters.opts.split;
	meta.keys = a.live.filters.opts.key_mode != KEY_MODE_OFF;
	meta.wake = a.live.wake;
	if (meta.wake)
		meta.halt_poll_ns = wake_halt_poll_ns();
	rec.stacks = a.stk.stacks;
	/* Hosts with a TSC (x86) have guest TSC offsets to read. */
	rec.tsc.f = meta.tsc_start.mono_ns ? &a.live.filters.opts.filter : NULL;
	rec.names = &names;
	if (a.qmp) {
		qmp_names_init(&qmp, a.qmp);
		if (a.qmp_timeout_ms)
			qmp.timeout_ms = a.qmp_timeout_ms;
		qmp.verbose = a.live.filters.opts.verbose;
		rec.qmp = &qmp;
	}
	/* Before loading anything: an existing file must not cost a BPF load to refuse. */
	rec.w = rec.tsc.w = rec_writer_open(a.path, a.force, &meta, err, sizeof(err));
	if (!rec.w) {
		fprintf(stderr, "vmexit: %s\n", err);
		return 1;
	}
	rc = live_run(&a.live, &names, &sink, &res);
	if (!rec.err && res.started)
		rec.err = rec_writer_add_lost(rec.w, res.end_ns, zero);
	if (!rec.err && res.started)
		rec.err = add_tsc_clock(rec.w);
	if (!rec.err && res.started && rec.qmp)
		rec.err = qmp_names_each_region(rec.qmp, add_region, rec.w);
	/* Every event handed over is in the file or never will be: count those that are. */
	if (!rec.err)
		rec.err = rec_writer_flush(rec.w);
	in_file = rec_writer_events_written(rec.w);
	regular = rec_writer_regular(rec.w);
	if (rec.err)
		fprintf(stderr, "vmexit: %s\n", rec_writer_error(rec.w));
	ret = rec_writer_close(rec.w);
	if (ret && !rec.err)
		fprintf(stderr, "vmexit: cannot finish %s: %s\n", a.path, strerror(-ret));
	if (ret || rec.err)
		rc = rc ? rc : 1;
	/* Tracing never started: leave no empty recording behind to block the next try (but
	 * never remove what is not ours: -o /dev/null --force). */
	if (!res.started && regular)
		unlink(a.path);
	if (res.started) {
		if (ret || rec.err)
			snprintf(tail, sizeof(tail), "incomplete: %llu of them in %s",
				 (unsigned long long)in_file, a.path);
		else
			snprintf(tail, sizeof(tail), "written to %s", a.path);
		evout_summary(stderr, tail, res.events, res.lost);
		/* Deliveries the kernel could not follow to their entry: never silent. */
		evout_wake_summary(stderr, rec.wake_lost);
	}
	if (rec.qmp)
		qmp_names_free(rec.qmp);
	name_cache_free(&names);
	return rc;
}
