// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit serve` at a microVM host's density: 1,000 guests x 4 vCPUs x 10 reasons (40,000
 * cells; tests/synth_cells.h, read by the sampler as the kernel's cells are), series per guest x
 * reason (serve's default). Per exposition a scraper can get (text with classic histograms,
 * protobuf with native, classic or both): the series, the render time, the bytes plain and
 * gzipped; then over HTTP on loopback as Prometheus asks (gzip): wall time and CPU per scrape,
 * and that CPU as a share of one core at a 15 s interval; the resident memory. Every cell moves
 * between scrapes. Targets (issue 30): a scrape <= 100 ms and <= 1 % of a core at 15 s, RSS
 * <= 64 MB, default series <= 30,000, native >= 5x fewer bytes than classic. Figures are
 * printed with the targets beside them, not asserted.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "exporter.h"
#include "heap_policy.h"
#include "http_gzip.h"
#include "metrics_http.h"
#include "series_cap.h"
#include "../tests/synth_cells.h"

#define GUESTS		1000
#define VCPUS		4
#define REASONS		10
#define SCRAPES		9
#define INTERVAL_S	15.0
#define PB_ACCEPT	"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;" \
			"encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kb = atol(line + strlen(field) + 1);
	if (f)
		fclose(f);
	return kb;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *t)
{
	qsort(t, SCRAPES, sizeof(t[0]), cmp_d);
	return t[SCRAPES / 2];
}

/* One GET over loopback to the last byte; the bytes read (headers too), or -1. */
static long http_get(int port, const char *accept)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static char buf[1 << 16];
	char req[512];
	long total = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (void *)&a, sizeof(a))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	n = snprintf(req, sizeof(req), "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: %s\r\n"
		     "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n", accept);
	if (write(fd, req, n) != n) {
		close(fd);
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return total;
}

static const struct mode {
	const char *what;
	enum expo_format fmt;
	enum expo_hists hists;
} modes[] = {
	{ "text 0.0.4, classic", EXPO_TEXT, EXPO_HISTS_CLASSIC },
	{ "protobuf, native (default)", EXPO_PROTOBUF, EXPO_HISTS_NATIVE },
	{ "protobuf, classic", EXPO_PROTOBUF, EXPO_HISTS_CLASSIC },
	{ "protobuf, both", EXPO_PROTOBUF, EXPO_HISTS_BOTH },
};
#define NR_MODES	(sizeof(modes) / sizeof(modes[0]))

int main(void)
{
	struct synth syn;
	struct sampler_source src;
	struct sampler sp;
	struct exporter x;
	struct expo_buckets bk;
	struct expo_buf out = {};
	struct http_server *srv;
	size_t bytes[NR_MODES], gz[NR_MODES];
	char where[64], err[256];
	long rss0, rss_cells, rss_sampled, rss_now;
	int fd, port;

	serve_heap_policy();	/* as serve */
	rss0 = status_kb("VmRSS:");
	if (synth_init(&syn, &src, GUESTS, VCPUS, REASONS)) {
		fprintf(stderr, "bench_serve_scale: out of memory\n");
		return 1;
	}
	synth_add(&syn, 20);
	rss_cells = status_kb("VmRSS:");
	expo_buckets_default(&bk);
	if (sampler_init(&sp, &src, &(struct sampler_opts){ .by = BY_VM, .interval = 1,
							     .no_interval_rows = true }) ||
	    exporter_init(&x, &sp, &bk, false, 3600 * 1000, 1000000000ULL)) {
		fprintf(stderr, "bench_serve_scale: cannot set up\n");
		return 1;
	}
	/* The figures of each exposition whole: no cap here (its effect is printed below). */
	x.max_series = ~0ULL;
	sampler_start(&sp);
	/* The sampler's own memory: what it keeps per cell and the rows since the start. */
	if (sampler_sample(&sp)) {
		fprintf(stderr, "bench_serve_scale: out of memory\n");
		return 1;
	}
	rss_sampled = status_kb("VmRSS:");
	printf("%u guests x %u vCPUs x %u reasons: %u cells, series per guest x reason, "
	       "%u-bound classic histograms\n", GUESTS, VCPUS, REASONS, syn.nr, bk.nr);
	for (size_t m = 0; m < NR_MODES; m++) {
		struct expo_input in = { .buckets = &bk };
		double t[SCRAPES], c[SCRAPES];
		size_t cap;
		__u64 series;
		char *z;

		x.hists = modes[m].hists;
		for (int i = 0; i < SCRAPES; i++) {
			double t0, c0;

			synth_add(&syn, 5);
			out.len = 0;
			c0 = thread_cpu_s();
			t0 = now_s();
			if (exporter_render(&x, modes[m].fmt, &out)) {
				fprintf(stderr, "bench_serve_scale: render failed\n");
				return 1;
			}
			t[i] = now_s() - t0;
			c[i] = thread_cpu_s() - c0;
		}
		bytes[m] = out.len;
		z = http_gzip(out.p, out.len, HTTP_GZIP_LEVEL, &gz[m], &cap);
		if (!z)
			return 1;
		free(z);
		series = (__u64)x.nr_series * series_per_row(&in, modes[m].fmt, modes[m].hists);
		printf("  %-27s %6llu series  render %6.1f ms (CPU %6.1f ms)  %6.2f MB  gzip %5.2f MB%s\n",
		       modes[m].what, (unsigned long long)series, median(t) * 1e3, median(c) * 1e3,
		       bytes[m] / 1e6,
		       gz[m] / 1e6, series > SERIES_CAP_DEFAULT ?
		       "  (over the default --max-series: a scrape keeps 30,000)" : "");
	}
	/* The duration families alone: both = rest + classic + native. */
	printf("  native vs classic (target >= 5x fewer bytes): whole scrape, native protobuf vs "
	       "text %.1fx (gzip %.1fx), vs classic protobuf %.1fx (gzip %.1fx); the histogram "
	       "families alone, protobuf %.1fx\n",
	       (double)bytes[0] / bytes[1], (double)gz[0] / gz[1], (double)bytes[2] / bytes[1],
	       (double)gz[2] / gz[1], (double)(bytes[3] - bytes[1]) / (bytes[3] - bytes[2]));

	expo_buf_free(&out);
	x.hists = EXPO_HISTS_NATIVE;
	x.max_series = SERIES_CAP_DEFAULT;
	fd = http_listen("127.0.0.1:0", where, sizeof(where), err, sizeof(err));
	srv = fd >= 0 ? http_server_start(fd, &http_default_limits, exporter_render, &x, false,
					  err, sizeof(err))
		      : NULL;
	if (!srv) {
		fprintf(stderr, "bench_serve_scale: %s\n", err);
		return 1;
	}
	port = atoi(strrchr(where, ':') + 1);
	for (int k = 0; k < 2; k++) {
		const char *accept = k ? "text/plain" : PB_ACCEPT;
		double t[SCRAPES], c[SCRAPES];
		long n = 0;

		for (int i = 0; i < SCRAPES; i++) {
			double t0, c0;

			synth_add(&syn, 5);
			c0 = cpu_s();
			t0 = now_s();
			n = http_get(port, accept);
			t[i] = now_s() - t0;
			c[i] = cpu_s() - c0;
			if (n < 0) {
				fprintf(stderr, "bench_serve_scale: GET failed\n");
				return 1;
			}
		}
		printf("  GET, gzip, %-17s %6.1f ms wall (target <= 100), %6.1f ms CPU = %.2f %% "
		       "of a core at 15 s (target <= 1 %%), %.2f MB\n",
		       k ? "text (capped):" : "protobuf native:", median(t) * 1e3, median(c) * 1e3,
		       median(c) / INTERVAL_S * 100, n / 1e6);
	}
	/*
	 * serve reads the kernel's map through a window of CELL_WINDOW_BYTES (kernel/cell_window.h),
	 * so the stand-in's pages are not serve's: its own is the rest.
	 */
	rss_now = status_kb("VmRSS:");
	printf("  resident memory: %ld MB at start, %ld MB with the cells (the kernel map's "
	       "stand-in), %ld MB after the first sample, %ld MB now, peak %ld MB; serve's own "
	       "(less the stand-in): %ld MB now, %ld MB of it the sampler's (target <= 64 MB)\n",
	       rss0 / 1024, rss_cells / 1024, rss_sampled / 1024, rss_now / 1024,
	       status_kb("VmHWM:") / 1024, (rss_now - (rss_cells - rss0)) / 1024,
	       (rss_sampled - rss_cells) / 1024);
	http_server_stop(srv);
	exporter_free(&x);
	sampler_close(&sp, 0);
	synth_free(&syn);
	return 0;
}
