// SPDX-License-Identifier: GPL-2.0
/* vmexit stream: one line (or JSON object, or trace slice) per exit, as it happens. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_filters.h"
#include "commands.h"
#include "durations.h"
#include "event_output.h"
#include "event_output_options.h"
#include "live_events.h"
#include "record_file.h"

static const char doc[] =
"Print KVM exits one by one as they complete, with their latency.\n"
"\n"
"USAGE: vmexit stream [OPTION...] [-- COMMAND [ARG...]]\n"
"\n"
"Each exit is printed when the vCPU enters the guest again (kvm exits) or\n"
"calls KVM_RUN again (exits to the VMM). An exit still in progress when\n"
"tracing ends, or when its thread exits, is printed then, once, marked\n"
"in_flight, its age so far as latency: every exit is printed. --stuck\n"
"prints a '# STUCK' line ({\"stuck\":true,...} with --json) as soon as an\n"
"exit has been in flight that long. Lines are written in batches, each\n"
"within about 20 ms of its exit (the kernel wakes vmexit per batch, not\n"
"per exit). Filters run in the kernel. Records the kernel could not hand\n"
"over (ring buffer full, ...) are reported where they were lost, by a\n"
"'# LOST' line ({\"lost\":N,...} with --json), and in the summary on\n"
"stderr. --kvm-events adds other kvm tracepoints (port and MMIO accesses,\n"
"MSRs, CPUID, injected interrupts, page faults) as events of their own,\n"
"with their fields, printed when they happen.\n"
"\n"
"EXAMPLES:\n"
"    vmexit stream -p 4242               # one line per exit of one VMM\n"
"    vmexit stream -r EPT_VIOLATION --min-latency 50us   # slow ones only\n"
"    vmexit stream --sample 100 -d 5s    # 1 exit in 100, for 5 seconds\n"
"    vmexit stream --format my.formats   # lines rendered from a rules file\n"
"    vmexit stream --json | jq .reason_name   # one JSON object per exit\n"
"    vmexit stream --perfetto trace.pftrace -d 10s  # for ui.perfetto.dev\n"
"    vmexit stream --kvm-events pio,mmio -p 4242 # and each port / MMIO access\n"
"    vmexit stream --stuck 1s -p 4242    # and say when a vCPU is stuck in one\n"
"    vmexit stream --wake --json -p 4242 # and every interrupt delivery\n"
"    vmexit stream --wake --perfetto w.pftrace -p 4242  # as flow arrows\n"
"    vmexit stream -- qemu-system-x86_64 ...     # a VMM from its start\n"
"\v" DURATION_HELP;

struct stream_args {
	struct live_args live;
	struct evout_opts out;
};

static const struct cmd_option options[] = {
	OPT_HEADER("Output:", 2),
	{ "tsc-mhz", 0, "MHZ", 0, "TSC frequency: JSON gets latency_cycles, --format rules "
	  "%(tsc) in cycles (the default lines do not change)", 2,
	  OPT_TO(struct stream_args, out.tsc_mhz, opt_tsc_mhz) },
	{ "stuck", 0, "DURATION", 0, "Also print a line when an exit has been in flight this long "
	  "(e.g. 1s, 250ms; default off)", 2,
	  OPT_TO(struct stream_args, live.stuck_ns, opt_stuck) },
	{ "wake", 0, NULL, 0, "(x86, arm64) Also an event per interrupt delivered to a vCPU (type wake, "
	  "at the entry that delivered it): its source, vector, latency from pending and its "
	  "parts, as stat --wake counts them; one per interrupt KVM posted with no exit (type "
	  "wake_posted: source and vector, not timed) and per interrupt made pending for a vCPU "
	  "never seen entering guest mode (x86, type wake_untimed: likewise); deliveries lost "
	  "as '# LOST N (--wake: "
	  "...)' lines; and its HLT anatomy: an event per halt (type halt: how it ended, its "
	  "poll, sleep, runq and other) and per halted exit (type hlt, at its entry: its halts "
	  "and parts); lines, --json or --perfetto (as report draws them: a flow per delivery "
	  "from pending to the entry on the vCPU's track, a slice per halt in its exit, a "
	  "'lost N records (--wake: ...)' instant per loss)", 2,
	  OPT_TO(struct stream_args, live.wake, opt_true) },
	{},
};

static const struct cmd_options stream_options = {
	.options = options, .args_doc = "[-- COMMAND...]", .doc = doc,
	.children = (const struct cmd_child[]){
		{ &live_options, offsetof(struct stream_args, live), NULL, 0 },
		{ &evout_options, offsetof(struct stream_args, out), NULL, 2 }, {} },
};

static int sink_event(void *ctx, const struct vmexit_event *ev)
{
	return evout_event(ctx, ev);
}

static void sink_guest(void *ctx, __u32 tgid, __u64 start, const char *name)
{
	evout_guest(ctx, tgid, start, name);
}

static void sink_stuck(void *ctx, const struct inflight_exit *e, __u64 now_ns)
{
	evout_stuck(ctx, e, now_ns);
}

static void sink_lost(void *ctx, __u64 ts_ns, const __u64 delta[NR_LOST])
{
	evout_lost(ctx, ts_ns, delta);
}

static void sink_wake_lost(void *ctx, __u64 ts_ns, const __u64 delta[NR_WAKE_LOSSES])
{
	evout_wake_lost(ctx, ts_ns, delta);
}

static int sink_tick(void *ctx, __u64 now_ns)
{
	struct evout *o = ctx;

	(void)now_ns;
	/* Lines go out as they happen, also into a pipe. */
	evout_flush(o);
	return o->err;
}

int cmd_stream(int argc, char **argv)
{
	struct stream_args a = {};
	struct name_cache names = { .resolve = true };
	struct live_result res;
	struct evout out;
	struct live_sink sink = {
		.event = sink_event, .guest = sink_guest, .lost = sink_lost, .tick = sink_tick,
		.stuck = sink_stuck, .wake_lost = sink_wake_lost, .ctx = &out,
	};
	struct rec_meta meta;
	int rc, err;

	a.out.names = &names;
	a.live.filters.opts.command = cli_split_command(&argc, argv);
	if (cmd_options_parse(&stream_options, argc, argv, ARGP_IN_ORDER, &a))
		return 2;
	/* Said, not dropped: --tsv's columns are an exit's, with no room for a delivery. */
	if (a.live.wake && !evout_mode_has_wake(a.out.mode)) {
		fprintf(stderr, "vmexit: stream --wake writes lines, --json or --perfetto; drop "
			"%s\n", evout_option_name(a.out.mode));
		return 2;
	}
	a.out.split = a.live.filters.opts.split;
	a.out.keys = a.live.filters.opts.key_mode != KEY_MODE_OFF;
	/* The kernel's times are CLOCK_MONOTONIC; lines show wall-clock time, as report does
	 * from the offset a recording keeps. */
	rec_meta_now(&meta);
	a.out.real_offset_ns = (__s64)(meta.real_ns - meta.mono_ns);
	/* Before loading anything: a bad rules file is a usage error. */
	err = evout_open(&out, &a.out);
	if (err) {
		name_cache_free(&names);
		return err == -EINVAL ? 2 : 1;
	}
	rc = live_run(&a.live, &names, &sink, &res);
	err = evout_close(&out);
	if (err && !res.sink_err)
		res.sink_err = err;
	if (res.sink_err) {
		fprintf(stderr, "vmexit: writing the output: %s\n", strerror(-res.sink_err));
		rc = rc ? rc : 1;
	}
	if (res.started) {
		evout_summary(stderr, NULL, res.events, res.lost);
		evout_wake_summary(stderr, out.wake_lost);
	}
	name_cache_free(&names);
	return rc;
}
