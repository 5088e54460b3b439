// SPDX-License-Identifier: GPL-2.0
/* vmexit stream: one line (or JSON object, or trace slice) per exit, as it happens. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli_filters.h"
#include "commands.h"
#include "event_output.h"
#include "live_events.h"

enum { OPT_FORMAT = 0x200, OPT_JSON, OPT_PERFETTO, OPT_TSC_MHZ, OPT_STUCK };

struct stream_args {
	struct cli_filters filters;
	struct live_args live;
	struct evout_opts out;
};

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
"exit has been in flight that long. Filters run in the kernel. Records\n"
"the kernel could not hand over (ring buffer full, ...) are reported where\n"
"they were lost, by a '# LOST' line ({\"lost\":N,...} with --json), and in\n"
"the summary on stderr. --kvm-events adds other kvm tracepoints (port and MMIO accesses,\n"
"MSRs, CPUID, injected interrupts, page faults) as events of their own, with\n"
"their fields, printed when they happen.\n"
"\n"
"EXAMPLES:\n"
"    vmexit stream -p 4242               # one line per exit of one VMM\n"
"    vmexit stream -r EPT_VIOLATION --min-latency 50us   # slow ones only\n"
"    vmexit stream --sample 100 -d 5     # 1 exit in 100, for 5 seconds\n"
"    vmexit stream --format my.formats   # lines rendered from a rules file\n"
"    vmexit stream --json | jq .reason_name   # one JSON object per exit\n"
"    vmexit stream --perfetto trace.json -d 10   # for ui.perfetto.dev\n"
"    vmexit stream --kvm-events pio,mmio -p 4242 # and each port / MMIO access\n"
"    vmexit stream --stuck 1s -p 4242    # and say when a vCPU is stuck in one\n"
"    vmexit stream -- qemu-system-x86_64 ...     # a VMM from its start\n";

static const struct argp_option options[] = {
	{ NULL, 0, NULL, 0, "Output:", 2 },
	{ "format", OPT_FORMAT, "FILE", 0, "Render lines with the rules in FILE "
	  "(docs/formats.md)", 2 },
	{ "json", OPT_JSON, NULL, 0, "One JSON object per exit, one per line", 2 },
	{ "perfetto", OPT_PERFETTO, "FILE", 0, "Write a Chrome/Perfetto trace to FILE (- for "
	  "standard output) instead of lines", 2 },
	{ "tsc-mhz", OPT_TSC_MHZ, "MHZ", 0, "TSC frequency: cycle fields in lines and JSON", 2 },
	{ "stuck", OPT_STUCK, "DURATION", 0, "Also print a line when an exit has been in flight "
	  "this long (e.g. 1s, 250ms; default off)", 2 },
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	struct stream_args *a = state->input;

	switch (key) {
	case ARGP_KEY_INIT:
		state->child_inputs[0] = &a->filters;
		state->child_inputs[1] = &a->live;
		break;
	case OPT_FORMAT:
		a->out.format_path = arg;
		break;
	case OPT_JSON:
		if (a->out.mode == EVOUT_PERFETTO)
			argp_error(state, "--json and --perfetto are different outputs: pick one");
		a->out.mode = EVOUT_JSON;
		break;
	case OPT_PERFETTO:
		if (a->out.mode == EVOUT_JSON)
			argp_error(state, "--json and --perfetto are different outputs: pick one");
		a->out.mode = EVOUT_PERFETTO;
		a->out.perfetto_path = arg;
		break;
	case OPT_TSC_MHZ:
		a->out.tsc_mhz = parse_tsc_mhz_arg(arg, state);
		break;
	case OPT_STUCK:
		a->live.stuck_ns = parse_stuck_arg(arg, state);
		break;
	case ARGP_KEY_END:
		if (a->out.format_path && a->out.mode != EVOUT_LINES)
			argp_error(state, "--format renders lines: it cannot be combined with "
				   "--json or --perfetto");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct argp stream_argp =
	COMMAND_ARGP(options, parse_opt, "[-- COMMAND...]", doc,
		     { &cli_filters_argp, 0, NULL, 0 },
		     { &live_argp, 0, NULL, 0 });

static int sink_event(void *ctx, const struct vmexit_event *ev)
{
	return evout_event(ctx, ev);
}

static void sink_guest(void *ctx, __u32 tgid, const char *name)
{
	evout_guest(ctx, tgid, name);
}

static void sink_stuck(void *ctx, const struct stuck_exit *e)
{
	evout_stuck(ctx, e);
}

static void sink_lost(void *ctx, __u64 ts_ns, const __u64 delta[NR_LOST])
{
	evout_lost(ctx, ts_ns, delta);
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
		.stuck = sink_stuck, .ctx = &out,
	};
	int rc, err;

	a.live.opts = &a.filters.opts;
	a.out.names = &names;
	a.filters.opts.command = cli_split_command(&argc, argv);
	if (argp_parse(&stream_argp, argc, argv, ARGP_IN_ORDER, NULL, &a))
		return 2;
	a.out.split = a.filters.opts.split;
	/* Before loading anything: a bad rules file is a usage error. */
	err = evout_open(&out, &a.out);
	if (err) {
		name_cache_free(&names);
		return err == -EINVAL ? 2 : 1;
	}
	rc = live_run(&a.live, &a.filters, &names, &sink, &res);
	err = evout_close(&out);
	if (err && !res.sink_err)
		res.sink_err = err;
	if (res.sink_err) {
		fprintf(stderr, "vmexit: writing the output: %s\n", strerror(-res.sink_err));
		rc = rc ? rc : 1;
	}
	if (res.started)
		evout_summary(stderr, NULL, res.events, res.lost);
	name_cache_free(&names);
	return rc;
}
