// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit top: a live, kvm_stat-like view of KVM exits per VM, drilling down into vCPUs and exit
 * reasons; or, for scripts, one batch screen (--once) or a vmstat-like log (--log).
 * The screen itself is built by top_view.c; this file samples, reads keys and paints.
 */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include "cli_filters.h"
#include "commands.h"
#include "durations.h"
#include "guest_symbols_option.h"
#include "sampler.h"
#include "out_write.h"
#include "qmp_option.h"
#include "signals.h"
#include "stack_options.h"
#include "top_view.h"
#include "top_wake.h"
#include "tracing_info_print.h"

static const char doc[] =
"Live view of KVM exits: per VM, per vCPU and per exit reason.\n"
"\n"
"USAGE: vmexit top [OPTION...]\n"
"\n"
"A full-screen table refreshed every -d seconds: one row per VM with its\n"
"exits since start (Total), exits/s in the last interval (Current), time in\n"
"exit and latency. x or Enter drills into the selected VM's exit reasons:\n"
"kvm_exit(REASON) for guest exits, kvm_userspace_exit(REASON) for exits to\n"
"the VMM; v lists its vCPUs; b lists all VMs' reasons together, as kvm_stat\n"
"does; h in the view lists every key. When stdout is not a terminal, --log is\n"
"the default. kvm_stat's -c (CSV) is `vmexit stat --csv`, its -s DELAY is -d.\n"
"\n"
"EXAMPLES:\n"
"    vmexit top                      # all VMs, refreshed every second\n"
"    vmexit top -g web01 -x          # straight into one guest's reasons\n"
"    vmexit top -d 0.5 -s p99        # twice a second, worst latency first\n"
"    vmexit top --once -x            # one plain-text screen (kvm_stat -1)\n"
"    vmexit top --log -n 60 > x.log  # a line a second for a minute\n"
"    vmexit top -f 'io|mmio'         # exits whose reason or guest matches\n"
"    vmexit top -f help              # the names -f matches\n"
"    vmexit top -z --kvm-events all  # busy rows; kvm_pio, kvm_inj_virq.. too\n"
"    vmexit top -L /var/log/kvm.log  # --log to a file, reopened on SIGHUP\n"
"    vmexit top --split --stacks     # x on a reason: where it blocked\n"
"    vmexit top -x --keys --qmp auto # keys, devices named by QEMU\n"
"    vmexit top -x --rips --guest-symbols web01=System.map\n"
"                                    # hot guest code, per reason\n"
"    vmexit top --wake -g web01      # interrupt delivery latency (w)\n"
"\v" DURATION_HELP
"-d is in seconds, as top's (a bare number; 500ms works too).\n";

struct top_args {
	struct cli_filters filters;
	double delay;
	bool once, log, drill, vcpus, overhead, skip_zero;
	const char *log_file;		/* -L */
	long count;
	int width;
	__u64 stuck_ns;		/* --stuck */
	const char *fields;
	enum top_sort sort;
	struct stack_opts stk;	/* --stacks, --stack-min, --max-stacks */
	const char *qmp;	/* --qmp */
	int qmp_timeout_ms;	/* --qmp-timeout; 0: the default */
	bool per_address;	/* --per-address */
	bool rips;		/* --rips */
	struct guest_symbols syms;	/* --guest-symbols */
	bool wake;		/* --wake */
};

OPT_STATIC_STORE(opt_sort, enum top_sort);
static void opt_sort(const char *arg, void *to, struct argp_state *state)
{
	if (top_sort_parse(arg, to))
		argp_error(state, "invalid --sort '%s': use count, rate, time, max, p99 or oncpu",
			   arg);
}

OPT_STATIC_STORE(opt_width, int);
static void opt_width(const char *arg, void *to, struct argp_state *state)
{
	long v;

	if (!strict_long(arg, 10, &v) || v < 40 || v > TOP_LINE_MAX - 1)
		argp_error(state, "invalid --width '%s': give 40 to %d columns", arg,
			   TOP_LINE_MAX - 1);
	*(int *)to = (int)v;
}

static const struct cmd_option options[] = {
	OPT_HEADER("View:", 2),
	{ "delay", 'd', "SECONDS", 0, "Refresh interval in seconds, as top's (default 1; "
	  "fractions allowed; or with a unit: 500ms)", 2,
	  OPT_TO(struct top_args, delay, opt_interval) },
	{ "sort", 's', "count|rate|time|max|p99|oncpu", 0,
	  "Row order (default rate: Current; oncpu: time on CPU, with --split)", 2,
	  OPT_TO(struct top_args, sort, opt_sort) },
	{ "fields", 'f', "REGEX", 0, "Only rows and exits whose name or reason matches (POSIX "
	  "extended regex, any case; 'help' lists the names; --log: reason columns)", 2,
	  OPT_TO(struct top_args, fields, opt_string) },
	{ "skip-zero", 'z', NULL, 0, "Hide rows without exits in the last interval; --log: no "
	  "line for an interval without any", 2, OPT_TO(struct top_args, skip_zero, opt_true) },
	{ "kvm-events", 0, "LIST", 0, "Also count these kvm tracepoints, as stream captures "
	  "them: " VMEXIT_KVM_EVENTS(KVM_EVENT_HELP_NAME) "comma-separated, or all; rows "
	  "kvm_pio... in the drill-down, columns in --log", 2,
	  OPT_TO(struct top_args, filters.opts.kvm_events, opt_kvm_events) },
	{ "drilldown", 'x', NULL, 0, "Start in the exit-reason view (of the one -p/-g guest, "
	  "else of all VMs); with --keys (--rips), in the view of every reason's keys (RIPs); "
	  "with --stacks (no --keys), of every reason's kernel stacks", 2,
	  OPT_TO(struct top_args, drill, opt_true) },
	{ "keys", 0, NULL, 0, "Load the key programs at start (what each exit was about, as "
	  "stat --by key): x on a reason row lists its keys, with names", 2,
	  OPT_TO(struct top_args, filters.opts.key_mode, opt_key_device) },
	QMP_OPTION(struct top_args, qmp, 2),
	{ "per-address", 0, NULL, 0, "With --keys: a row per port and MMIO address, not per "
	  "device", 2, OPT_TO(struct top_args, per_address, opt_true) },
	{ "rips", 0, NULL, 0, "Load the guest RIP programs at start (which guest code made each "
	  "exit, as stat --by rip): x on a reason row lists its RIPs", 2,
	  OPT_TO(struct top_args, rips, opt_true) },
	{ "guest-symbols", 0, "GUEST=FILE", 0, "With --rips: name GUEST's RIPs symbol+offset "
	  "from FILE (its System.map or a copy of its /proc/kallsyms), in that guest's views; "
	  "repeatable", 2, OPT_TO(struct top_args, syms, opt_guest_symbols) },
	{ "wake", 0, NULL, 0, "(x86, arm64) Load the wake-up programs at start and start in their view "
	  "(w toggles it): interrupt deliveries per guest, vCPU, source and vector (count/s, P50, "
	  "P99, what the vCPU was doing meanwhile, those KVM posted with no exit) and the halts, "
	  "as stat --wake; they cost every context switch and wake-up on the host a hash lookup", 2,
	  OPT_TO(struct top_args, wake, opt_true) },
	{ "vcpus", 0, NULL, 0, "Start in the per-vCPU view", 2,
	  OPT_TO(struct top_args, vcpus, opt_true) },
	{ "overhead", 0, NULL, 0, "Show vmexit's own cost (kernel BPF run-time "
	  "statistics, on while it runs) under the header; --log: at the end, on stderr", 2,
	  OPT_TO(struct top_args, overhead, opt_true) },
	{ "stuck", 0, "DURATION", 0, "Mark rows with an exit in flight this long or longer "
	  "(default 1s; e.g. 250ms)", 2, OPT_TO(struct top_args, stuck_ns, opt_stuck) },
	OPT_HEADER("Non-interactive:", 3),
	{ "once", '1', NULL, 0, "Print one screen after one interval as plain text, and exit", 3,
	  OPT_TO(struct top_args, once, opt_true) },
	OPT_ALIAS("batch", 3),
	{ "log", 'l', NULL, 0, "A line per interval with the busiest reasons, header every 20 "
	  "lines (like vmstat)", 3, OPT_TO(struct top_args, log, opt_true) },
	{ "log-file", 'L', "FILE", 0, "--log to FILE (appended), reopened on SIGHUP for log "
	  "rotation", 3, OPT_TO(struct top_args, log_file, opt_string) },
	{ "count", 'n', "N", 0, "--log: stop after N intervals", 3,
	  OPT_TO(struct top_args, count, opt_count) },
	{ "width", 0, "COLUMNS", 0, "--once: line width (default 100)", 3,
	  OPT_TO(struct top_args, width, opt_width) },
	{},
};

static void check_modes(void *input, struct argp_state *state)
{
	struct top_args *a = input;

	if (a->log_file)
		a->log = true;
	if (a->once && a->log)
		argp_error(state, "--once and --log%s exclude each other",
			   a->log_file ? " (-L)" : "");
	if (a->drill && a->vcpus)
		argp_error(state, "-x and --vcpus exclude each other");
	if (a->wake && (a->drill || a->vcpus))
		argp_error(state, "--wake starts in the wake-up view: -x and --vcpus start in "
			   "others (w switches to it from any)");
	stack_opts_apply(&a->stk, &a->filters.opts, state);
	if (a->sort == TS_ONCPU && !a->filters.opts.split)
		argp_error(state, "--sort oncpu needs --split (time on CPU is only measured "
			   "with it)");
	/* One key table: devices or RIPs. */
	if (a->rips && a->filters.opts.key_mode)
		argp_error(state, "--keys and --rips exclude each other (one key table: run two "
			   "tops)");
	if (a->rips)
		a->filters.opts.key_mode = KEY_MODE_RIP;
	if (a->syms.nr && !a->rips)
		argp_error(state, "--guest-symbols names guest RIPs: add --rips");
	cli_filters_keys_check(&a->filters, a->filters.opts.key_mode, "--keys or --rips", state);
	cli_filters_gpa_check(&a->filters, a->filters.opts.key_mode, "--keys", state);
	if (a->qmp && a->filters.opts.key_mode != KEY_MODE_DEVICE)
		argp_error(state, "--qmp names ports and addresses: add --keys");
	qmp_option_check(a->qmp, a->qmp_timeout_ms, state);
	if (a->per_address && a->filters.opts.key_mode != KEY_MODE_DEVICE)
		argp_error(state, "--per-address is an option of --keys (add --keys)");
}

static const struct cmd_options top_options = {
	.options = options, .end = check_modes, .doc = doc,
	.unexpected = " (the interval is -d SECONDS)",
	.children = (const struct cmd_child[]){
		{ &cli_filters_options, offsetof(struct top_args, filters), NULL, 0 },
		{ &stack_options, offsetof(struct top_args, stk), NULL, 6 }, {} },
};

/* The running state shared by the three modes. */
struct top {
	struct top_args *a;
	struct sampler sp;		/* sp.sample: the last interval, keys, stacks, kvm events */
	struct row_table tot;		/* our own sum since start / reset (kernel: never) */
	struct row_table key_tot;	/* --keys: likewise, by key */
	struct top_wake wake;		/* --wake: the interval's and the totals' wake cells */
	struct top_data d;
	struct top_ui ui;
	struct top_view v;
	struct top_log log;
	double reset_at;
	char host[65], kernel[65], filters[160];
	char ov_line[256];		/* --overhead */
	FILE *out;			/* --log: stdout or -L FILE */
};

/* -L: SIGHUP reopens the file (logrotate's habit) instead of ending the run as it would. */
static volatile sig_atomic_t reopen_log;

static void on_sighup(int sig)
{
	(void)sig;
	reopen_log = 1;
}

/* Adds rows (an interval's) to a sum of them. 0 or -ENOMEM. */
static int add_rows(struct row_table *sum, const struct row_table *rows)
{
	for (__u32 i = 0; i < rows->nr; i++) {
		struct row *r = row_table_get(sum, &rows->rows[i].key);

		if (!r)
			return -ENOMEM;
		row_add(r, &rows->rows[i]);
	}
	return 0;
}

/* What the view shows of a sample: its tables, refilled in place by every sample. */
static void take_tables(struct top *tp)
{
	const struct sample *smp = &tp->sp.sample;

	tp->d.cur = smp->rows;
	tp->d.names = smp->names;
	tp->d.key_cur = smp->key_rows;
	tp->d.key_tot = smp->key_rows ? &tp->key_tot : NULL;
	tp->d.qmp = smp->qmp;
	tp->d.stacks = smp->stacks;
}

/* --wake: the view's wake rows from the sample's cells, of the guests top traces. */
static int sample_wake(struct top *tp)
{
	const struct event_filter *ef = &tp->a->filters.opts.filter;
	int err = top_wake_sample(&tp->wake, &tp->sp.sample, ef->pids, ef->nr_pids);

	if (!err && tp->sp.sample.wake) {
		tp->d.wake_cur = &tp->wake.cur;
		tp->d.wake_tot = &tp->wake.tot;
	}
	return err;
}

static int sample(struct top *tp)
{
	const struct sample *smp = &tp->sp.sample;
	int err = sampler_sample(&tp->sp);

	take_tables(tp);
	err = err ? err : add_rows(&tp->tot, smp->rows);
	if (!err && smp->key_rows)
		err = add_rows(&tp->key_tot, smp->key_rows);
	err = err ? err : sample_wake(tp);
	if (err)
		return err;
	tp->d.interval_s = smp->interval_s;
	tp->d.inflight = smp->inflight;
	tp->d.nr_inflight = smp->nr_inflight;
	tp->d.now_ns = smp->now_ns;
	memcpy(tp->d.lost, smp->lost, sizeof(tp->d.lost));
	/* Against every exit since start: the kernel's statistics are never reset. */
	if (smp->overhead) {
		overhead_line(smp->overhead, smp->cum, tp->ov_line, sizeof(tp->ov_line));
		tp->d.overhead = tp->ov_line;
	}
	return 0;
}

static void update_times(struct top *tp)
{
	double now = sampler_now();

	tp->d.elapsed_s = now - tp->sp.start;
	tp->d.since_s = now - tp->reset_at;
}

static void describe_filters(struct top *tp)
{
	const struct session_opts *o = &tp->a->filters.opts;
	size_t n = 0, len = sizeof(tp->filters);

	tp->filters[0] = 0;
	for (int i = 0; i < tp->a->filters.sel.nr_guests && n < len; i++)
		n += snprintf(tp->filters + n, len - n, "%s-g %s", n ? " " : "",
			      tp->a->filters.sel.guests[i]);
	if (!tp->a->filters.sel.nr_guests) {
		for (int i = 0; i < o->filter.nr_pids && n < len; i++)
			n += snprintf(tp->filters + n, len - n, "%s%d", i ? "," : "-p ",
				      o->filter.pids[i]);
	}
	if (o->filter.vcpu >= 0 && n < len)
		n += snprintf(tp->filters + n, len - n, "%s-c %d", n ? " " : "", o->filter.vcpu);
	if (o->filter.nr_reasons && n < len)
		snprintf(tp->filters + n, len - n, "%s-r (%d reason%s)", n ? " " : "",
			 o->filter.nr_reasons, o->filter.nr_reasons == 1 ? "" : "s");
}

/* sampler_wait(), which reads the kvm events meanwhile (--kvm-events); -L: a SIGHUP, which
 * the sampler's handlers take as the end of the run, reopens the file instead. */
static enum sampler_wake wait_due(struct top *tp)
{
	if (!tp->a->log_file)
		return sampler_wait(&tp->sp);
	while (!exiting && !reopen_log) {
		double left = sampler_due_in(&tp->sp);

		if (left <= 0)
			return SAMPLER_DUE;
		usleep(left < 0.02 ? (useconds_t)(left * 1e6) + 1 : 20000);
		sampler_poll(&tp->sp);
	}
	return exiting ? SAMPLER_SIGNALLED : SAMPLER_DUE;
}

static int run_once(struct top *tp)
{
	int err;

	/* Ctrl-C cuts the interval short: print what it saw, as kvm_stat -1 would have. */
	wait_due(tp);
	err = sample(tp);
	if (err)
		return err;
	update_times(tp);
	tp->ui.interactive = false;
	tp->ui.height = 0;
	tp->ui.width = (tp->a->width ? tp->a->width : 100) + 1;
	if (top_view_build(&tp->v, &tp->d, &tp->ui))
		return -ENOMEM;
	for (int i = 0; i < tp->v.nr_lines; i++)
		printf("%s\n", tp->v.lines[i].text);
	err = out_flush(stdout);
	if (err)
		out_write_error("the screen", err);
	return err;
}

/* -L FILE, appended to; on SIGHUP, after logrotate moved it, a new one with a header. */
static int open_log(struct top *tp)
{
	FILE *f = fopen(tp->a->log_file, "a");

	if (!f) {
		fprintf(stderr, "vmexit: cannot open the log file %s: %s\n", tp->a->log_file,
			strerror(errno));
		return -errno;
	}
	if (tp->out && tp->out != stdout && fclose(tp->out))
		fprintf(stderr, "vmexit: closing the old log file: %s\n", strerror(errno));
	tp->out = f;
	tp->log.started = false;
	return 0;
}

static int run_log(struct top *tp)
{
	long intervals = 0;
	char buf[2048];
	int err;

	while (wait_due(tp) == SAMPLER_DUE) {
		char clock[16];
		time_t wall;
		struct tm tm;

		if (reopen_log) {
			reopen_log = 0;
			err = open_log(tp);
			if (err)
				return err;
			if (sampler_due_in(&tp->sp) > 0)
				continue;
		}
		err = sample(tp);
		if (err)
			return err;
		wall = time(NULL);
		localtime_r(&wall, &tm);
		strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
		top_log_emit(&tp->log, tp->sp.sample.rows, &tp->tot, tp->d.interval_s, tp->d.lost, clock,
			     tp->ui.have_re ? &tp->ui.re : NULL, buf, sizeof(buf));
		fputs(buf, tp->out);
		err = out_flush(tp->out);
		if (err) {
			out_write_error("the log", err);
			return err;
		}
		if (tp->a->count && ++intervals >= tp->a->count)
			break;
	}
	return 0;
}

static int map_key(int ch)
{
	switch (ch) {
	case KEY_UP: return TK_UP;
	case KEY_DOWN: return TK_DOWN;
	case KEY_PPAGE: return TK_PGUP;
	case KEY_NPAGE: return TK_PGDN;
	case KEY_HOME: return TK_HOME;
	case KEY_END: return TK_END;
	case KEY_LEFT: return TK_LEFT;
	case KEY_RIGHT: return TK_RIGHT;
	case KEY_ENTER: case '\n': case '\r': return TK_ENTER;
	case KEY_BACKSPACE: case 127: case 8: return TK_BACKSPACE;
	case 27: return TK_ESC;
	case KEY_RESIZE: return TK_RESIZE;
	default: return ch;
	}
}

static void paint(struct top *tp)
{
	int rows = LINES, cols = COLS;

	erase();
	if (cols < 2) {		/* nothing fits; and a negative precision would print it all */
		refresh();
		return;
	}
	for (int i = 0; i < tp->v.nr_lines && i < rows; i++) {
		const struct top_line *l = &tp->v.lines[i];
		attr_t at = 0;

		if (l->attr & TOP_A_BOLD)
			at |= A_BOLD;
		if (l->attr & TOP_A_REVERSE)
			at |= A_REVERSE;
		if ((l->attr & TOP_A_ALERT) && has_colors())
			at |= COLOR_PAIR(1);
		attrset(at);
		/* Reverse bars span the width, so the header reads as one band. */
		mvprintw(i, 0, "%-*.*s", cols - 1, cols - 1, l->text);
		attrset(A_NORMAL);
	}
	refresh();
}

static int redraw(struct top *tp)
{
	update_times(tp);
	tp->ui.width = COLS;
	tp->ui.height = LINES;
	if (top_view_build(&tp->v, &tp->d, &tp->ui))
		return -ENOMEM;
	paint(tp);
	return 0;
}

static int run_live(struct top *tp)
{
	int err = 0;

	if (!newterm(NULL, stdout, stdin)) {
		fprintf(stderr, "vmexit: cannot drive this terminal (TERM=%s): use --once or "
			"--log\n", getenv("TERM") ? getenv("TERM") : "unset");
		return -EINVAL;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	if (has_colors()) {
		start_color();
		use_default_colors();
		init_pair(1, COLOR_RED, -1);
	}
	tp->ui.interactive = true;
	err = redraw(tp);
	while (!err && !exiting) {
		double left = sampler_due_in(&tp->sp);
		int ch, key;

		/* Short waits: new cells get named while their threads exist (sampler_poll). */
		timeout(left <= 0 ? 0 : left < 0.05 ? (int)(left * 1000) + 1 : 50);
		ch = getch();
		sampler_poll(&tp->sp);
		if (ch != ERR) {
			enum top_action act;

			key = map_key(ch);
			act = top_ui_key(&tp->ui, key, &tp->v, &tp->d);
			if (act == TA_QUIT)
				break;
			if (act == TA_RESET) {
				row_table_reset(&tp->tot);
				row_table_reset(&tp->key_tot);
				err = top_wake_reset(&tp->wake);
				tp->reset_at = sampler_now();
				tp->d.was_reset = true;
			}
			if (act == TA_DELAY)
				sampler_set_interval(&tp->sp, tp->ui.delay);
			err = err ? err : redraw(tp);
			continue;
		}
		if (sampler_due_in(&tp->sp) > 0)
			continue;
		err = sample(tp);
		err = err ? err : redraw(tp);
	}
	endwin();
	return err;
}

/*
 * kvm_stat's letters that mean something else here: a hint naming vmexit's equivalent when
 * one is used as kvm_stat's (its argument, or none, is not what vmexit's option takes).
 */
static const struct {
	const char *opt;
	bool takes_number;		/* vmexit's option: a number (else a word) */
	const char *hint;
} kvm_stat_letters[] = {
	{ "-c", true, "-c N is the vCPU filter here; for kvm_stat's -c (CSV) use "
	  "`vmexit stat --csv`" },
	{ "-s", false, "-s is the sort order here (-s rate); kvm_stat's -s DELAY is -d DELAY" },
	{ "-d", true, "-d is the delay here (-d SECONDS); vmexit reads tracepoints, there is "
	  "no debugfs mode (kvm_stat -d)" },
};

static void kvm_stat_hints(int argc, char **argv)
{
	size_t n = sizeof(kvm_stat_letters) / sizeof(kvm_stat_letters[0]);

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		for (size_t k = 0; k < n; k++) {
			double v;

			if (strcmp(argv[i], kvm_stat_letters[k].opt))
				continue;
			if (i + 1 == argc ||
			    strict_double(argv[i + 1], &v) != kvm_stat_letters[k].takes_number)
				fprintf(stderr, "vmexit: hint: %s\n", kvm_stat_letters[k].hint);
		}
	}
}

/* -f help: every name a row can have, which -f matches (guest names too). */
static int print_fields(void)
{
	static const __u32 isas[] = { VMEXIT_ISA_VMX, VMEXIT_ISA_SVM, VMEXIT_ISA_ARM64,
				      VMEXIT_ISA_USER };
	char name[REASON_STR_MAX + 32];
	int err;

	printf("# -f REGEX matches guest names and these (any case); kvm_stat's fields:\n");
	for (size_t i = 0; i < sizeof(isas) / sizeof(isas[0]); i++) {
		size_t n;
		const struct reason_entry *t = reason_table(isas[i], &n);

		if (i == 0 || isas[i] == VMEXIT_ISA_USER)
			printf("%s\n", i ? "kvm_userspace_exit" : "kvm_exit");
		for (size_t j = 0; j < n; j++) {
			top_reason_label(isas[i], t[j].code, name, sizeof(name));
			printf("%s\n", name);
		}
	}
	for (__u32 id = 1; id < VMEXIT_KVM_NR; id++) {
		top_reason_label(TOP_ISA_KVM_EVENT, id, name, sizeof(name));
		printf("%s (--kvm-events)\n", name);
	}
	err = out_flush(stdout);
	if (err)
		out_write_error("the field list", err);
	return err ? 1 : 0;
}

/* The run, once the options are parsed; its exit status. */
static int top_main(struct top_args *a)
{
	struct top tp = { .a = a, .out = stdout };
	struct sampler_opts so = { .by = BY_VCPU };
	struct utsname u;
	char err[192];
	bool log_given;
	int rc = 0;

	if (a->fields && !strcmp(a->fields, "help"))
		return print_fields();
	top_ui_init(&tp.ui);
	tp.ui.split = a->filters.opts.split;
	tp.ui.delay = a->delay;
	tp.ui.sort = a->sort;
	tp.ui.skip_zero = tp.log.skip_zero = a->skip_zero;
	if (a->fields && top_ui_set_filter(&tp.ui, a->fields, err, sizeof(err))) {
		fprintf(stderr, "vmexit: -f: %s\n", err);
		return 2;
	}
	log_given = a->log;
	if (!a->once && !a->log && (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)))
		a->log = true;
	/* Not silently dropped: --log has no views to start in. */
	if (a->log && (a->drill || a->vcpus || a->filters.opts.key_mode || a->stk.stacks ||
		       a->wake)) {
		fprintf(stderr, "vmexit: %s: --log%s prints the reasons of every VM selected "
			"(-p/-g), with no views; use --once for one screen of a view\n",
			a->drill ? "-x" : a->vcpus ? "--vcpus" : a->stk.stacks ? "--stacks" :
			a->wake ? "--wake" :
			a->rips ? "--rips" : "--keys",
			a->log_file ? " (-L)" : log_given ? "" : " (the default without a terminal)");
		top_ui_free(&tp.ui);
		return 2;
	}
	if (a->log_file && open_log(&tp)) {
		top_ui_free(&tp.ui);
		return 1;
	}
	so.interval = a->delay;
	so.overhead = a->overhead;
	/* The live view's first screen comes quickly; its Current column is a rate all the same. */
	if (!a->once && !a->log && a->delay > 0.25)
		so.first = 0.25;
	so.key_by = BY_VCPU;
	so.key_vcpu = -1;
	so.kvm_events = true;
	so.stacks = a->stk.stacks;
	so.qmp = a->qmp;
	so.qmp_timeout_ms = a->qmp_timeout_ms;
	so.wake = a->wake;
	if (sampler_open(&tp.sp, &a->filters, &so)) {
		top_ui_free(&tp.ui);
		if (tp.out != stdout)
			fclose(tp.out);
		return 1;
	}
	/* After sampler_open(): its handlers would end the run on SIGHUP. */
	if (a->log_file)
		sigaction(SIGHUP, &(struct sigaction){ .sa_handler = on_sighup }, NULL);
	/* -x / --vcpus: of the one guest asked for, else of all of them. */
	if (a->drill || a->vcpus) {
		const struct event_filter *ef = &a->filters.opts.filter;

		tp.ui.level = a->drill ? LV_REASONS : LV_VCPUS;
		tp.ui.tgid = ef->nr_pids == 1 ? (__u32)ef->pids[0] : 0;
		if (a->drill && (a->filters.opts.key_mode || a->stk.stacks)) {
			tp.ui.level = a->filters.opts.key_mode ? LV_KEYS : LV_STACKS;
			tp.ui.key_all = true;
		}
	}
	if (a->wake) {
		const struct event_filter *ef = &a->filters.opts.filter;

		tp.ui.level = LV_WAKE;
		tp.ui.tgid = ef->nr_pids == 1 ? (__u32)ef->pids[0] : 0;
	}
	row_table_init(&tp.tot);
	row_table_init(&tp.key_tot);
	uname(&u);
	snprintf(tp.host, sizeof(tp.host), "%s", u.nodename);
	snprintf(tp.kernel, sizeof(tp.kernel), "%s", u.release);
	describe_filters(&tp);
	tp.d = (struct top_data){ .tot = &tp.tot, .host = tp.host, .kernel = tp.kernel,
				  .filters = tp.filters, .stuck_ns = a->stuck_ns,
				  .per_address = a->per_address };
	if (a->filters.opts.key_mode)
		tp.d.syms = &a->syms;
	setlocale(LC_ALL, "");
	sampler_start(&tp.sp);
	/* sampler_start()'s sample (before counting) has the tables, empty: the first screen. */
	take_tables(&tp);
	/* The wake cells at the start: the first interval and the totals count from here. */
	if (!rc)
		rc = sample_wake(&tp);
	if (!rc)
		rc = top_wake_reset(&tp.wake);
	tp.reset_at = tp.sp.start;
	/*
	 * Nothing to drop here: the kernel sends kvm events, as it counts exits, only from when
	 * counting starts (sampler_start()); draining the ring now would drop the events of exits
	 * counted meanwhile (10 % of an interval on a slow machine).
	 */

	if (!rc && a->once)
		rc = run_once(&tp);
	else if (!rc && a->log)
		rc = run_log(&tp);
	else if (!rc)
		rc = run_live(&tp);
	if (a->log && tp.d.overhead)
		fprintf(stderr, "%s\n", tp.d.overhead);
	/* The last lines reached the file at their out_flush(); a failed close still counts. */
	if (tp.out != stdout && fclose(tp.out) && !rc) {
		rc = -errno;
		out_write_error("the log", rc);
	}

	top_view_free(&tp.v);
	top_ui_free(&tp.ui);
	row_table_free(&tp.tot);
	row_table_free(&tp.key_tot);
	top_wake_free(&tp.wake);
	return sampler_close(&tp.sp, rc);
}

int cmd_top(int argc, char **argv)
{
	struct top_args a = { .delay = 1, .sort = TS_RATE, .stuck_ns = 1000000000ull };
	int rc;

	kvm_stat_hints(argc, argv);
	if (cmd_options_parse(&top_options, argc, argv, 0, &a))
		return 2;
	/* top traces running guests: a name none of them has is likely a typo. */
	guest_symbols_note_absent(&a.syms, stderr);
	rc = top_main(&a);
	guest_symbols_free(&a.syms);
	return rc;
}
