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
#include "event_rows.h"
#include "hashmap.h"
#include "record_file.h"
#include "filter_options.h"
#include "reasons.h"
#include "stat_output.h"
#include "view_options.h"
#include "out_write.h"
#include "option_values.h"
#include "perf_counters.h"
#include "text_escape.h"

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
"EXAMPLES:\n"
"    vmexit report -i exits.vmexit              # the stat table\n"
"    vmexit report -i exits.vmexit --by vcpu --hist   # per vCPU, histograms\n"
"    vmexit report -i exits.vmexit -g web01 -r IO --json\n"
"    vmexit report -i exits.vmexit --csv > exits.csv\n"
"    vmexit report -i exits.vmexit --events     # the stream's lines\n"
"    vmexit report -i exits.vmexit --events --json   # one object per exit\n"
"    vmexit report -i exits.vmexit --format my.formats   # rules file lines\n"
"    vmexit report -i exits.vmexit --perfetto out.pftrace   # ui.perfetto.dev\n"
"    vmexit report -i exits.vmexit --perfetto out.json   # Chrome JSON\n"
"\v" DURATION_HELP;

struct report_args {
	const char *path;
	struct filter_options sel;	/* -g: matched against the file's guest names */
	struct stat_view view;
	bool events;			/* per-event output instead of the stat table */
	const char *counters;		/* --counters FILE[,start=S]: perf stat -I -x, output */
	struct evout_opts out;
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

static const struct cmd_option options[] = {
	{ "input", 'i', "FILE", 0, "The recording (- for standard input)", 0,
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
	{ "format", 0, "FILE", 0, "One line per exit, rendered with the rules in FILE", 3,
	  OPT_TO(struct report_args, out.format_path, opt_string) },
	{ "perfetto", 0, "OUT", 0, "Write a Perfetto trace to OUT (- for standard output) "
	  "instead: protobuf if OUT ends in .pftrace, else Chrome JSON", 3,
	  OPT_TO(struct report_args, out.perfetto_path, opt_string) },
	{ "counters", 0, "FILE[,start=S]", 0, "With --perfetto: add the counters of FILE (`perf "
	  "stat -I MS -x, ...` output) as counter tracks; perf's time 0 is its '# started on' "
	  "line (to the second) or S, in CLOCK_MONOTONIC seconds", 3,
	  OPT_TO(struct report_args, counters, opt_string) },
	{ "perfetto-format", 0, "proto|json", 0, "The --perfetto trace's format, whatever OUT's "
	  "name", 3, OPT_TO(struct report_args, out.perfetto_format, opt_perfetto_format) },
	{},
};

/* Per-event and summary options exclude each other; say which, rather than ignore one. */
static void check_modes(void *input, struct argp_state *state)
{
	struct report_args *a = input;
	bool per_event = a->events || a->out.format_path || a->out.perfetto_path;
	bool json = a->view.asked_json;

	if (!a->path)
		argp_error(state, "give the recording with -i FILE");
	/* Recordings do not carry keys yet: say so rather than print rows without them. */
	if (a->view.key_mode)
		argp_error(state, "--by key/rip: recordings carry no keys yet; use vmexit stat --by "
			   "key on the live host");
	opt_exclusive(state, a->out.format_path, "--format", a->out.perfetto_path, "--perfetto");
	opt_exclusive(state, a->events, "--events", a->out.perfetto_path, "--perfetto");
	opt_exclusive(state, a->events, "--events", a->out.format_path, "--format");
	if (per_event && (a->view.asked_csv || a->view.hist))
		argp_error(state, "--csv and --hist are summary outputs: drop --events, --format "
			   "and --perfetto");
	opt_exclusive(state, a->out.perfetto_path, "--perfetto", json, "--json");
	if (json && a->out.format_path)
		argp_error(state, "--format renders lines: it cannot be combined with --json");
	if (a->counters && !a->out.perfetto_path)
		argp_error(state, "--counters adds counter tracks to a --perfetto trace: give both");
	if (a->out.perfetto_format && !a->out.perfetto_path)
		argp_error(state, "--perfetto-format is the format of --perfetto OUT: give both");
	a->events = per_event;
	if (a->out.perfetto_path)
		a->out.mode = EVOUT_PERFETTO;
	else if (json)
		a->out.mode = a->events ? EVOUT_JSON : EVOUT_LINES;
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
		  "Summary output (as vmexit stat):", 2 }, {} },
};

struct tsc_offset {
	__u32 tgid;
	__s32 vcpu;
	__u64 offset;
	__u64 writes;
};

struct vcpu_id {
	__u32 tgid;
	__s32 vcpu;
};

DEFINE_HASHMAP(tsc_index, struct vcpu_id, __u32)

#define VCPUS_LISTED	4096	/* KVM_MAX_VCPUS on x86 */

struct report {
	struct report_args *a;
	struct name_cache names;		/* from the file only: the VMMs are long gone */
	bool *guest_seen;		/* per -g: some guest in the file had that name */
	bool pid_seen[MAX_PID_FILTER];	/* per -p: the pid is in the file */
	bool vcpu_seen;			/* -c: some event of that vCPU is in the file */
	unsigned char vcpus[VCPUS_LISTED / 8];	/* the vCPUs with events, to list if not */
	struct row_table rows;
	struct evout out;
	__u64 events;			/* events that passed the filters */
	__u64 first_ts, last_ts;	/* span of the recording, for rates and TIME% */
	__u64 lost[NR_LOST];
	struct tsc_offset *tsc;		/* latest guest TSC offset per vCPU, in order of first write */
	__u32 nr_tsc, cap_tsc;
	struct tsc_index tsc_index;	/* vCPU -> its place in tsc */
};

/* kvm_write_tsc_offset: guest TSC = host TSC + offset; keep each vCPU's latest. */
static int note_tsc_offset(struct report *r, const struct vmexit_event *ev)
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
	t->offset = ev->info2;
	t->writes++;
	return 0;
}

static void print_tsc_offsets(struct report *r)
{
	if (!r->nr_tsc)
		return;
	printf("\nGuest TSC offsets (guest TSC = host TSC + offset), latest per vCPU:\n");
	printf("%-16s %4s %18s %20s %8s\n", "VM", "vCPU", "OFFSET", "(signed)", "WRITES");
	for (__u32 i = 0; i < r->nr_tsc; i++) {
		const struct tsc_offset *t = &r->tsc[i];
		char nb[TEXT_NAME_MAX];

		printf("%s %4d 0x%016llx %20lld %8llu\n",
		       text_fit(nb, sizeof(nb), name_cache_get(&r->names, t->tgid), 16, 16),
		       t->vcpu, (unsigned long long)t->offset, (long long)t->offset,
		       (unsigned long long)t->writes);
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
	for (int i = 0; i < r->a->sel.f.nr_pids; i++) {
		if (r->a->sel.f.pids[i] == tgid)
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

static void note_time(struct report *r, __u64 ts)
{
	if (!r->first_ts || ts < r->first_ts)
		r->first_ts = ts;
	if (ts > r->last_ts)
		r->last_ts = ts;
}

/* 0, or -errno when the output failed (memory, a closed pipe). */
static int one_event(struct report *r, const struct vmexit_event *ev)
{
	/* The VMM that made it: its pid's process that had started by then. */
	__u64 start = name_cache_start_at_time(&r->names, ev->tgid, ev->ts_ns);

	note_time(r, ev->ts_ns + ev->latency_ns);
	note_pid(r, ev->tgid);
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
		return note_tsc_offset(r, ev);
	return event_rows_add(&r->rows, r->a->view.by, ev, start);
}

static void one_lost(struct report *r, const struct rec_item *it)
{
	if (it->ts_ns)
		note_time(r, it->ts_ns);
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
	if (!shown)
		fprintf(stderr, "  (none)\n");
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
		fprintf(stderr, "vmexit: no VMM with pid %u in %s; guests in it:\n",
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
static int print_summary(struct report *r, const struct rec_meta *meta)
{
	struct stat_report rep = { .rows = &r->rows, .final = true };
	int err;
	__u64 from = r->first_ts ? r->first_ts : meta->mono_ns;

	/* The recording's span: record stamps when tracing began and ended with empty lost
	 * records; the header's clock was read before the programs were loaded. */
	rep.interval_s = r->last_ts > from ? (r->last_ts - from) / 1e9 : 0;
	rep.elapsed_s = rep.interval_s;
	memcpy(rep.lost, r->lost, sizeof(rep.lost));
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

/* --counters FILE[,start=S]: perf stat's values as counter tracks. 0, or 1 after a message. */
static int add_counters(struct report *r, const struct rec_meta *meta)
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
			fprintf(stderr, "vmexit: --counters %s: start=%s is not CLOCK_MONOTONIC "
				"seconds (e.g. start=12345.678)\n", path, opt + strlen(",start="));
			return 1;
		}
		cc.zero_ns = (__u64)(start_s * 1e9 + 0.5);
		cc.placed = true;
	}
	ret = perf_counters_read(path, one_counter, &cc, &cc.started, err, sizeof(err));
	if (ret == -ESRCH) {
		fprintf(stderr, "vmexit: --counters %s: %s, so its times cannot be placed: give "
			"--counters %s,start=S (CLOCK_MONOTONIC seconds when perf began)\n", path,
			!cc.started ? "no '# started on' line" : "the recording has no wall-clock time",
			path);
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

static const char *file_reason_name(void *reader, __u32 isa, __u32 reason)
{
	return rec_reader_reason_name(reader, isa, reason);
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {};
	struct report r = {};
	struct rec_reader *rd;
	struct rec_item *it = NULL;
	char err[512] = "";
	int rc = 0, ret = 0, n = 0, n_err, summary_err = 0, counters_rc = 0;
	bool out_open = false;

	if (cmd_options_parse(&report_options, argc, argv, 0, &a))
		return 2;
	r.a = &a;
	a.view.names = &r.names;
	a.out.names = &r.names;
	row_table_init(&r.rows);
	rd = rec_reader_open(a.path, err, sizeof(err));
	it = calloc(1, sizeof(*it));
	r.guest_seen = calloc(MAX_GUEST_NAMES, sizeof(*r.guest_seen));
	if (!rd || !it || !r.guest_seen) {
		fprintf(stderr, "vmexit: %s\n", rd ? strerror(ENOMEM) : err);
		rc = 1;
		goto out;
	}
	if (!a.view.tsc_mhz)
		a.view.tsc_mhz = rec_reader_meta(rd)->tsc_mhz;
	reason_names_fallback(file_reason_name, rd);
	a.out.tsc_mhz = a.view.tsc_mhz;
	a.out.unit_ns = a.view.unit_ns;
	if (rec_reader_meta(rd)->real_ns && rec_reader_meta(rd)->mono_ns)
		a.out.real_offset_ns = (__s64)(rec_reader_meta(rd)->real_ns -
					       rec_reader_meta(rd)->mono_ns);
	/* Recorded with --split (format 1.1): the summary and JSON events show it. */
	a.view.split = a.out.split = rec_reader_meta(rd)->split;
	if (a.events) {
		ret = evout_open(&r.out, &a.out);
		if (ret) {
			rc = ret == -EINVAL ? 2 : 1;
			goto out;
		}
		out_open = true;
	}
	while (!ret && (n = rec_reader_next(rd, it, err, sizeof(err))) == 1) {
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
		}
	}
	if (!ret && a.counters)
		counters_rc = add_counters(&r, rec_reader_meta(rd));
	/* Everything read before any damage is output first, then what went wrong. */
	/* A -g, -p or -c that matched nothing: no empty table, the list of what is there. */
	if (!ret && !a.events && (r.events || !selection_unmatched(&r)))
		summary_err = print_summary(&r, rec_reader_meta(rd));
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
	if (out_open)
		evout_close(&r.out);
	reason_names_fallback(NULL, NULL);
	rec_reader_close(rd);
	free(it);
	free(r.guest_seen);
	row_table_free(&r.rows);
	name_cache_free(&r.names);
	free(r.tsc);
	tsc_index_free(&r.tsc_index);
	return rc;
}
