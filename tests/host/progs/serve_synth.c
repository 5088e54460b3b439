// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit serve`'s exporter and HTTP server over synthesized cells (tests/synth_cells.h), for
 * the serve tests that need no KVM: the sampler, snapshot, exporter, renderers and HTTP side are
 * serve's own. Adds EXITS exits to every cell, then serves until SIGTERM, and writes what
 * vmexit itself makes of each row to TRUTH: "pid vcpu kind reason count p99_ns" lines (vcpu -1
 * without --by vcpu; kind user or kernel).
 *
 * USAGE: serve_synth GUESTS VCPUS REASONS EXITS TRUTH [--by-vcpu] [--histograms MODE]
 *        [--max-series N]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exporter.h"
#include "expo_resolution.h"
#include "metrics_http.h"
#include "reasons.h"
#include "series_cap.h"
#include "../../synth_cells.h"

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int write_truth(void *ctx, const struct row_table *cum)
{
	FILE *f = ctx;
	char rb[REASON_STR_MAX];

	for (__u32 i = 0; i < cum->nr; i++) {
		const struct row *r = &cum->rows[i];
		const char *name = reason_name(r->key.isa, r->key.reason);

		fprintf(f, "%u %d %s %s %llu %llu\n", r->key.tgid, r->key.vcpu,
			r->key.isa == VMEXIT_ISA_USER ? "user" : "kernel",
			name ? name : reason_str(r->key.isa, r->key.reason, rb, sizeof(rb)),
			(unsigned long long)r->count, (unsigned long long)row_percentile(r, 99));
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct synth syn;
	struct sampler_source src;
	struct sampler sp, full;
	struct exporter x;
	struct hist_coarse coarse;
	struct expo_buckets bk;
	struct http_server *srv;
	enum expo_hists hists = EXPO_HISTS_NATIVE;
	__u64 max_series = SERIES_CAP_DEFAULT;
	bool by_vcpu = false;
	char where[64], err[256];
	FILE *truth;
	int fd;

	if (argc < 6) {
		fprintf(stderr, "usage: serve_synth GUESTS VCPUS REASONS EXITS TRUTH [--by-vcpu] "
			"[--histograms native|classic|both] [--max-series N]\n");
		return 2;
	}
	for (int i = 6; i < argc; i++) {
		if (!strcmp(argv[i], "--by-vcpu"))
			by_vcpu = true;
		else if (!strcmp(argv[i], "--histograms") && i + 1 < argc)
			hists = !strcmp(argv[++i], "classic") ? EXPO_HISTS_CLASSIC :
				!strcmp(argv[i], "both") ? EXPO_HISTS_BOTH : EXPO_HISTS_NATIVE;
		else if (!strcmp(argv[i], "--max-series") && i + 1 < argc)
			max_series = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "serve_synth: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (synth_init(&syn, &src, atoi(argv[1]), atoi(argv[2]), atoi(argv[3]))) {
		fprintf(stderr, "serve_synth: bad layout or out of memory\n");
		return 1;
	}
	synth_add(&syn, atoi(argv[4]));
	expo_buckets_default(&bk);
	/*
	 * The truth from the kernel's resolution (as stat would print it), read by a sampler of
	 * its own; serve's keeps only what it exports (serve_cmd.c: expo_resolution()).
	 */
	truth = fopen(argv[5], "w");
	if (!truth || sampler_init(&full, &src, &(struct sampler_opts){
						.by = by_vcpu ? BY_VCPU : BY_VM, .interval = 1,
						.no_interval_rows = true })) {
		fprintf(stderr, "serve_synth: cannot write %s\n", argv[5]);
		return 1;
	}
	sampler_start(&full);
	if (sampler_sample(&full) || sampler_with_rows(&full, write_truth, truth) ||
	    fclose(truth)) {
		fprintf(stderr, "serve_synth: cannot write %s\n", argv[5]);
		return 1;
	}
	sampler_close(&full, 0);
	expo_resolution(&bk, &coarse);
	if (sampler_init(&sp, &src, &(struct sampler_opts){ .by = by_vcpu ? BY_VCPU : BY_VM,
							     .interval = 1,
							     .no_interval_rows = true,
							     .hist_coarse = &coarse }) ||
	    exporter_init(&x, &sp, &bk, by_vcpu, 3600 * 1000, 1000000000ULL)) {
		fprintf(stderr, "serve_synth: cannot set up\n");
		return 1;
	}
	x.hists = hists;
	x.max_series = max_series;
	sampler_start(&sp);
	if (sampler_sample(&sp))
		return 1;
	fd = http_listen("127.0.0.1:0", where, sizeof(where), err, sizeof(err));
	srv = fd >= 0 ? http_server_start(fd, &http_default_limits, exporter_render, &x, false,
					  err, sizeof(err))
		      : NULL;
	if (!srv) {
		fprintf(stderr, "serve_synth: %s\n", err);
		return 1;
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	fprintf(stderr, "serve_synth: listening on http://%s/metrics\n", where);
	while (!stop)
		pause();
	http_server_stop(srv);
	exporter_free(&x);
	sampler_close(&sp, 0);
	synth_free(&syn);
	return 0;
}
