// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit serve: a Prometheus / OpenMetrics exporter. The main thread owns the sampler (its
 * ticks name new guests while they run, its samples keep the kernel's 32-bit bucket deltas
 * short); the HTTP thread takes a fresh snapshot of the rows since start for each scrape.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bpf_run_stats.h"
#include "cli_filters.h"
#include "commands.h"
#include "durations.h"
#include "exporter.h"
#include "expo_resolution.h"
#include "guest_follow.h"
#include "heap_policy.h"
#include "metrics_http.h"
#include "privileges.h"
#include "qmp_option.h"
#include "series_cap.h"
#include "kvm_serve.h"
#include "source_option.h"

/* Seconds between the exporter's own samples (a vCPU makes at most ~10M exits/s: 2^32 takes
 * minutes). */
#define SELF_SAMPLE_S	5

static const char doc[] =
"Export exit counts and latency histograms to Prometheus and OpenMetrics.\n"
"\n"
"USAGE: vmexit serve [OPTION...]\n"
"\n"
"Serves http://ADDR:PORT/metrics (text format 0.0.4, OpenMetrics 1.0 or the\n"
"protobuf format with native histograms, as the Accept header asks; gzipped\n"
"when Accept-Encoding allows gzip) until SIGTERM or Ctrl-C. Counters run from\n"
"vmexit's start; a guest's series stay --keep after its VMM exits, then go.\n"
"-g follows the name: a VMM of that name that starts later (a restarted guest)\n"
"is traced within a second of its first exit; a -g or -p with no running\n"
"process yet is a note.\n"
"\n"
"EXAMPLES:\n"
"    vmexit serve                        # http://localhost:9477/metrics\n"
"    vmexit serve --listen :9477 --by vcpu   # every address, per-vCPU series\n"
"    vmexit serve -g 'web01' -r EPT_VIOLATION,HLT   # filters, in the kernel\n"
"    vmexit serve --buckets 1.024us,32.768us,1.048576ms,33.554432ms\n"
"    vmexit serve --keys 20 --qmp auto   # top 20 keys per guest x reason\n"
"    vmexit serve --histograms both      # native and classic to Prometheus\n"
"    vmexit serve --source kvm           # KVM's own counters, no BPF at all\n"
"\v" DURATION_HELP;

struct serve_args {
	struct cli_filters filters;
	const char *listen;
	enum group_by by;
	struct expo_buckets buckets;
	__u64 keep_ns;
	__u64 stuck_ns;
	const char *pidfile;
	__u32 keys;		/* --keys N; 0: none */
	const char *qmp;	/* --qmp */
	int qmp_timeout_ms;	/* --qmp-timeout; 0: the default */
	enum expo_hists hists;	/* --histograms */
	__u64 max_series;	/* --max-series */
	enum exit_source source;	/* --source */
	bool per_address;	/* --per-address */
	bool wake;		/* --wake */
};

OPT_STATIC_STORE(opt_hists, enum expo_hists);
static void opt_hists(const char *arg, void *to, struct argp_state *state)
{
	if (!strcmp(arg, "native"))
		*(enum expo_hists *)to = EXPO_HISTS_NATIVE;
	else if (!strcmp(arg, "classic"))
		*(enum expo_hists *)to = EXPO_HISTS_CLASSIC;
	else if (!strcmp(arg, "both"))
		*(enum expo_hists *)to = EXPO_HISTS_BOTH;
	else
		argp_error(state, "invalid --histograms '%s': give native, classic or both", arg);
}

OPT_STATIC_STORE(opt_max_series, __u64);
static void opt_max_series(const char *arg, void *to, struct argp_state *state)
{
	*(__u64 *)to = (__u64)parse_long_arg(arg, "--max-series", 1, 100000000, state);
}

OPT_STATIC_STORE(opt_buckets, struct expo_buckets);
static void opt_buckets(const char *arg, void *to, struct argp_state *state)
{
	char err[256];

	if (expo_buckets_parse(arg, to, err, sizeof(err)))
		argp_error(state, "%s", err);
}

OPT_STATIC_STORE(opt_by, enum group_by);
static void opt_by(const char *arg, void *to, struct argp_state *state)
{
	if (!strcmp(arg, "vm"))
		*(enum group_by *)to = BY_VM;
	else if (!strcmp(arg, "vcpu"))
		*(enum group_by *)to = BY_VCPU;
	else
		argp_error(state, "invalid --by '%s': give vm or vcpu", arg);
}

OPT_STATIC_STORE(opt_keys, __u32);
static void opt_keys(const char *arg, void *to, struct argp_state *state)
{
	*(__u32 *)to = (__u32)parse_long_arg(arg, "--keys", 1, 1000, state);
}

static const struct cmd_option options[] = {
	OPT_HEADER("Exporter:", 2),
	{ "listen", 0, "[ADDR]:PORT", 0, "Where to serve (default " HTTP_DEFAULT_LISTEN
	  "; :PORT for every address, [::1]:PORT for IPv6, port 0 for any free one)", 2,
	  OPT_TO(struct serve_args, listen, opt_string) },
	{ "by", 0, "vm|vcpu", 0, "Series per guest x reason (default), or per vCPU as well "
	  "(a vcpu label)", 2, OPT_TO(struct serve_args, by, opt_by) },
	{ "buckets", 0, "LIST", 0, "Histogram bounds (default powers of two from 256ns "
	  "to 2.147483648s); each an edge of the kernel's histogram, e.g. 1.024us,1.048576ms", 2,
	  OPT_TO(struct serve_args, buckets, opt_buckets) },
	{ "keep", 0, "DURATION", 0, "Keep an exited guest's series this long "
	  "(default 5m)", 2, OPT_TO(struct serve_args, keep_ns, opt_keep) },
	{ "stuck", 0, "DURATION", 0, "Export the exits in flight for this long or more "
	  "(default 1s; ns, us, ms, s, m or h)", 2,
	  OPT_TO(struct serve_args, stuck_ns, opt_serve_stuck) },
	{ "pidfile", 0, "FILE", 0, "Write the process id to FILE (removed at exit)", 2,
	  OPT_TO(struct serve_args, pidfile, opt_string) },
	{ "keys", 0, "N", 0, "Also series per key (port, address, MSR, ...): each guest x "
	  "reason's N busiest, the rest summed as key=\"other\" (vmexit_key_exits_total, "
	  "vmexit_key_exit_seconds_total)", 2, OPT_TO(struct serve_args, keys, opt_keys) },
	{ "histograms", 0, "native|classic|both", 0, "Duration histograms for scrapers that "
	  "take protobuf (Prometheus with native histograms on): native "
	  "vmexit_exit_duration_nanoseconds (default, one series each), classic "
	  "vmexit_exit_duration_seconds, or both; text scrapers always get classic", 2,
	  OPT_TO(struct serve_args, hists, opt_hists) },
	{ "max-series", 0, "N", 0, "At most N per-guest series per scrape (default 30000); "
	  "past it whole rows (then --keys, --wake series) are left out, counted in "
	  "vmexit_series_dropped and said once in the log", 2,
	  OPT_TO(struct serve_args, max_series, opt_max_series) },
	QMP_OPTION(struct serve_args, qmp, 2),
	SOURCE_OPTION(struct serve_args, source, 2),
	{ "per-address", 0, NULL, 0, "With --keys N: a series per port and MMIO address, not per "
	  "device (key_end in the key label of a device's span)", 2,
	  OPT_TO(struct serve_args, per_address, opt_true) },
	{ "wake", 0, NULL, 0, "(x86, arm64) Also interrupt delivery latency per guest and source "
	  "(vmexit_irq_delivery_seconds, its parts), those KVM posted with no exit "
	  "(vmexit_irq_posted_total), halted exits' parts and halt wake-up times "
	  "(vmexit_halt_wakeup_seconds): its programs cost every context switch and wake-up on "
	  "the host a hash lookup", 2, OPT_TO(struct serve_args, wake, opt_true) },
	{},
};

static void serve_end_check(void *input, struct argp_state *state)
{
	struct serve_args *a = input;

	if (a->qmp && !a->keys)
		argp_error(state, "--qmp names ports and addresses: add --keys N");
	qmp_option_check(a->qmp, a->qmp_timeout_ms, state);
	if (a->per_address && !a->keys)
		argp_error(state, "--per-address is an option of --keys N (add --keys N)");
	cli_filters_keys_check(&a->filters, a->keys, "--keys N", state);
	cli_filters_gpa_check(&a->filters, a->keys ? KEY_MODE_DEVICE : KEY_MODE_OFF, "--keys N",
			      state);
	if (a->source == SOURCE_KVM &&
	    (a->keys || a->qmp || a->filters.opts.split || a->filters.sel.f.nr_reasons ||
	     a->filters.sel.f.vcpu >= 0 || a->wake))
		argp_error(state, "--source kvm exports KVM's counters per guest or vCPU only: drop "
			   "--keys, --qmp, --split, --wake, -r and -c");
	/* The kernel keys exits only when asked: its programs load with --keys. */
	if (a->keys)
		a->filters.opts.key_mode = KEY_MODE_DEVICE;
}

static const struct cmd_options serve_options = {
	.options = options, .unexpected = "", .doc = doc, .end = serve_end_check,
	.children = (const struct cmd_child[]){
		{ &cli_filters_options, offsetof(struct serve_args, filters), NULL, 0 }, {} },
};

static int write_pidfile(const char *path)
{
	char buf[32];
	int fd, n, err = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", getpid());
	if (write(fd, buf, n) != n)
		err = errno ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

static int follow_apply(void *ctx, const int *add, int nr_add, const int *del, int nr_del)
{
	return session_filter_pids(ctx, add, nr_add, del, nr_del);
}

static int follow_seen(void *ctx, int *pids, int max)
{
	return session_unwanted_vmms(ctx, pids, max);
}

/* What the sampler's owner does on each tick. */
static void serve_tick(void *ctx, double now)
{
	guest_follow_poll(ctx, now);
}

/* Loads the BPF side and serves until a signal; the process exit status. */
static int serve(struct serve_args *a, int listen_fd, const char *where)
{
	static struct guest_follow follow;	/* 15 KB: not on the stack */
	struct cli_filters *f = &a->filters;
	struct sampler sp;
	struct key_series keys;
	struct exporter x;
	struct hist_coarse coarse;
	struct guest_select select = { f->sel.f.pids, f->sel.f.nr_pids, f->sel.guests,
				       f->sel.nr_guests };
	struct http_server *srv = NULL;
	char err[256];
	struct bpf_program *progs[EXPORTER_MAX_PROGS];
	int stats_fd, rc = 0, e, n;
	bool pid_written = false;

	serve_heap_policy();
	/* Rows since the start at the exposition's resolution: 2.3 KB a row less its 282
	 * buckets, the same exported numbers. */
	expo_resolution(&a->buckets, &coarse);
	/* Scrapes sample afresh; the loop's own samples keep each cell's 32-bit bucket deltas
	 * far from wrapping and notice ended guests for --keep. Only the rows since the start
	 * are exported: none per interval. */
	if (sampler_open(&sp, f, &(struct sampler_opts){ .by = a->by,
						 .interval = SELF_SAMPLE_S,
						 .no_interval_rows = true,
						 .key_by = BY_VM, .key_vcpu = -1,
						 .qmp = a->qmp, .wake = a->wake,
						 .hist_coarse = &coarse,
						 .qmp_timeout_ms = a->qmp_timeout_ms,
						 .tick = serve_tick, .tick_ctx = &follow })) {
		close(listen_fd);
		return 1;
	}
	/* -p alone: the kernel's pid filter, followed as pids come and go. -g: every VMM
	 * counted, the named ones exported (guest_select.h): nothing for guest_follow to do. */
	guest_follow_init(&follow, NULL, 0, f->opts.filter.pids, f->sel.f.nr_pids,
			  f->opts.filter.pids + f->sel.f.nr_pids,
			  f->opts.filter.nr_pids - f->sel.f.nr_pids);
	follow.seen = follow_seen;
	follow.apply = follow_apply;
	follow.ctx = &sp.s;
	follow.verbose = f->opts.verbose;
	e = exporter_init(&x, &sp, &a->buckets, a->by == BY_VCPU, a->keep_ns / 1000000,
			  a->stuck_ns);
	if (e) {
		close(listen_fd);
		return sampler_close(&sp, e);
	}
	x.hists = a->hists;
	x.max_series = a->max_series;
	x.wake = a->wake;
	if (f->sel.nr_guests)
		x.select = &select;
	/* The sampler reads the key table; expired guests' keys leave it (sampler_forget()). */
	if (a->keys) {
		key_series_init(&keys, a->keys, a->qmp ? &sp.qmp : NULL);
		keys.per_address = a->per_address;
		x.keys = &keys;
	}
	/* Run-time accounting costs two clock reads per program run: only while serving. */
	stats_fd = bpf_run_stats_enable();
	if (stats_fd < 0)
		fprintf(stderr, "vmexit serve: BPF run-time statistics unavailable (%s): "
			"vmexit_bpf_run_seconds_total is not exported\n", strerror(-stats_fd));
	n = session_progs(&sp.s, progs, EXPORTER_MAX_PROGS);
	/* --wake's programs run on every exit and entry too: their cost is serve's. */
	n += wake_progs_list(&sp.wake, progs + n, EXPORTER_MAX_PROGS - n);
	exporter_watch_progs(&x, progs, n, stats_fd >= 0);
	/* Loaded, attached, statistics on: the fds held are all serve needs for months. */
	e = privileges_drop();
	if (e)
		fprintf(stderr, "vmexit serve: warning: cannot drop capabilities: %s\n",
			strerror(-e));

	/* SIGHUP (a closed terminal, a reload out of habit) changes nothing. */
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sampler_start(&sp);
	srv = http_server_start(listen_fd, &http_default_limits, exporter_render, &x,
				a->filters.opts.verbose, err, sizeof(err));
	if (!srv) {
		fprintf(stderr, "vmexit serve: %s\n", err);
		rc = 1;
		goto out;
	}
	if (a->pidfile) {
		int perr = write_pidfile(a->pidfile);

		if (perr) {
			fprintf(stderr, "vmexit serve: cannot write --pidfile %s: %s\n", a->pidfile,
				strerror(-perr));
			rc = 1;
			goto out;
		}
		pid_written = true;
	}
	fprintf(stderr, "vmexit serve: listening on http://%s/metrics\n", where);

	while (sampler_wait(&sp) == SAMPLER_DUE) {
		e = sampler_sample(&sp);
		if (e)
			break;
		exporter_tick(&x);
	}
	if (!e)
		fprintf(stderr, "vmexit serve: stopping\n");
out:
	http_server_stop(srv);
	if (pid_written && unlink(a->pidfile))
		fprintf(stderr, "vmexit serve: cannot remove --pidfile %s: %s\n", a->pidfile,
			strerror(errno));
	if (stats_fd >= 0)
		close(stats_fd);
	exporter_free(&x);
	if (a->keys)
		key_series_free(&keys);
	e = sampler_close(&sp, e);
	return rc ? rc : e;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a = { .listen = HTTP_DEFAULT_LISTEN, .by = BY_VM,
				.keep_ns = 300 * 1000000000ULL, .stuck_ns = 1000000000ULL,
				.hists = EXPO_HISTS_NATIVE, .max_series = SERIES_CAP_DEFAULT };
	char where[128], err[512];
	int fd;

	expo_buckets_default(&a.buckets);
	/* Left running for months: guests come and go, -g and -p follow them. */
	a.filters.follow = true;
	a.filters.names_later = true;
	if (cmd_options_parse(&serve_options, argc, argv, 0, &a))
		return 2;
	/* The port first: a busy one fails in a moment, before loading anything. */
	fd = http_listen(a.listen, where, sizeof(where), err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "vmexit serve: %s\n", err);
		return fd == -EINVAL ? 2 : 1;
	}
	if (a.source == SOURCE_KVM)
		return kvm_serve(&(struct kvm_serve_opts){ .filters = &a.filters,
			.by_vcpu = a.by == BY_VCPU, .keep_s = a.keep_ns / 1e9,
			.verbose = a.filters.opts.verbose }, fd, where);
	return serve(&a, fd, where);
}
