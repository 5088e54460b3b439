// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "kvm_exposition.h"
#include "kvm_serve.h"
#include "kvm_source.h"
#include "metrics_http.h"
#include "signals.h"

struct kvm_serve {
	struct kvm_source ks;
	bool by_vcpu;
	pthread_mutex_t lock;		/* ks: the main thread's scans against scrapes */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int render(void *ctx, enum expo_format fmt, struct expo_buf *out)
{
	struct kvm_serve *k = ctx;
	int err;

	pthread_mutex_lock(&k->lock);
	/* A scrape sees the values of now, and a VMM started since the last scan. */
	err = kvm_source_update(&k->ks, now_s());
	if (!err)
		err = kvm_expo_render(&k->ks, k->by_vcpu, fmt, out);
	pthread_mutex_unlock(&k->lock);
	return err;
}

int kvm_serve(const struct kvm_serve_opts *o, int listen_fd, const char *where)
{
	const struct cli_filters *f = o->filters;
	struct kvm_serve k = { .by_vcpu = o->by_vcpu };
	struct http_server *srv;
	char err[256];
	int rc = 0, e;

	kvm_source_init(&k.ks, f->sel.f.pids, f->sel.f.nr_pids, f->sel.guests, f->sel.nr_guests);
	k.ks.verbose = o->verbose;
	pthread_mutex_init(&k.lock, NULL);
	install_signal_handlers();
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	e = kvm_source_update(&k.ks, now_s());
	if (e) {
		fprintf(stderr, "vmexit serve: out of memory reading KVM's statistics\n");
		close(listen_fd);
		return 1;
	}
	srv = http_server_start(listen_fd, &http_default_limits, render, &k, o->verbose, err,
				sizeof(err));
	if (!srv) {
		fprintf(stderr, "vmexit serve: %s\n", err);
		kvm_source_free(&k.ks);
		return 1;
	}
	fprintf(stderr, "vmexit serve: KVM's statistics of %d guest%s (no BPF); listening on "
		"http://%s/metrics\n", k.ks.nr, k.ks.nr == 1 ? "" : "s", where);
	while (!exiting) {
		double now = now_s();

		pthread_mutex_lock(&k.lock);
		e = kvm_source_update(&k.ks, now);
		if (!e)
			kvm_source_forget(&k.ks, now, o->keep_s);
		pthread_mutex_unlock(&k.lock);
		if (e) {
			fprintf(stderr, "vmexit serve: out of memory reading KVM's statistics\n");
			rc = 1;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = (long)(KVM_SERVE_SCAN_S * 1e9) }, NULL);
	}
	if (!rc)
		fprintf(stderr, "vmexit serve: stopping\n");
	http_server_stop(srv);
	kvm_source_free(&k.ks);
	pthread_mutex_destroy(&k.lock);
	return rc;
}
