// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kvm_exposition.h"
#include "kvm_stat_names.h"
#include "text_escape.h"

#define NAME_MAX_LEN	128

static int put(struct expo_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;
		char *p;

		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if (b->p && (size_t)n < room) {
			b->len += n;
			return 0;
		}
		room = b->cap ? b->cap * 2 : 64 * 1024;
		while (room < b->len + n + 1)
			room *= 2;
		p = realloc(b->p, room);
		if (!p)
			return -ENOMEM;
		b->p = p;
		b->cap = room;
	}
}

/* The family name of statistic d: its KVM name, a time in ns as _seconds, a _hist dropped. */
static void family(const struct kvm_stat_desc *d, char *out, size_t len)
{
	char base[KVM_STAT_NAME_MAX];
	size_t n;

	snprintf(base, sizeof(base), "%s", d->name);
	n = strlen(base);
	if ((d->type == KVM_STAT_LINEAR_HIST || d->type == KVM_STAT_LOG_HIST) && n > 5 &&
	    !strcmp(base + n - 5, "_hist"))
		base[n -= 5] = 0;
	if (d->unit == KVM_STAT_UNIT_SECONDS && n > 3 && !strcmp(base + n - 3, "_ns"))
		base[n -= 3] = 0;
	snprintf(out, len, "vmexit_kvm_%s%s", base,
		 d->unit == KVM_STAT_UNIT_SECONDS && !strstr(base, "seconds") ? "_seconds" :
		 d->unit == KVM_STAT_UNIT_BYTES && !strstr(base, "bytes") ? "_bytes" : "");
}

/* The labels of a guest (and vCPU): guest="..",pid=".."[,vcpu=".."]. */
static void labels(const struct kvm_guest *g, int vcpu, char *out)
{
	char *p = out;

	p += sprintf(p, "guest=\"");
	p = prom_label_esc(p, g->name);
	p += sprintf(p, "\",pid=\"%d\"", g->v.pid);
	if (vcpu >= 0)
		sprintf(p, ",vcpu=\"%d\"", vcpu);
}

/*
 * Statistic name's item of every fd of g that has it (fd first: the vCPU fds after it are
 * summed when !by_vcpu), with *d its descriptor there. Peak: the highest.
 */
static __u64 value_at(struct kvm_guest *g, int fd, const char *name, __u32 item, bool sum,
		      const struct kvm_stat_desc **dp)
{
	int vcpu, first;
	__u64 v = 0;

	kvm_guest_fd(g, fd, &first);
	for (int i = fd; i < g->nr_fds; i++) {
		struct kvm_stats_fd *f = kvm_guest_fd(g, i, &vcpu);
		const struct kvm_stat_desc *d = kvm_stats_fd_find(f, name);
		__u64 x;

		if (i > fd && (!sum || vcpu < 0 || first < 0))
			break;
		if (!d || item >= d->size)
			continue;
		*dp = d;
		x = kvm_guest_value(g, i, d, item);
		v = d->type == KVM_STAT_PEAK ? (x > v ? x : v) : v + x;
	}
	return v;
}

static const char *prom_type(const struct kvm_stat_desc *d)
{
	switch (d->type) {
	case KVM_STAT_CUMULATIVE: return "counter";
	case KVM_STAT_INSTANT:
	case KVM_STAT_PEAK: return "gauge";
	default: return "histogram";
	}
}

/*
 * raw x 10^exponent written exactly ("1.5" for 1500000000 ns, "0.000001023" for 1023 ns): the
 * same bucket bound every scrape, no binary rounding. A power-of-two exponent: %.17g.
 */
static void fmt_scaled(char *out, size_t len, const struct kvm_stat_desc *d, __u64 raw)
{
	char dig[32], tmp[96], *p = tmp;
	int n, e = d->exponent;

	if (d->pow2 && e) {
		snprintf(out, len, "%.17g", kvm_stat_scale(d, (double)raw));
		return;
	}
	n = snprintf(dig, sizeof(dig), "%llu", (unsigned long long)raw);
	if (!e || !raw || e > 40 || e < -40) {
		if (!e || !raw)
			snprintf(out, len, "%s", dig);
		else
			snprintf(out, len, "%se%d", dig, e);
		return;
	}
	if (e > 0) {
		p += sprintf(p, "%s", dig);
		while (e--)
			*p++ = '0';
		*p = 0;
	} else if (n > -e) {
		p += sprintf(p, "%.*s.%s", n + e, dig, dig + n + e);
	} else {
		p += sprintf(p, "0.");
		for (int i = 0; i < -e - n; i++)
			*p++ = '0';
		p += sprintf(p, "%s", dig);
	}
	/* No trailing zeros after a point. */
	if (strchr(tmp, '.')) {
		while (p > tmp && p[-1] == '0')
			*--p = 0;
		if (p > tmp && p[-1] == '.')
			*--p = 0;
	}
	snprintf(out, len, "%s", tmp);
}

static int put_value(struct expo_buf *b, const struct kvm_stat_desc *d, __u64 raw)
{
	char v[96];

	fmt_scaled(v, sizeof(v), d, raw);
	return put(b, " %s\n", v);
}

static int render_stat(struct expo_buf *b, struct kvm_source *ks, const struct kvm_stat_desc *rep,
		       bool by_vcpu, bool om)
{
	const struct kvm_stat_alias *a = kvm_stat_alias_of(rep->name);
	char fam[NAME_MAX_LEN], lab[PROM_ESC_MAX(KVM_SOURCE_NAME_MAX) + 64];
	bool as_exit = a && a->match != KVM_MATCH_HW_ALL && rep->type == KVM_STAT_CUMULATIVE;
	bool hist = rep->type == KVM_STAT_LINEAR_HIST || rep->type == KVM_STAT_LOG_HIST;
	const char *sfx;
	int err = 0;

	if (as_exit)
		return 0;	/* in vmexit_exits_total */
	family(rep, fam, sizeof(fam));
	/* The text format's TYPE names the counter's sample (_total); OpenMetrics' the family. */
	sfx = rep->type == KVM_STAT_CUMULATIVE && !om ? "_total" : "";
	err = put(b, "# HELP %s%s KVM statistic %s (%s)\n# TYPE %s%s %s\n", fam, sfx, rep->name,
		  kvm_stat_type_name(rep->type), fam, sfx, prom_type(rep));
	for (int gi = 0; !err && gi < ks->nr; gi++) {
		struct kvm_guest *g = &ks->guests[gi];

		for (int fd = 0; !err && fd < g->nr_fds; fd++) {
			const struct kvm_stat_desc *d = NULL;
			int vcpu, pv = -1;
			bool sum;

			kvm_guest_fd(g, fd, &vcpu);
			if (fd > 0)
				kvm_guest_fd(g, fd - 1, &pv);
			/* Per VM: the first vCPU fd stands for the VM's vCPUs. */
			if (!by_vcpu && vcpu >= 0 && pv >= 0)
				continue;
			sum = !by_vcpu && vcpu >= 0;
			if (!kvm_stats_fd_find(kvm_guest_fd(g, fd, &vcpu), rep->name))
				continue;
			labels(g, by_vcpu ? vcpu : -1, lab);
			if (!hist) {
				__u64 v = value_at(g, fd, rep->name, 0, sum, &d);

				err = put(b, "%s%s{%s}", fam,
					  rep->type == KVM_STAT_CUMULATIVE ? "_total" : "", lab);
				if (!err)
					err = put_value(b, d, v);
				continue;
			}
			{
				__u64 cum = 0;

				for (__u32 i = 0; !err && i < rep->size; i++) {
					double le;

					cum += value_at(g, fd, rep->name, i, sum, &d);
					le = kvm_stat_bucket_le(d, i);
					if (isinf(le))
						err = put(b, "%s_bucket{%s,le=\"+Inf\"} %llu\n", fam, lab,
							  (unsigned long long)cum);
					else {
						char v[96];

						fmt_scaled(v, sizeof(v), d, (__u64)le);
						err = put(b, "%s_bucket{%s,le=\"%s\"} %llu\n", fam,
							  lab, v, (unsigned long long)cum);
					}
				}
				if (!err)
					err = put(b, "%s_count{%s} %llu\n", fam, lab,
						  (unsigned long long)cum);
			}
		}
	}
	return err;
}

/* The aliased counters as vmexit_exits_total, one family. */
static int render_exits(struct expo_buf *b, struct kvm_source *ks, bool by_vcpu, bool om)
{
	char lab[PROM_ESC_MAX(KVM_SOURCE_NAME_MAX) + 64];
	int n, err;
	const struct kvm_stat_alias *al = kvm_stat_aliases(&n);

	err = put(b, "# HELP vmexit_exits%s Exits by reason, from KVM's own counters\n"
		  "# TYPE vmexit_exits%s counter\n", om ? "" : "_total", om ? "" : "_total");
	for (int gi = 0; !err && gi < ks->nr; gi++) {
		struct kvm_guest *g = &ks->guests[gi];

		for (int fd = 0; !err && fd < g->nr_fds; fd++) {
			int vcpu, pv = -1;

			kvm_guest_fd(g, fd, &vcpu);
			if (fd > 0)
				kvm_guest_fd(g, fd - 1, &pv);
			if (vcpu < 0 || (!by_vcpu && pv >= 0))
				continue;
			labels(g, by_vcpu ? vcpu : -1, lab);
			for (int i = 0; !err && i < n; i++) {
				const struct kvm_stat_desc *d = NULL;
				__u64 v;

				if (al[i].match == KVM_MATCH_HW_ALL ||
				    !kvm_stats_fd_find(kvm_guest_fd(g, fd, &vcpu), al[i].kvm))
					continue;
				v = value_at(g, fd, al[i].kvm, 0, !by_vcpu, &d);
				err = put(b, "vmexit_exits_total{%s,kind=\"%s\",isa=\"kvm\",reason=\"%s\"}"
					  " %llu\n", lab, al[i].match == KVM_MATCH_USER ? "user" :
					  "kernel", al[i].name, (unsigned long long)v);
			}
		}
	}
	return err;
}

int kvm_expo_render(struct kvm_source *ks, bool by_vcpu, enum expo_format fmt,
		    struct expo_buf *out)
{
	bool om = fmt == EXPO_OPENMETRICS;
	const struct kvm_stat_desc **seen = NULL;
	int nr = 0, cap = 0, err, vcpu;

	err = put(out, "# HELP vmexit_kvm_guests Guests whose KVM statistics are read\n"
		  "# TYPE vmexit_kvm_guests gauge\nvmexit_kvm_guests %d\n", ks->nr);
	if (!err)
		err = render_exits(out, ks, by_vcpu, om);
	/* Each statistic once, whichever guests have it (kernels differ; VMs of one do not). */
	for (int gi = 0; !err && gi < ks->nr; gi++) {
		struct kvm_guest *g = &ks->guests[gi];

		for (int fd = 0; !err && fd < g->nr_fds; fd++) {
			struct kvm_stats_fd *f = kvm_guest_fd(g, fd, &vcpu);

			for (__u32 i = 0; !err && i < f->nr_descs; i++) {
				bool dup = false;

				for (int k = 0; k < nr && !dup; k++)
					dup = !strcmp(seen[k]->name, f->descs[i].name);
				if (dup)
					continue;
				if (nr == cap) {
					const struct kvm_stat_desc **s;

					cap = cap ? 2 * cap : 64;
					s = realloc(seen, cap * sizeof(*s));
					if (!s) {
						err = -ENOMEM;
						break;
					}
					seen = s;
				}
				seen[nr++] = &f->descs[i];
			}
		}
	}
	for (int k = 0; !err && k < nr; k++)
		err = render_stat(out, ks, seen[k], by_vcpu, om);
	free(seen);
	if (!err && om)
		err = put(out, "# EOF\n");
	return err;
}
