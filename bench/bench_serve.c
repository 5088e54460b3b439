// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit serve` at scale: 10,000 series (100 guests x 4 vCPUs x 25 reasons, --by vcpu) from
 * synthesized cells, every cell changing between scrapes. Times a scrape as the exporter does
 * it (fresh sample, snapshot, render), in both formats, what gzip adds to it and saves, then
 * over HTTP on loopback (request to last byte, plain and gzipped), and prints the resident
 * memory. Figures are printed, not asserted.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "exporter.h"
#include "hist.h"
#include "http_gzip.h"
#include "metrics_http.h"
#include "bench_args.h"

#define NR_VMS		100
#define NR_VCPUS	4
#define NR_REASONS	25
#define NR_CELLS	(NR_VMS * NR_VCPUS * NR_REASONS)
#define SCRAPES		30

struct fake {
	struct cell *cells;
	__u32 epoch;
	__u64 rng;
};

static __u32 fake_nr(void *ctx)
{
	(void)ctx;
	return NR_CELLS;
}

static __u64 rnd(struct fake *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static __u32 fake_turn_epoch(void *ctx)
{
	return ((struct fake *)ctx)->epoch++;
}

/* What the kernel does between scrapes (untimed): a few hundred exits per cell. */
static void advance(struct fake *f)
{
	for (__u32 i = 0; i < NR_CELLS; i++) {
		struct cell *c = &f->cells[i];
		__u32 n = 100 + rnd(f) % 400;
		__u64 lat = 500 + rnd(f) % 200000;

		c->started += n;
		c->count += n;
		c->total_ns += n * lat;
		c->min_ns = c->min_ns && c->min_ns < lat ? c->min_ns : lat;
		c->max_ns = c->max_ns > lat * 3 ? c->max_ns : lat * 3;
		c->hist[hist_bucket(lat / 2)] += n / 4;
		c->hist[hist_bucket(lat)] += n / 2;
		c->hist[hist_bucket(lat * 3)] += n - n / 4 - n / 2;
	}
}

static void fake_lost(void *ctx, __u64 lost[NR_LOST])
{
	(void)ctx;
	memset(lost, 0, NR_LOST * sizeof(lost[0]));
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
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

static void report(const char *what, double *t, size_t bytes, __u32 series)
{
	qsort(t, SCRAPES, sizeof(t[0]), cmp_d);
	printf("  %-28s median %6.1f ms  max %6.1f ms  %5.1f MB  %u series  %.2f us/series\n",
	       what, t[SCRAPES / 2] * 1e3, t[SCRAPES - 1] * 1e3, bytes / 1e6, series,
	       t[SCRAPES / 2] * 1e6 / series);
}

/* One GET over loopback, to the last byte of the body; the bytes read, or -1. */
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
		     "Connection: close\r\n\r\n", accept);
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
 * What gzip adds to a scrape (text format) against the bytes it saves: serve's level and
 * zlib's default, each timed over SCRAPES fresh renders.
 */
static void gzip_cost(struct exporter *x, struct fake *f, struct expo_buf *out)
{
	static const int levels[] = { HTTP_GZIP_LEVEL, Z_DEFAULT_COMPRESSION };
	double t[SCRAPES];

	for (size_t l = 0; l < sizeof(levels) / sizeof(levels[0]); l++) {
		size_t len = 0, cap;
		char what[64];

		for (int i = 0; i < SCRAPES; i++) {
			double t0;
			char *z;

			advance(f);
			out->len = 0;
			if (exporter_render(x, EXPO_TEXT, out))
				exit(1);
			t0 = now_s();
			z = http_gzip(out->p, out->len, levels[l], &len, &cap);
			t[i] = now_s() - t0;
			if (!z)
				exit(1);
			free(z);
		}
		snprintf(what, sizeof(what), "gzip level %d, text:", levels[l] < 0 ? 6 : levels[l]);
		report(what, t, len, x->nr_series);
		printf("  %-28s %.1f MB -> %.2f MB (%.1fx smaller)\n", "", out->len / 1e6,
		       len / 1e6, (double)out->len / len);
	}
}

int main(int argc, char **argv)
{
	static const struct { const char *what, *accept; } gets[] = {
		{ "GET /metrics over loopback:", "text/plain" },
		/* The Accept line this GET sends, and one more header line after it. */
		{ "GET, Accept-Encoding: gzip:", "text/plain\r\nAccept-Encoding: gzip" },
	};
	struct fake f = { .rng = 88172645463325252ULL };
	struct sampler_source src = {
		.cells = { .nr_cells = fake_nr, .ctx = &f },
		.turn_epoch = fake_turn_epoch,
		.lost = fake_lost,
	};
	struct sampler sp;
	struct exporter x;
	struct expo_buckets bk;
	struct expo_buf out = {};
	struct http_server *srv;
	double t[SCRAPES];
	char where[64], err[256];
	long rss0 = status_kb("VmRSS:"), rss_renders, n = 0;
	__u32 series = 0;
	int fd, port;

	bench_args(argc, argv, "bench/bench_serve.c");

	f.cells = calloc(NR_CELLS, sizeof(*f.cells));
	if (!f.cells)
		return 1;
	for (__u32 i = 0; i < NR_CELLS; i++) {
		struct cell_key *k = &f.cells[i].key;
		__u32 r = i % NR_REASONS;

		k->tgid = 10000 + i / (NR_VCPUS * NR_REASONS);
		k->tid = k->tgid * 16 + (i / NR_REASONS) % NR_VCPUS;
		k->vcpu = (i / NR_REASONS) % NR_VCPUS;
		/* 20 VMX reasons and 5 KVM_EXIT_* ones */
		k->isa = r < 20 ? VMEXIT_ISA_VMX : VMEXIT_ISA_USER;
		k->reason = r < 20 ? r * 2 : r - 18;
		k->ready = 1;
	}
	src.cells.cells = f.cells;
	expo_buckets_default(&bk);
	/* As serve opens its sampler: rows since the start only. */
	if (sampler_init(&sp, &src, &(struct sampler_opts){ .by = BY_VCPU, .interval = 1,
							     .no_interval_rows = true }) ||
	    exporter_init(&x, &sp, &bk, true, 3600 * 1000, 1000000000ULL)) {
		fprintf(stderr, "bench_serve: cannot set up\n");
		return 1;
	}
	/* Every series rendered, as before --max-series: the figures stay comparable. */
	x.max_series = ~0ULL;
	sampler_start(&sp);
	printf("%u cells -> series of vmexit_exits_total, each with a %u-bound histogram\n",
	       NR_CELLS, bk.nr);
	for (int fmt = EXPO_TEXT; fmt <= EXPO_OPENMETRICS; fmt++) {
		double snap[SCRAPES];

		for (int i = 0; i < SCRAPES; i++) {
			double t0, t1;

			advance(&f);
			t0 = now_s();
			out.len = 0;
			if (exporter_render(&x, fmt, &out)) {
				fprintf(stderr, "bench_serve: render failed\n");
				return 1;
			}
			t1 = now_s();
			t[i] = t1 - t0;
			/* The sampler's share: a fresh sample and the snapshot copy alone. */
			advance(&f);
			exporter_snapshot(&x);
			snap[i] = now_s() - t1;
		}
		series = x.nr_series;
		report(fmt == EXPO_TEXT ? "scrape, text 0.0.4:" : "scrape, OpenMetrics 1.0:", t,
		       out.len, series);
		report("  of which sample+snapshot:", snap, 0, series);
	}

	gzip_cost(&x, &f, &out);

	/* serve holds no buffer of its own besides the HTTP side's: the figures below are its. */
	rss_renders = status_kb("VmRSS:");
	expo_buf_free(&out);
	fd = http_listen("127.0.0.1:0", where, sizeof(where), err, sizeof(err));
	srv = fd >= 0 ? http_server_start(fd, &http_default_limits, exporter_render, &x, false,
					  err, sizeof(err))
		      : NULL;
	if (!srv) {
		fprintf(stderr, "bench_serve: %s\n", err);
		return 1;
	}
	port = atoi(strrchr(where, ':') + 1);
	for (size_t g = 0; g < sizeof(gets) / sizeof(gets[0]); g++) {
		for (int i = 0; i < SCRAPES; i++) {
			double t0;

			advance(&f);
			t0 = now_s();
			n = http_get(port, gets[g].accept);
			t[i] = now_s() - t0;
			if (n < 0) {
				fprintf(stderr, "bench_serve: GET failed\n");
				return 1;
			}
		}
		report(gets[g].what, t, n, series);
	}
	/* With the server still up: what serve holds between scrapes. */
	printf("  resident memory: %ld MB before, %ld MB after the renders (with the bench's own "
	       "buffer), %ld MB after the GETs, peak %ld MB\n", rss0 / 1024, rss_renders / 1024,
	       status_kb("VmRSS:") / 1024, status_kb("VmHWM:") / 1024);
	http_server_stop(srv);
	exporter_free(&x);
	sampler_close(&sp, 0);
	free(f.cells);
	return 0;
}
