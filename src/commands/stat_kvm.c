// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "kvm_source.h"
#include "kvm_stat_names.h"
#include "out_write.h"
#include "signals.h"
#include "stat_kvm.h"
#include "text_escape.h"

/* How often new VMMs are looked for: a VM found is counted whole, one not found at all is
 * not, so a guest must live this long to be counted (a scan of /proc). */
#define SCAN_S	0.05

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A printable value of statistic d: counts as they are, times and sizes in their unit. */
static void put_value(FILE *out, const struct kvm_stat_desc *d, __u64 raw)
{
	if (d->unit == KVM_STAT_UNIT_NONE || d->unit == KVM_STAT_UNIT_BOOLEAN || !d->exponent)
		fprintf(out, "%llu", (unsigned long long)raw);
	else
		fprintf(out, "%.9g", kvm_stat_scale(d, (double)raw));
}

static const char *unit_name(const struct kvm_stat_desc *d)
{
	switch (d->unit) {
	case KVM_STAT_UNIT_BYTES: return "bytes";
	case KVM_STAT_UNIT_SECONDS: return "seconds";
	case KVM_STAT_UNIT_CYCLES: return "cycles";
	case KVM_STAT_UNIT_BOOLEAN: return "boolean";
	default: return "";
	}
}

/*
 * One statistic of one fd: cumulative ones since the interval's start and the run's; others
 * (instant, peak) as they are now; histograms as the number of values they hold.
 */
static void stat_values(const struct kvm_guest *g, int fd, const struct kvm_stat_desc *d,
			__u64 *iv, __u64 *total)
{
	*iv = *total = 0;
	if (d->type == KVM_STAT_CUMULATIVE) {
		*iv = kvm_guest_since_mark(g, fd, d, 0);
		*total = kvm_guest_since_base(g, fd, d, 0);
		return;
	}
	for (__u32 b = 0; b < d->size; b++) {
		if (d->type == KVM_STAT_INSTANT || d->type == KVM_STAT_PEAK) {
			*total = kvm_guest_value(g, fd, d, 0);
			return;
		}
		*iv += kvm_guest_since_mark(g, fd, d, b);
		*total += kvm_guest_since_base(g, fd, d, b);
	}
}

static bool vcpu_wanted(const struct stat_kvm_opts *o, int vcpu)
{
	__s32 want = o->filters->opts.filter.vcpu;

	return want < 0 || vcpu < 0 || vcpu == want;
}

/*
 * The rows of one guest: per vCPU (and its VM's own statistics under vCPU -1) with --by vcpu,
 * else the vCPUs' sums (a statistic's first fd of each kind decides its order).
 */
static void print_guest(const struct stat_kvm_opts *o, struct kvm_guest *g, FILE *out,
			bool *first, bool final)
{
	int vcpu;

	for (int fd = 0; fd < g->nr_fds; fd++) {
		struct kvm_stats_fd *f = kvm_guest_fd(g, fd, &vcpu);

		if (!o->by_vcpu && vcpu >= 0 && fd > 0) {
			int pv;

			/* Summed into the first vCPU's rows below. */
			kvm_guest_fd(g, fd - 1, &pv);
			if (pv >= 0)
				continue;
		}
		if (!vcpu_wanted(o, vcpu))
			continue;
		for (__u32 i = 0; i < f->nr_descs; i++) {
			const struct kvm_stat_desc *d = &f->descs[i];
			__u64 iv = 0, total = 0;
			int show_vcpu = vcpu;

			if (o->by_vcpu || vcpu < 0) {
				stat_values(g, fd, d, &iv, &total);
			} else {
				/* Every vCPU fd of this VM, which follow this one. */
				for (int k = fd; k < g->nr_fds; k++) {
					int kv;
					struct kvm_stats_fd *kf = kvm_guest_fd(g, k, &kv);
					const struct kvm_stat_desc *kd;
					__u64 a, b;

					if (kv < 0)
						break;
					kd = kvm_stats_fd_find(kf, d->name);
					if (!kd || !vcpu_wanted(o, kv))
						continue;
					stat_values(g, k, kd, &a, &b);
					if (d->type == KVM_STAT_PEAK || d->type == KVM_STAT_INSTANT) {
						if (d->type == KVM_STAT_PEAK && b > total)
							total = b;
						else if (d->type == KVM_STAT_INSTANT)
							total += b;
						continue;
					}
					iv += a;
					total += b;
				}
				show_vcpu = -1;
			}
			if (!total && !iv)
				continue;
			if (o->json) {
				fprintf(out, "%s{\"guest\":", *first ? "" : ",");
				json_put_str(out, g->name);
				fprintf(out, ",\"pid\":%d,\"vcpu\":%d,\"stat\":\"%s\",\"kvm\":\"%s\","
					"\"type\":\"%s\",\"unit\":\"%s\",\"interval\":%llu"
					",\"total\":%llu,\"value\":", g->name[0] ? g->v.pid : 0,
					o->by_vcpu ? show_vcpu : -1, kvm_stat_shown(d->name), d->name,
					kvm_stat_type_name(d->type), unit_name(d), (unsigned long long)iv,
					(unsigned long long)total);
				put_value(out, d, total);
				fputc('}', out);
			} else {
				char nb[TEXT_NAME_MAX];

				fprintf(out, "%-16s %8d %5s%-3d %-28s ", text_esc(nb, g->name),
					g->v.pid, "", o->by_vcpu ? show_vcpu : -1,
					kvm_stat_shown(d->name));
				if (d->type == KVM_STAT_CUMULATIVE && !final)
					fprintf(out, "%12llu ", (unsigned long long)iv);
				else
					fprintf(out, "%12s ", "-");
				put_value(out, d, total);
				fprintf(out, " %s%s%s\n", unit_name(d),
					d->unit && d->type != KVM_STAT_CUMULATIVE ? " " : "",
					d->type == KVM_STAT_CUMULATIVE ? "" :
					kvm_stat_type_name(d->type));
			}
			*first = false;
		}
	}
}

static int print_sample(const struct stat_kvm_opts *o, struct kvm_source *ks, double iv_s,
			double elapsed_s, bool final)
{
	FILE *out = stdout;
	bool first = true;

	if (o->json) {
		fprintf(out, "{\"source\":\"kvm\",\"final\":%s,\"interval_s\":%.6f,\"elapsed_s\":%.6f,"
			"\"guests\":%d,\"rows\":[", final ? "true" : "false", iv_s, elapsed_s,
			ks->nr);
	} else {
		fprintf(out, "\n%s %.3f s (KVM's statistics, %d guest%s)\n",
			final ? "Whole run:" : "Interval:", final ? elapsed_s : iv_s, ks->nr,
			ks->nr == 1 ? "" : "s");
		fprintf(out, "%-16s %8s %8s %-28s %12s %s\n", "GUEST", "PID", "VCPU", "STAT",
			"INTERVAL", "TOTAL");
	}
	for (int g = 0; g < ks->nr; g++)
		print_guest(o, &ks->guests[g], out, &first, final);
	if (o->json)
		fprintf(out, "]}\n");
	return out_flush(out);
}

static bool pids_gone(const struct stat_kvm_opts *o)
{
	const struct event_filter *f = &o->filters->sel.f;

	if (!f->nr_pids || o->filters->sel.nr_guests)
		return false;
	for (int i = 0; i < f->nr_pids; i++)
		if (!kill(f->pids[i], 0) || errno != ESRCH)
			return false;
	return true;
}

int stat_kvm_run(const struct stat_kvm_opts *o)
{
	const struct cli_filters *f = o->filters;
	struct kvm_source ks;
	double start = now_s(), last = start, next_scan = start, next;
	long printed = 0;
	int err = 0;

	kvm_source_init(&ks, f->sel.f.pids, f->sel.f.nr_pids, f->sel.guests, f->sel.nr_guests);
	ks.verbose = f->opts.verbose;
	install_signal_handlers();
	err = kvm_source_update(&ks, start);
	if (err)
		goto out;
	/*
	 * Only -p pids (a -g guest may start later), and each that holds a VM refused us (said
	 * above, with the way out): a refusal does not lift by itself, so waiting would print
	 * empty samples for ever.
	 */
	if (kvm_source_refused(&ks) && !f->sel.nr_guests) {
		err = -EACCES;
		goto out;
	}
	fprintf(stderr, "Reading KVM's statistics of %d guest%s (no BPF)... Hit Ctrl-C to "
		"end.\n", ks.nr, ks.nr == 1 ? "" : "s");
	next = o->interval ? start + o->interval : 1e300;
	while (!exiting && !(o->count && printed >= o->count)) {
		double now = now_s();

		if (now >= next_scan) {
			err = kvm_source_update(&ks, now);
			if (err)
				goto out;
			next_scan = now + SCAN_S;
			if (pids_gone(o))
				break;
		}
		if (now >= next) {
			err = print_sample(o, &ks, now - last, now - start, false);
			if (err)
				goto write_failed;
			kvm_source_mark(&ks);
			printed++;
			last = now;
			next += o->interval;
			if (next < now)
				next = now + o->interval;
			continue;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	err = kvm_source_update(&ks, now_s());
	if (err)
		goto out;
	err = print_sample(o, &ks, now_s() - last, now_s() - start, true);
	if (err)
		goto write_failed;
	/* Every guest it found refused us: the empty tables are not the guests' figures. */
	if (kvm_source_refused(&ks))
		err = -EACCES;
	goto out;
write_failed:
	out_write_error("the statistics", err);
out:
	if (err == -ENOMEM)
		fprintf(stderr, "vmexit: out of memory reading KVM's statistics\n");
	kvm_source_free(&ks);
	return err ? 1 : 0;
}
