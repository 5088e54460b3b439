// SPDX-License-Identifier: GPL-2.0
/* vmexit report: `vmexit stat` and `vmexit stream` output from a record file, without root. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "commands.h"
#include "durations.h"
#include "event_output.h"
#include "event_output_options.h"
#include "event_rows.h"
#include "hashmap.h"
#include "event_source.h"
#include "filter_options.h"
#include "reasons.h"
#include "rip_rows.h"
#include "stack_table.h"
#include "stat_output.h"
#include "view_options.h"
#include "out_write.h"
#include "option_values.h"
#include "exit_times.h"
#include "guest_merge.h"
#include "perf_counters.h"
#include "qmp_names.h"
#include "report_wake.h"
#include "text_escape.h"
#include "time_span.h"

static const char doc[] =
"Print what `vmexit stat` or `vmexit stream` would have printed, from a\n"
"file written by `vmexit record`. Needs no privileges: the file holds the\n"
"guests' names too.\n"
"\n"
"USAGE: vmexit report -i FILE [OPTION...]\n"
"\n"
"Without --events, --format or --perfetto: the stat summary of the whole\n"
"recording (table, --csv, --json, --hist). A damaged or truncated file gives\n"
"the results of every record before the damage, then a message with its\n"
"byte offset, and exit status 1.\n"
"\n"
"FILE may also be a capture of kvm tracepoints (told by its content): a\n"
"trace-cmd trace.dat (read with libtracecmd) or a perf.data (read with the\n"
"installed perf). Exits get a latency where the capture has kvm_entry, user\n"
"exits where it has kvm_fpu; captures name no guests (pids only), and a\n"
"trace.dat keeps thread ids only (each vCPU thread shown as its own VMM):\n"
"what a capture lacks is said once on stderr.\n"
"\n"
"EXAMPLES:\n"
"    vmexit report -i exits.vmexit              # the stat table\n"
"    vmexit report -i exits.vmexit --by vcpu --hist   # per vCPU, histograms\n"
"    vmexit report -i exits.vmexit --by rip --guest-symbols web01=System.map\n"
"    vmexit report -i exits.vmexit -g web01 -r IO --json\n"
"    vmexit report -i exits.vmexit --csv > exits.csv\n"
"    vmexit report -i exits.vmexit --events     # the stream's lines\n"
"    vmexit report -i exits.vmexit --events --json   # one object per exit\n"
"    vmexit report -i exits.vmexit --format my.formats   # rules file lines\n"
"    vmexit report -i exits.vmexit --perfetto out.pftrace   # ui.perfetto.dev\n"
"    vmexit report -i exits.vmexit --perfetto out.json   # Chrome JSON\n"
"    vmexit report -i exits.vmexit --perfetto m.pftrace --guest-trace \\\n"
"        web01=guest.dat   # + web01's trace-cmd record -C x86-tsc: exact\n"
"    vmexit report -i exits.vmexit --perfetto m.pftrace --guest-trace \\\n"
"        web01=guest.json,clock=ns   # + its uftrace dump --chrome: ~0.1 s\n"
"    vmexit report -i trace.dat --by reason     # trace-cmd record -e kvm\n"
"    vmexit report -i perf.data --events        # perf record -e 'kvm:*'\n"
"    vmexit report -i st.vmexit --stacks --folded > x.folded  # flame graph\n"
"    vmexit report -i w.vmexit --wake --csv     # record --wake: deliveries\n"
"\v" DURATION_HELP;

struct guest_trace_args {
	const char *v[GUEST_TRACES_MAX];
};

struct report_args {
	const char *path;
	struct filter_options sel;	/* -g: matched against the file's guest names */
	struct stat_view view;
	bool events;			/* per-event output instead of the stat table */
	const char *counters;		/* --counters FILE[,start=S]: perf stat -I -x, output */
	struct guest_trace_args guest_traces;	/* --guest-trace GUEST=FILE[,clock=ns] */
	bool keep_outside;		/* --keep-outside */
	struct evout_opts out;
	bool stacks, folded;		/* --stacks, --folded */
	bool wake;			/* --wake */
};

/* One recording: a second -i would otherwise replace the first unsaid. */
OPT_STATIC_STORE(opt_input, const char *);
static void opt_input(const char *arg, void *to, struct argp_state *state)
{
	const char **path = to;

	if (*path)
		argp_error(state, "-i given twice ('%s' and '%s'): give one recording", *path, arg);
	*path = arg;
}

/* --guest-trace, repeatable: checked here, parsed again where it is read. */
OPT_STATIC_STORE(opt_guest_trace, struct guest_trace_args);
static void opt_guest_trace(const char *arg, void *to, struct argp_state *state)
{
	const char **v = ((struct guest_trace_args *)to)->v;
	struct guest_trace_spec *s = malloc(sizeof(*s));
	char err[512];
	int i, bad;

	for (i = 0; i < GUEST_TRACES_MAX && v[i]; i++)
		;
	if (i == GUEST_TRACES_MAX)
		argp_error(state, "too many --guest-trace (at most %d)", GUEST_TRACES_MAX);
	bad = !s || guest_trace_spec_parse(arg, s, err, sizeof(err));
	free(s);
	if (bad)
		argp_error(state, "--guest-trace %s", s ? err : strerror(ENOMEM));
	v[i] = arg;
}

static const struct cmd_option options[] = {
	{ "input", 'i', "FILE", 0, "The recording (- for standard input), a trace.dat or a "
	  "perf.data", 0,
	  OPT_TO(struct report_args, path, opt_input) },
	FILTER_OPTIONS("Filters (matched against the recording):",
		       "Only the guest with this name in the file (repeatable)", 1,
		       struct report_args, sel),
	{ "min-latency", 0, "DURATION", 0,
	  "Only exits that took at least this long (250us, 1.5ms, 2s)", 1,
	  OPT_TO(struct report_args, sel.f.min_latency_ns, opt_min_latency) },
	OPT_HEADER("Per-event output (as vmexit stream):", 3),
	{ "events", 0, NULL, 0, "One line per exit (the stream's default line)", 3,
	  OPT_TO(struct report_args, events, opt_true) },
	{ "counters", 0, "FILE[,start=S]", 0, "With --perfetto: add the counters of FILE (`perf "
	  "stat -I MS -x, ...` output) as counter tracks; perf's time 0 is its '# started on' "
	  "line (to the second) or S, in seconds on the events' clock (CLOCK_MONOTONIC; an "
	  "import's own)", 3,
	  OPT_TO(struct report_args, counters, opt_string) },
	{ "guest-trace", 0, "GUEST=FILE[,clock=ns]", 0, "With --perfetto: add GUEST's own trace "
	  "as tracks of GUEST, placed by the recorded TSC offsets (repeatable). Exact: its "
	  "trace.dat of `trace-cmd record -C x86-tsc` (or Chrome JSON stamped with its TSC, ts = "
	  "ticks / 1000). Only to within the guest's boot offset (0.1 s or more): `uftrace dump "
	  "--chrome` JSON, which is in ns of the guest's clock: give clock=ns", 3,
	  OPT_TO(struct report_args, guest_traces, opt_guest_trace) },
	{ "keep-outside", 0, NULL, 0, "With --guest-trace: write a guest trace even when none of "
	  "its events falls inside the recording (a note, not an error)", 3,
	  OPT_TO(struct report_args, keep_outside, opt_true) },
	OPT_HEADER("Kernel stacks (recorded with --split --stacks):", 4),
	{ "stacks", 0, NULL, 0, "The top kernel stacks of the time off CPU during exits, per "
	  "guest and reason, after the summary (JSON: a stacks array)", 4,
	  OPT_TO(struct report_args, stacks, opt_true) },
	{ "folded", 0, NULL, 0, "Only the stacks, as folded lines 'guest;reason;frame;...;frame "
	  "NS' (flamegraph.pl, speedscope)", 4, OPT_TO(struct report_args, folded, opt_true) },
	OPT_HEADER("Interrupt deliveries (recorded with --wake):", 5),
	{ "wake", 0, NULL, 0, "After the summary, stat --wake's delivery rows (table, --csv, "
	  "--json) from the recording's deliveries; the default for a recording made with "
	  "--wake, with its halted exits and halt-poll advice (format 1.9 on; an older file's "
	  "place says they are absent). With --events: the deliveries, halts and halted exits are "
	  "events (lines, --json, --format; --perfetto draws a flow from pending to the entry, "
	  "each halt a slice in its exit)", 5, OPT_TO(struct report_args, wake, opt_true) },
	{},
};

/* Per-event and summary options exclude each other; say which, rather than ignore one. */
static void check_modes(void *input, struct argp_state *state)
{
	struct report_args *a = input;
	bool per_event = a->events;
	bool json = a->view.asked_json;

	if (!a->path)
		argp_error(state, "give the recording with -i FILE");
	/* --events is the default lines: another format is another output. */
	for (int m = EVOUT_NR - 1; m >= 0; m--) {
		opt_exclusive(state, a->events, "--events", a->out.arg[m], evout_option_name(m));
		per_event |= a->out.arg[m] != NULL;
	}
	if (per_event && (a->view.asked_csv || a->view.hist))
		argp_error(state, "--csv and --hist are summary outputs: drop --events, --format "
			   "and --perfetto");
	a->out.arg[EVOUT_JSON] = json ? "" : NULL;
	evout_opts_check(&a->out, state);
	if (a->counters && !a->out.arg[EVOUT_PERFETTO])
		argp_error(state, "--counters adds counter tracks to a --perfetto trace: give both");
	if (a->guest_traces.v[0] && !a->out.arg[EVOUT_PERFETTO])
		argp_error(state, "--guest-trace adds tracks to a --perfetto trace: give both");
	if (a->keep_outside && !a->guest_traces.v[0])
		argp_error(state, "--keep-outside applies to --guest-trace: give both");
	if (a->folded && !a->stacks)
		argp_error(state, "--folded is an output of --stacks (add --stacks)");
	if (a->stacks && per_event)
		argp_error(state, "--stacks is a summary output: drop --events, --format and "
			   "--perfetto");
	/* --tsv has exits only; --folded only stacks: neither would show a delivery. */
	if (a->wake && (a->folded || a->out.arg[EVOUT_TSV]))
		argp_error(state, "--wake shows the deliveries in the summary, --events, --json, "
			   "--format and --perfetto: drop --folded and --tsv");
	if (a->folded && (json || a->view.asked_csv || a->view.hist))
		argp_error(state, "--folded prints only the stacks: drop --csv, --json and --hist");
	a->events = per_event;
	if (json && !a->events)
		a->view.fmt = OUT_JSON;
}

static void init(void *input)
{
	filter_options_init(&((struct report_args *)input)->sel);
}

static const struct cmd_options report_options = {
	.options = options, .init = init, .end = check_modes, .unexpected = "",
	.args_doc = "-i FILE", .doc = doc,
	.children = (const struct cmd_child[]){
		{ &stat_view_options, offsetof(struct report_args, view),
		  "Summary output (as vmexit stat):", 2 },
		{ &evout_file_options, offsetof(struct report_args, out), NULL, 3 }, {} },
};

struct tsc_offset {
	__u32 tgid;
	__s32 vcpu;
	__u64 offset;
	__u64 writes;
	bool applied;		/* offset read from KVM's debugfs (1.7), else traced */
	bool differ;		/* a traced write that KVM applied otherwise */
	__u64 traced;		/* differ: the first such write's value */
};

struct vcpu_id {
	__u32 tgid;
	__s32 vcpu;
};

DEFINE_HASHMAP(tsc_index, struct vcpu_id, __u32)

#define VCPUS_LISTED	4096	/* KVM_MAX_VCPUS on x86 */

#define PIDS_LISTED	32	/* VMMs listed by pid where a -g / -p matched nothing */

struct report {
	struct report_args *a;
	struct name_cache names;		/* from the file only: the VMMs are long gone */
	bool *guest_seen;		/* per -g: some guest in the file had that name */
	bool pid_seen[MAX_PID_FILTER];	/* per -p: the pid is in the file */
	/* The VMMs of the file's events (the table's pids), for "guests in it": an import
	 * names none. The first PIDS_LISTED; nr_pids counts them all. */
	__u32 pids[PIDS_LISTED];
	__u32 nr_pids;
	bool vcpu_seen;			/* -c: some event of that vCPU is in the file */
	unsigned char vcpus[VCPUS_LISTED / 8];	/* the vCPUs with events, to list if not */
	struct row_table rows;
	struct evout out;
	__u64 events;			/* events that passed the filters */
	struct time_span span;		/* of the recording, for rates and TIME% */
	__u64 lost[NR_LOST];
	struct tsc_offset *tsc;		/* latest guest TSC offset per vCPU, in order of first write */
	__u32 nr_tsc, cap_tsc;
	struct tsc_index tsc_index;	/* vCPU -> its place in tsc */
	struct stack_table stacks;	/* --stacks: the file's, after the filters */
	struct guest_clock gc;		/* --guest-trace: TSC pairs, offsets, scaling */
	struct exit_times exits;	/* --guest-trace: each guest's exit latencies */
	bool any_stacks;		/* the file has some, filtered or not */
	bool wake;			/* --wake, or a recording made with it */
	struct report_wake wk;		/* its deliveries, filtered */
};

/* kvm_write_tsc_offset, or a debugfs read (applied): guest TSC = host TSC + offset; keep each
 * vCPU's latest. */
static int note_tsc_offset(struct report *r, const struct vmexit_event *ev, bool applied,
			   __u64 write_ns)
{
	struct vcpu_id id = { .tgid = ev->tgid, .vcpu = ev->vcpu };
	__u32 *idx = tsc_index_find(&r->tsc_index, &id);
	struct tsc_offset *t;
	bool added;

	if (!idx) {
		if (array_reserve(r->tsc, r->nr_tsc, r->cap_tsc, 16))
			return -ENOMEM;
		idx = tsc_index_get(&r->tsc_index, &id, &added);
		if (!idx)
			return -ENOMEM;
		*idx = r->nr_tsc++;
		t = &r->tsc[*idx];
		memset(t, 0, sizeof(*t));
		t->tgid = ev->tgid;
		t->vcpu = ev->vcpu;
	}
	t = &r->tsc[*idx];
	if (applied && write_ns && !t->applied && t->offset != ev->info2 && !t->differ) {
		t->differ = true;
		t->traced = t->offset;
	}
	t->offset = ev->info2;
	t->applied = applied;
	t->writes += !applied;
	return 0;
}

static void print_tsc_offsets(struct report *r)
{
	if (!r->nr_tsc)
		return;
	printf("\nGuest TSC offsets (guest TSC = host TSC + offset), latest per vCPU:\n");
	printf("%-16s %4s %18s %20s %8s %s\n", "VM", "vCPU", "OFFSET", "(signed)", "WRITES",
	       "FROM");
	for (__u32 i = 0; i < r->nr_tsc; i++) {
		const struct tsc_offset *t = &r->tsc[i];
		char nb[TEXT_NAME_MAX];

		printf("%s %4d 0x%016llx %20lld %8llu %s\n",
		       text_fit(nb, sizeof(nb), name_cache_get(&r->names, t->tgid), 16, 16),
		       t->vcpu, (unsigned long long)t->offset, (long long)t->offset,
		       (unsigned long long)t->writes, t->applied ? "debugfs" : "trace");
	}
	/* KVM's trace and its debugfs disagree: the applied one is the guest's truth. */
	for (__u32 i = 0; i < r->nr_tsc; i++) {
		const struct tsc_offset *t = &r->tsc[i];

		if (t->differ)
			printf("  vCPU %d: KVM traced the offset %lld but applies %lld (debugfs): "
			       "the guest runs with the applied one\n", t->vcpu,
			       (long long)t->traced, (long long)t->offset);
	}
}

static bool guest_wanted(struct report *r, __u32 tgid, __u64 start)
{
	const char *name;

	if (!r->a->sel.nr_guests)
		return true;
	name = name_cache_get_at(&r->names, tgid, start);
	for (int i = 0; i < r->a->sel.nr_guests; i++) {
		if (!strcmp(name, r->a->sel.guests[i]))
			return true;
	}
	return false;
}

static void note_pid(struct report *r, __u32 tgid)
{
	__u32 n = r->nr_pids < PIDS_LISTED ? r->nr_pids : PIDS_LISTED, i = 0;

	/* Events come in runs of one VMM's: the last one first. */
	if (!n || r->pids[n - 1] != tgid) {
		while (i < n && r->pids[i] != tgid)
			i++;
		if (i == n && r->nr_pids < PIDS_LISTED)
			r->pids[r->nr_pids++] = tgid;
		else if (i == n)
			r->nr_pids++;	/* over the list: counted, still maybe a repeat */
	}
	for (int i = 0; i < r->a->sel.f.nr_pids; i++) {
		if ((__u32)r->a->sel.f.pids[i] == tgid)
			r->pid_seen[i] = true;
	}
}

/* A VMM's name: from its start time on (0: unknown, files before 1.3), its pid's events are its
 * own, until the pid's next VMM starts. */
static void note_guest(struct report *r, __u32 tgid, __u64 start, const char *name)
{
	note_pid(r, tgid);
	for (int i = 0; i < r->a->sel.nr_guests; i++) {
		if (!strcmp(name, r->a->sel.guests[i]))
			r->guest_seen[i] = true;
	}
	name_cache_set_at(&r->names, tgid, start, name);
	if (r->a->events)
		evout_guest(&r->out, tgid, start, name);
}

/* 0, or -errno when the output failed (memory, a closed pipe). */
static int one_event(struct report *r, const struct vmexit_event *ev)
{
	/* The VMM that made it: its pid's process that had started by then. */
	__u64 start = name_cache_start_at_time(&r->names, ev->tgid, ev->ts_ns);

	time_span_note(&r->span, ev->ts_ns + ev->latency_ns);
	note_pid(r, ev->tgid);
	/* Every offset and exit, whatever the filters: guest traces are placed by them, and
	 * lined up with the exits. */
	if (r->a->guest_traces.v[0] && ev->type == VMEXIT_EV_TSC_OFFSET &&
	    guest_clock_add_offset(&r->gc, ev->tgid, ev->vcpu, ev->ts_ns, ev->info2))
		return -ENOMEM;
	if (r->a->guest_traces.v[0] && exit_times_add(&r->exits, ev))
		return -ENOMEM;
	if (ev->vcpu == r->a->sel.f.vcpu)
		r->vcpu_seen = true;
	if (ev->vcpu >= 0 && ev->vcpu < VCPUS_LISTED)
		r->vcpus[ev->vcpu / 8] |= 1 << (ev->vcpu % 8);
	if (!event_filter_match(&r->a->sel.f, ev) || !guest_wanted(r, ev->tgid, start))
		return 0;
	r->events++;
	if (r->a->events)
		return evout_event(&r->out, ev);
	if (ev->type == VMEXIT_EV_TSC_OFFSET)
		return note_tsc_offset(r, ev, false, 0);
	if (r->a->view.key_mode == KEY_MODE_RIP) {
		struct key_note k;

		/* As stat's key rows: an exit left in flight is counted, with no latency. */
		rip_event_key(ev, &k);
		return event_rows_add_key(&r->rows, r->a->view.by, ev, start, &k);
	}
	return event_rows_add(&r->rows, r->a->view.by, ev, start,
			      r->a->view.key_mode == KEY_MODE_DEVICE);
}

/*
 * record --wake's delivery, halt or halted exit: the filters that mean something for it (guest, pid, vCPU: its reason
 * is its source, not an exit's), then the rows, or an event of --events.
 */
static int one_wake(struct report *r, const struct vmexit_event *ev)
{
	__u64 start = name_cache_start_at_time(&r->names, ev->tgid, ev->ts_ns);
	const struct event_filter *f = &r->a->sel.f;
	int i;

	note_pid(r, ev->tgid);
	if (ev->vcpu == f->vcpu)
		r->vcpu_seen = true;
	if (!r->wake || (f->vcpu >= 0 && ev->vcpu != f->vcpu) ||
	    !guest_wanted(r, ev->tgid, start))
		return 0;
	for (i = 0; i < f->nr_pids && (__u32)f->pids[i] != ev->tgid; i++)
		;
	if (f->nr_pids && i == f->nr_pids)
		return 0;
	if (r->a->events)
		return evout_event(&r->out, ev);
	return report_wake_add(&r->wk, ev, start);
}

/* Records of a kind this vmexit does not know: skipped as the format says, said once. */
static void note_skipped(struct report *r, struct event_source *rd)
{
	__u16 type;
	__u64 n = event_source_skipped(rd, &type);

	if (n)
		fprintf(stderr, "vmexit: note: %s: %llu records of a kind this vmexit does not know "
			"(first: type %u, from a newer vmexit) skipped: a newer vmexit reports "
			"them\n", r->a->path, (unsigned long long)n, type);
}

/* A vCPU's offset read from KVM's debugfs (1.7): placement, and the table (filters applied). */
static int one_tsc_applied(struct report *r, const struct rec_item *it)
{
	struct vmexit_event ev = { .type = VMEXIT_EV_TSC_OFFSET, .tgid = it->tgid,
				   .vcpu = it->vcpu, .ts_ns = it->ts_ns, .info2 = it->tsc_offset };
	__u64 start = name_cache_start_at_time(&r->names, it->tgid, it->ts_ns);

	if (r->a->guest_traces.v[0] &&
	    (guest_clock_add_applied(&r->gc, it->tgid, it->vcpu, it->ts_ns, it->write_ns,
				     it->tsc_offset) ||
	     (it->ratio && it->frac_bits < 64 && it->ratio != 1ull << it->frac_bits &&
	      guest_clock_add_scale(&r->gc, it->tgid, it->vcpu, it->ratio, it->frac_bits))))
		return -ENOMEM;
	if (r->a->events || !event_filter_match(&r->a->sel.f, &ev) ||
	    !guest_wanted(r, it->tgid, start))
		return 0;
	return note_tsc_offset(r, &ev, true, it->write_ns);
}

/* A recorded stack passes the filters of its guest, pid and reason (it has no vCPU). */
static int one_stack(struct report *r, const struct stack_row *s)
{
	struct vmexit_event ev = { .tgid = s->tgid, .isa = s->isa, .reason = s->reason,
				   .vcpu = r->a->sel.f.vcpu, .latency_ns = ~0ull,
				   .type = s->isa == VMEXIT_ISA_USER ? VMEXIT_EV_USER_EXIT :
				   VMEXIT_EV_EXIT };

	r->any_stacks = true;
	if (!r->a->stacks || !event_filter_match(&r->a->sel.f, &ev) ||
	    !guest_wanted(r, s->tgid, s->proc_start))
		return 0;
	return stack_table_add(&r->stacks, s);
}

static void one_lost(struct report *r, const struct rec_item *it)
{
	if (it->ts_ns)
		time_span_note(&r->span, it->ts_ns);
	for (int i = 0; i < NR_LOST; i++)
		r->lost[i] += it->lost[i];
	if (r->a->events)
		evout_lost(&r->out, it->ts_ns, it->lost);
}

/* Did a -g, -p or -c match nothing in the file? */
static bool selection_unmatched(const struct report *r)
{
	for (int i = 0; i < r->a->sel.nr_guests; i++) {
		if (!r->guest_seen[i])
			return true;
	}
	for (int i = 0; i < r->a->sel.f.nr_pids; i++) {
		if (!r->pid_seen[i])
			return true;
	}
	return r->a->sel.f.vcpu >= 0 && !r->vcpu_seen;
}

/* The file's guests, each (pid, name) once: a 1.3 file names a guest in its header and again
 * where it started. */
static void print_guests(struct report *r)
{
	char nb[TEXT_NAME_MAX];
	__u32 shown = 0;

	for (__u32 i = 0; i < r->names.nr; i++) {
		const struct cached_name *c = &r->names.v[i];
		__u32 j;

		for (j = 0; j < i; j++) {
			if (r->names.v[j].tgid == c->tgid && !strcmp(r->names.v[j].name, c->name))
				break;
		}
		if (j < i)
			continue;
		fprintf(stderr, "  %7u  %s\n", c->tgid, text_esc(nb, c->name));
		shown++;
	}
	/* The VMMs the table shows by pid (an import names none): what -p takes. */
	for (__u32 i = 0; i < r->nr_pids && i < PIDS_LISTED; i++) {
		__u32 j = 0;

		while (j < r->names.nr && r->names.v[j].tgid != r->pids[i])
			j++;
		if (j < r->names.nr)
			continue;
		fprintf(stderr, "  %7u  (no name in the file: -p %u)\n", r->pids[i], r->pids[i]);
		shown++;
	}
	if (r->nr_pids > PIDS_LISTED)
		fprintf(stderr, "  (and more pids: see the table without -p)\n");
	if (!shown)
		fprintf(stderr, "  (none)\n");
}

/* --guest-symbols for a guest the file does not name: a note (a typo, or another recording). */
static void note_symbols_unmatched(const struct report *r)
{
	const struct guest_symbols *g = &r->a->view.syms;
	char nb[TEXT_NAME_MAX];

	for (size_t i = 0; i < g->nr; i++) {
		__u32 j = 0;

		while (j < r->names.nr && strcmp(r->names.v[j].name, g->files[i].guest))
			j++;
		if (j == r->names.nr)
			fprintf(stderr, "vmexit: note: --guest-symbols %s: no guest has this name in "
				"%s\n", text_esc(nb, g->files[i].guest), r->a->path);
	}
}

/* Selections that matched nothing in the file: say so, with what the file holds. */
static int check_selections(struct report *r)
{
	char nb[TEXT_NAME_MAX];
	int rc = 0;

	for (int i = 0; i < r->a->sel.nr_guests; i++) {
		if (r->guest_seen[i])
			continue;
		fprintf(stderr, "vmexit: no guest named '%s' in %s; guests in it:\n",
			text_esc(nb, r->a->sel.guests[i]), r->a->path);
		rc = 1;
	}
	for (int i = 0; i < r->a->sel.f.nr_pids; i++) {
		if (r->pid_seen[i])
			continue;
		fprintf(stderr, "vmexit: no VMM with pid %d in %s; guests in it:\n",
			r->a->sel.f.pids[i], r->a->path);
		rc = 1;
	}
	if (rc)
		print_guests(r);
	if (r->a->sel.f.vcpu >= 0 && !r->vcpu_seen) {
		const char *sep = "";

		fprintf(stderr, "vmexit: no vCPU %d in %s; vCPUs in it:", r->a->sel.f.vcpu,
			r->a->path);
		for (int v = 0; v < VCPUS_LISTED; v++) {
			if (r->vcpus[v / 8] & (1 << (v % 8))) {
				fprintf(stderr, "%s %d", sep, v);
				sep = ",";
			}
		}
		fprintf(stderr, "%s\n", *sep ? "" : " (none)");
		rc = 1;
	}
	return rc;
}

/* 0, or -errno of the summary's first failed write (a later flush would only say EIO). */
static int print_summary(struct report *r, const struct rec_meta *meta,
			 enum lost_source lost_source)
{
	/* The same sample a live run's views read: all of it since the start, nothing in flight
	 * (stuck_ns 0), no hooks. */
	struct sample smp = { .rows = &r->rows, .cum = &r->rows, .key_rows = &r->rows,
			      .key_cum = &r->rows, .lost_source = lost_source, .names = &r->names,
			      .qmp = r->a->view.qmp };
	struct stat_report rep;
	int err;

	/* The recording's span: record stamps when tracing began and ended with empty lost
	 * records; the header's clock was read before the programs were loaded. */
	smp.interval_s = time_span_s(&r->span, meta->mono_ns);
	smp.elapsed_s = smp.interval_s;
	memcpy(smp.lost, r->lost, sizeof(smp.lost));
	stack_table_sort(&r->stacks);
	if (r->a->folded)
		return stat_print_folded(&r->a->view, &r->stacks, stdout);
	if (r->a->stacks)
		smp.stacks = &r->stacks;
	rep = stat_report_of(&r->a->view, &smp, true);
	err = stat_print(&r->a->view, &rep, stdout);
	if (r->a->view.fmt == OUT_TABLE)
		print_tsc_offsets(r);
	return err;
}

struct counters_ctx {
	struct evout *out;
	const struct rec_meta *meta;
	bool placed;		/* zero_ns is known */
	__u64 zero_ns;		/* perf's time 0 on the recording's clock */
	__s64 started;		/* perf's "# started on", seconds since 1970 (0: none) */
};

/* perf stat gives its start only as a wall-clock time to the second; the recording's two
 * clocks turn that into its own. */
static int one_counter(void *ctx, const struct perf_count *c)
{
	struct counters_ctx *cc = ctx;
	const struct rec_meta *m = cc->meta;

	if (!cc->placed) {
		if (!cc->started || !m->real_ns || !m->mono_ns)
			return -ESRCH;
		cc->zero_ns = (__u64)cc->started * 1000000000ull - (m->real_ns - m->mono_ns);
		cc->placed = true;
		fprintf(stderr, "vmexit: note: --counters: perf stat gives its start to the second: "
			"its counters may be drawn up to 1 s early (,start=S places them exactly)\n");
	}
	/* The count of the interval, drawn from its start, as the exit rates are. */
	evout_counter(cc->out, c->name, cc->zero_ns + c->from_ns, c->value);
	return cc->out->err;
}

/*
 * --counters FILE[,start=S]: perf stat's values as counter tracks, S on the events' clock
 * (clock names it). 0, or 1 after a message.
 */
static int add_counters(struct report *r, const struct rec_meta *meta, const char *clock)
{
	char path[4096], err[512];
	const char *opt = strstr(r->a->counters, ",start=");
	struct counters_ctx cc = { .out = &r->out, .meta = meta };
	double start_s;
	int ret;

	snprintf(path, sizeof(path), "%.*s", opt ? (int)(opt - r->a->counters) : 4095,
		 r->a->counters);
	if (opt) {
		if (!strict_double(opt + strlen(",start="), &start_s) || start_s < 0) {
			fprintf(stderr, "vmexit: --counters %s: start=%s is not %s seconds "
				"(e.g. start=12345.678)\n", path, opt + strlen(",start="), clock);
			return 1;
		}
		cc.zero_ns = (__u64)(start_s * 1e9 + 0.5);
		cc.placed = true;
	}
	ret = perf_counters_read(path, one_counter, &cc, &cc.started, err, sizeof(err));
	if (ret == -ESRCH) {
		fprintf(stderr, "vmexit: --counters %s: %s, so its times cannot be placed: give "
			"--counters %s,start=S (%s seconds when perf began)\n", path,
			!cc.started ? "no '# started on' line" : "the recording has no wall-clock time",
			path, clock);
		return 1;
	}
	if (ret && ret == r->out.err)
		return 1;	/* the output failed: said where it is closed */
	if (ret) {
		fprintf(stderr, "vmexit: %s\n", err);
		return 1;
	}
	return 0;
}

/* The VMM named guest: of several (a reused pid, a restart), the last with a TSC offset. */
static int guest_tgid(struct report *r, const char *guest, __u32 *tgid)
{
	bool found = false;

	for (__u32 i = 0; i < r->names.nr; i++) {
		const struct cached_name *c = &r->names.v[i];

		if (strcmp(c->name, guest))
			continue;
		if (!found || guest_clock_vcpu(&r->gc, c->tgid, -1) >= 0)
			*tgid = c->tgid;
		found = true;
	}
	return found ? 0 : -ENOENT;
}

/* --guest-trace GUEST=FILE...: each guest's own trace as tracks of its process. 0, or 1
 * after a message. */
static int add_guest_traces(struct report *r, const struct rec_meta *meta)
{
	struct guest_trace_spec *s = malloc(sizeof(*s));
	char err[512], nb[TEXT_NAME_MAX];
	int rc = 0;

	r->gc.start = meta->tsc_start;
	if (!s || guest_clock_resolve(&r->gc) ||
	    guest_clock_set_rate(&r->gc, r->a->view.tsc_mhz, meta->tsc_khz, err,
				 sizeof(err))) {
		fprintf(stderr, "vmexit: --guest-trace: %s %s\n", r->a->path,
			s ? err : strerror(ENOMEM));
		free(s);
		return 1;
	}
	for (int i = 0; !rc && i < GUEST_TRACES_MAX && r->a->guest_traces.v[i]; i++) {
		__u32 tgid = 0;

		if (guest_trace_spec_parse(r->a->guest_traces.v[i], s, err, sizeof(err)))
			continue;	/* checked with the options */
		if (guest_tgid(r, s->guest, &tgid)) {
			fprintf(stderr, "vmexit: --guest-trace %s: no guest named '%s' in %s; "
				"guests in it:\n", r->a->guest_traces.v[i], text_esc(nb, s->guest),
				r->a->path);
			print_guests(r);
			rc = 1;
		} else if (guest_clock_vcpu(&r->gc, tgid, -1) < 0) {
			fprintf(stderr, "vmexit: --guest-trace %s: guest '%s' has no TSC offset in "
				"%s (record reads a running guest's from debugfs: mount -t debugfs "
				"none /sys/kernel/debug; or record from before the VM starts)\n",
				r->a->guest_traces.v[i], text_esc(nb, s->guest), r->a->path);
			rc = 1;
		} else {
			struct guest_merge_ctx mc = {
				.capture = r->a->path, .keep_outside = r->a->keep_outside,
				.span_from = r->span.first_ns ? r->span.first_ns : meta->mono_ns,
				.span_to = r->span.last_ns,
				.exit_ns = exit_times_median(&r->exits, tgid) };

			if (guest_merge(s, tgid, &r->gc, &mc, &r->out))
				rc = 1;
		}
	}
	free(s);
	return rc;
}

static const char *file_reason_name(void *src, __u32 isa, __u32 reason)
{
	return event_source_reason_name(src, isa, reason);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {};
	struct report r = {};
	struct event_source *rd;
	struct rec_item *it = NULL;
	struct qmp_names qmp;	/* record --qmp's maps (REC_KEY_REGION) */
	char err[512] = "";
	int rc = 0, ret = 0, n = 0, n_err, summary_err = 0, counters_rc = 0;
	bool out_open = false;

	if (cmd_options_parse(&report_options, argc, argv, 0, &a))
		return 2;
	r.a = &a;
	qmp_names_init(&qmp, "auto");
	a.view.names = &r.names;
	a.out.names = &r.names;
	row_table_init(&r.rows);
	rd = event_source_open(a.path, err, sizeof(err));
	it = calloc(1, sizeof(*it));
	r.guest_seen = calloc(MAX_GUEST_NAMES, sizeof(*r.guest_seen));
	if (!rd || !it || !r.guest_seen) {
		fprintf(stderr, "vmexit: %s\n", rd ? strerror(ENOMEM) : err);
		rc = 1;
		goto out;
	}
	if (!a.view.tsc_mhz)
		a.view.tsc_mhz = rd->meta.tsc_mhz;
	reason_names_fallback(file_reason_name, rd);
	a.out.tsc_mhz = a.view.tsc_mhz;
	a.out.unit_ns = a.view.unit_ns;
	if (rd->meta.real_ns && rd->meta.mono_ns)
		a.out.real_offset_ns = (__s64)(rd->meta.real_ns - rd->meta.mono_ns);
	a.out.clock = rd->clock;
	/* Recorded with --split (format 1.1): the summary and JSON events show it. */
	a.view.split = a.out.split = rd->meta.split;
	/* Recorded with --keys (1.5): the events show them, and --by key can count them. */
	a.out.keys = rd->meta.keys;
	if (a.view.key_mode == KEY_MODE_DEVICE && !rd->meta.keys) {
		fprintf(stderr, "vmexit: --by key: %s was recorded without keys (record it with "
			"vmexit record --keys)\n", a.path);
		rc = 1;
		goto out;
	}
	/* A recording made with --wake shows its deliveries, as stat --wake would have. */
	r.wake = a.wake || rd->meta.wake;
	r.wk.ev.s.posted_known = rd->meta.wake_posted;
	r.wk.ev.s.untimed_known = rd->meta.wake_untimed;
	report_wake_set_halts(&r.wk, rd->meta.halts, rd->meta.halt_poll_ns);
	if (a.wake && !rd->meta.wake) {
		fprintf(stderr, "vmexit: --wake: %s was recorded without --wake (record it with "
			"vmexit record --wake)\n", a.path);
		rc = 1;
		goto out;
	}
	if (a.events) {
		ret = evout_open(&r.out, &a.out);
		if (ret) {
			rc = ret == -EINVAL ? 2 : 1;
			goto out;
		}
		out_open = true;
	}
	while (!ret && (n = event_source_next(rd, it, err, sizeof(err))) == 1) {
		switch (it->kind) {
		case REC_EVENT:
			ret = one_event(&r, &it->ev);
			break;
		case REC_GUEST:
			note_guest(&r, it->tgid, it->start, it->name);
			break;
		case REC_LOST:
			one_lost(&r, it);
			break;
		case REC_STACK:
			ret = one_stack(&r, &it->stack);
			break;
		case REC_TSC_CLOCK:
			r.gc.end = it->tsc_pair;
			break;
		case REC_TSC_SCALE:
			ret = guest_clock_add_scale(&r.gc, it->tgid, it->vcpu, it->ratio,
						    it->frac_bits);
			break;
		case REC_TSC_APPLIED:
			ret = one_tsc_applied(&r, it);
			break;
		case REC_KEY_REGION:
			/* record --qmp's maps: keys named and grouped as they were live. */
			ret = qmp_names_add_region(&qmp, it->tgid, it->start, it->io, it->lo,
						   it->hi, it->name);
			a.view.qmp = &qmp;
			break;
		case REC_WAKE:
		case REC_WAKE_POSTED:
		case REC_WAKE_UNTIMED:
		case REC_HLT:
			ret = one_wake(&r, &it->ev);
			break;
		case REC_WAKE_LOST:
			report_wake_lost(&r.wk, it->wake_lost);
			/* With --events, also where they were lost, as stream said them live. */
			if (a.events && r.wake)
				evout_wake_lost(&r.out, it->ts_ns, it->wake_lost);
			break;
		}
	}
	if (!ret && a.counters)
		counters_rc = add_counters(&r, &rd->meta, event_source_clock(rd));
	note_symbols_unmatched(&r);
	if (!ret && !counters_rc && a.guest_traces.v[0])
		counters_rc = add_guest_traces(&r, &rd->meta);
	if (a.stacks && !r.any_stacks)
		fprintf(stderr, "vmexit: note: %s holds no stacks (recorded without --split "
			"--stacks, or nothing was blocked)\n", a.path);
	/* Everything read before any damage is output first, then what went wrong. */
	/* A -g, -p or -c that matched nothing: no empty table, the list of what is there. */
	if (!ret && !a.events && (r.events || !selection_unmatched(&r)))
		summary_err = print_summary(&r, &rd->meta, rd->lost_source);
	if (!ret && !summary_err && r.wake && !a.events && !a.folded &&
	    !selection_unmatched(&r))
		summary_err = report_wake_print(&r.wk, a.view.fmt, stdout);
	note_skipped(&r, rd);
	if (out_open) {
		out_open = false;
		n_err = evout_close(&r.out);
		if (n_err && !ret)
			ret = n_err;
	}
	if (ret) {
		fprintf(stderr, "vmexit: writing the output: %s\n", strerror(-ret));
		rc = 1;
		goto out;
	}
	ret = out_flush(stdout);
	if (summary_err)
		ret = summary_err;
	if (ret) {
		out_write_error("the report", ret);
		rc = 1;
		goto out;
	}
	rc = check_selections(&r) || counters_rc;
	if (n < 0) {
		fprintf(stderr, "vmexit: %s\n", err);
		rc = 1;
	}
out:
	qmp_names_free(&qmp);
	if (out_open)
		evout_close(&r.out);
	reason_names_fallback(NULL, NULL);
	event_source_close(rd);
	free(it);
	free(r.guest_seen);
	row_table_free(&r.rows);
	name_cache_free(&r.names);
	free(r.tsc);
	tsc_index_free(&r.tsc_index);
	guest_clock_free(&r.gc);
	exit_times_free(&r.exits);
	stack_table_free(&r.stacks);
	report_wake_free(&r.wk);
	guest_symbols_free(&a.view.syms);
	return rc;
}
