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
#include "expo_resolution.h"
#include "heap_policy.h"
#include "http_gzip.h"
#include "metrics_http.h"
#include "series_cap.h"
#include "expo_bytes.h"
#include "../tests/synth_cells.h"
#include "bench_args.h"

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

/*
 * VmHWM from here on: 0, or -1 where the kernel cannot reset it (clear_refs "5", Linux 4.0);
 * the peak printed is then the lifetime's, said so.
 */
static int peak_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	int err = !f || fputs("5", f) < 0;

	if (f && fclose(f))
		err = 1;
	return err ? -1 : 0;
}

/*
 * Every exit of every cell so far made `times` more times over, as the kernel would count them:
 * a guest that has run that much longer. Its buckets then hold 65,536 and more, so the tracker
 * keeps them in 4 bytes each (live/bucket_run.h), as it does for any guest past its first
 * minutes; the synthetic cells are otherwise young (a few hundred exits each).
 */
static void age_cells(struct synth *s, __u32 times)
{
	for (__u32 i = 0; i < s->nr; i++) {
		struct cell *c = &s->cells[i];

		c->started += c->started * times;
		c->count += c->count * times;
		c->total_ns += c->total_ns * times;
		for (__u32 b = 0; b < NR_BUCKETS; b++)
			c->hist[b] += c->hist[b] * times;
	}
}

/* Both GETs serve answers most (protobuf native, text capped), SCRAPES of each, printed. */
static int scrape_both(struct synth *syn, int port)
{
	for (int k = 0; k < 2; k++) {
		const char *accept = k ? "text/plain" : PB_ACCEPT;
		double t[SCRAPES], c[SCRAPES];
		long n = 0;

		for (int i = 0; i < SCRAPES; i++) {
			double t0, c0;

			synth_add(syn, 5);
			c0 = cpu_s();
			t0 = now_s();
			n = http_get(port, accept);
			t[i] = now_s() - t0;
			c[i] = cpu_s() - c0;
			if (n < 0) {
				fprintf(stderr, "bench_serve_scale: GET failed\n");
				return -1;
			}
		}
		printf("  GET, gzip, %-17s %6.1f ms wall (target <= 100), %6.1f ms CPU = %.2f %% "
		       "of a core at 15 s (target <= 1 %%), %.2f MB\n",
		       k ? "text (capped):" : "protobuf native:", median(t) * 1e3, median(c) * 1e3,
		       median(c) / INTERVAL_S * 100, n / 1e6);
	}
	return 0;
}

/* What the tracker keeps of the cells' buckets (live/bucket_run.h), as "N cells of W-byte
 * values, ..." into buf. */
static void runs_kept(const struct tracker *t, char *buf, size_t len)
{
	__u64 cells[3] = {}, buckets = 0;

	for (__u32 i = 0; i < t->seen; i++) {
		cells[t->prev[i].hist.shift]++;
		buckets += t->prev[i].hist.n;
	}
	snprintf(buf, len, "runs of %llu buckets a cell on average: %llu cells of 1-byte values, "
		 "%llu of 2, %llu of 4", (unsigned long long)(t->seen ? buckets / t->seen : 0),
		 (unsigned long long)cells[0], (unsigned long long)cells[1],
		 (unsigned long long)cells[2]);
}

/* n bytes gzipped as serve sends them: their length, or 0 out of memory. */
static size_t gz_len(const char *p, size_t n)
{
	size_t len, cap;
	char *z = http_gzip(p, n, HTTP_GZIP_LEVEL, &len, &cap);

	free(z);
	return z ? len : 0;
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

int main(int argc, char **argv)
{
	struct synth syn;
	struct sampler_source src;
	struct sampler sp;
	struct exporter x;
	struct expo_buckets bk;
	struct hist_coarse coarse;
	struct expo_buf out = {};
	struct http_server *srv;
	size_t bytes[NR_MODES], gz[NR_MODES];
	struct expo_bytes nat, cla, txt;
	char where[64], err[256];
	long rss0, rss_cells, rss_sampled, rss_now, stand_in;
	bool peak_ok;
	int fd, port;

	bench_args(argc, argv, "bench/bench_serve_scale.c");

	serve_heap_policy();	/* as serve */
	rss0 = status_kb("VmRSS:");
	if (synth_init(&syn, &src, GUESTS, VCPUS, REASONS)) {
		fprintf(stderr, "bench_serve_scale: out of memory\n");
		return 1;
	}
	synth_add(&syn, 20);
	rss_cells = status_kb("VmRSS:");
	expo_buckets_default(&bk);
	expo_resolution(&bk, &coarse);	/* as serve */
	if (sampler_init(&sp, &src, &(struct sampler_opts){ .by = BY_VM, .interval = 1,
							     .no_interval_rows = true,
							     .hist_coarse = &coarse }) ||
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
		/* The same histograms in each encoding, for the comparison below. */
		if ((m == 0 && expo_text_family(out.p, out.len, "vmexit_exit_duration_seconds",
						&txt)) ||
		    (m == 3 && (expo_bytes_of(out.p, out.len, "vmexit_exit_duration_nanoseconds",
					      &nat) ||
				expo_bytes_of(out.p, out.len, "vmexit_exit_duration_seconds",
					      &cla)))) {
			fprintf(stderr, "bench_serve_scale: no histogram family in the scrape\n");
			return 1;
		}
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
	/*
	 * Native vs classic for the same histograms (target >= 5x fewer bytes), read back from
	 * the protobuf scrape with both families: the Histogram messages alone, then each family
	 * whole (every series' labels, the framing, the header), then the classic family in the
	 * text format, then whole scrapes. Which reading the 5x is taken on is the reader's.
	 */
	{
		size_t hn = gz_len(nat.hist_copy, nat.hist), hc = gz_len(cla.hist_copy, cla.hist);
		size_t fn = gz_len(nat.family_copy, nat.family);
		size_t fc = gz_len(cla.family_copy, cla.family);
		size_t ft = gz_len(txt.family_copy, txt.family);
		double per = nat.metrics;

		if (!hn || !hc || !fn || !fc || !ft || nat.metrics != cla.metrics) {
			fprintf(stderr, "bench_serve_scale: no histograms to compare\n");
			return 1;
		}
		printf("  native vs classic bytes for the same %u histograms "
		       "(target >= 5x fewer):\n    histogram messages alone: native %.0f "
		       "B/series, classic protobuf %.0f: %.1fx (gzip %.1fx)\n",
		       nat.metrics, nat.hist / per, cla.hist / per, (double)cla.hist / nat.hist,
		       (double)hc / hn);
		printf("    whole family (labels %.0f B/series in each, framing %.0f): native "
		       "%.2f MB, classic protobuf %.2f MB: %.1fx (gzip %.1fx); classic text "
		       "%.2f MB: %.1fx (gzip %.1fx)\n",
		       nat.labels / per, nat.other / per, nat.family / 1e6, cla.family / 1e6,
		       (double)cla.family / nat.family, (double)fc / fn, txt.family / 1e6,
		       (double)txt.family / nat.family, (double)ft / fn);
		printf("    whole scrape: native protobuf vs classic protobuf %.1fx (gzip %.1fx), "
		       "vs classic text %.1fx (gzip %.1fx)\n",
		       (double)bytes[2] / bytes[1], (double)gz[2] / gz[1],
		       (double)bytes[0] / bytes[1], (double)gz[0] / gz[1]);
		expo_bytes_free(&nat);
		expo_bytes_free(&cla);
		expo_bytes_free(&txt);
	}

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
	/*
	 * serve's own memory is what the process holds less the cells' stand-in: serve reads the
	 * kernel's map through a window of CELL_WINDOW_BYTES (kernel/cell_window.h), so those
	 * pages are not serve's. Its peak is taken over the scrapes as serve answers them (the
	 * renders above are uncapped, which serve never does by default).
	 */
	stand_in = rss_cells - rss0;
	printf("  resident memory: %ld MB at start, %ld MB with the cells (the kernel map's "
	       "stand-in), %ld MB after the first sample (%ld MB the sampler's)\n",
	       rss0 / 1024, rss_cells / 1024, rss_sampled / 1024, (rss_sampled - rss_cells) / 1024);
	for (int aged = 0; aged < 2; aged++) {
		if (aged)
			age_cells(&syn, 65536);
		peak_ok = !peak_reset();
		if (scrape_both(&syn, port))
			return 1;
		rss_now = status_kb("VmRSS:");
		runs_kept(&sp.t, err, sizeof(err));
		printf("  serve's own memory (less the stand-in), %s: %ld MB now, peak %ld MB over "
		       "these scrapes%s (target <= 64 MB); %s\n",
		       aged ? "the cells aged (each exit so far made 65,537 times)" :
			      "the cells young (a few hundred exits each)",
		       (rss_now - stand_in) / 1024, (status_kb("VmHWM:") - stand_in) / 1024,
		       peak_ok ? "" : " (the lifetime's: VmHWM cannot be reset here)", err);
	}
	http_server_stop(srv);
	exporter_free(&x);
	sampler_close(&sp, 0);
	synth_free(&syn);
	return 0;
}
