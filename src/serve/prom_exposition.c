// SPDX-License-Identifier: GPL-2.0
/*
 * Prometheus text format 0.0.4 and OpenMetrics 1.0. The two differ in what a counter family is
 * called (vmexit_exits_total vs vmexit_exits), in _created samples and UNIT lines (OpenMetrics
 * only), in the info type, and in the closing "# EOF".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fmt_num.h"
#include "key_names.h"
#include "lost_causes.h"
#include "prom_exposition.h"
#include "reasons.h"
#include "text_escape.h"
#include "wake_exposition.h"

/* Room for one sample line but its labels' escaped guest name: names, numbers, le. */
#define LINE_MAX	512
#define GUEST_MAX	256	/* longer guest names are cut (name_cache keeps 63 bytes) */
#define LABELS_MAX	(PROM_ESC_MAX(GUEST_MAX) + 256)

const char expo_duration_help[] = "Time in completed KVM exits: kvm_exit to kvm_entry (kernel), "
				  "kvm_userspace_exit to the next KVM_RUN (user).";
const char expo_exits_help[] = "KVM exits seen, counted when they start.";

void expo_buf_free(struct expo_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* Room for n more bytes. */
static char *reserve(struct expo_buf *b, size_t n)
{
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 64 * 1024;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p)
			return NULL;
		b->p = p;
		b->cap = cap;
	}
	return b->p + b->len;
}

static int put(struct expo_buf *b, const char *s)
{
	size_t n = strlen(s);
	char *p = reserve(b, n);

	if (!p)
		return -ENOMEM;
	memcpy(p, s, n);
	b->len += n;
	return 0;
}

/* ns as seconds, exactly: "12.000000345". */
static char *put_sec(char *p, __u64 ns)
{
	__u64 frac = ns % 1000000000;

	p = fmt_u64(p, ns / 1000000000);
	*p++ = '.';
	for (__u64 d = 100000000; d; d /= 10)
		*p++ = '0' + (frac / d) % 10;
	return p;
}

/* A Unix time in ms as seconds: "1763884800.123". */
static char *put_ms(char *p, __u64 ms)
{
	p = fmt_u64(p, ms / 1000);
	*p++ = '.';
	*p++ = '0' + ms / 100 % 10;
	*p++ = '0' + ms / 10 % 10;
	*p++ = '0' + ms % 10;
	return p;
}

/*
 * A metric family's header. name is the family's name in OpenMetrics; in the text format a
 * counter's samples name the family ("_total" appended), and there is no UNIT line.
 */
static int family(struct expo_buf *b, enum expo_format fmt, const char *name, const char *type,
		  const char *unit, const char *help)
{
	char line[LINE_MAX];
	bool counter = !strcmp(type, "counter");
	const char *suffix = fmt == EXPO_TEXT && counter ? "_total" : "";

	snprintf(line, sizeof(line), "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name,
		 suffix, type);
	if (put(b, line))
		return -ENOMEM;
	if (fmt == EXPO_OPENMETRICS && unit) {
		snprintf(line, sizeof(line), "# UNIT %s %s\n", name, unit);
		return put(b, line);
	}
	return 0;
}

/* name{labels} value\n, labels already escaped (may be empty); value written by the caller. */
static char *sample_start(struct expo_buf *b, const char *name, const char *labels, size_t llen)
{
	size_t n = strlen(name);
	char *p = reserve(b, n + llen + LINE_MAX);

	if (!p)
		return NULL;
	memcpy(p, name, n);
	p += n;
	if (llen) {
		*p++ = '{';
		memcpy(p, labels, llen);
		p += llen;
		*p++ = '}';
	}
	*p++ = ' ';
	return p;
}

static void sample_end(struct expo_buf *b, char *p)
{
	*p++ = '\n';
	b->len = p - b->p;
}

static int sample_u64(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		      __u64 v)
{
	char *p = sample_start(b, name, labels, llen);

	if (!p)
		return -ENOMEM;
	sample_end(b, fmt_u64(p, v));
	return 0;
}

static int sample_sec(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		      __u64 ns)
{
	char *p = sample_start(b, name, labels, llen);

	if (!p)
		return -ENOMEM;
	sample_end(b, put_sec(p, ns));
	return 0;
}

static int sample_ms(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		     __u64 ms)
{
	char *p = sample_start(b, name, labels, llen);

	if (!p)
		return -ENOMEM;
	sample_end(b, put_ms(p, ms));
	return 0;
}

static int sample_created(struct expo_buf *b, enum expo_format fmt, const char *name,
			  const char *labels, size_t llen, __u64 ms)
{
	return fmt == EXPO_OPENMETRICS ? sample_ms(b, name, labels, llen, ms) : 0;
}

/* The guest label's value, escaped, at p (PROM_ESC_MAX(GUEST_MAX) bytes of room); the end. */
static char *guest_label(char *p, const char *guest)
{
	char name[GUEST_MAX + 1];
	size_t len = guest ? strnlen(guest, GUEST_MAX) : 0;

	memcpy(name, guest, len);
	name[len] = 0;
	return prom_label_esc(p, name);
}

bool expo_same_guest_label(const char *a, const char *b)
{
	char ea[PROM_ESC_MAX(GUEST_MAX)], eb[PROM_ESC_MAX(GUEST_MAX)];
	size_t la = guest_label(ea, a) - ea, lb = guest_label(eb, b) - eb;

	return la == lb && !memcmp(ea, eb, la);
}

/* guest="..",pid="..",[vcpu=".."] (no closing quote): every per-guest series' first labels. */
static char *guest_pid_labels(char *p, const char *guest, __u32 tgid, __s32 vcpu, bool with_vcpu)
{
	p = fmt_lit(p, "guest=\"");
	p = guest_label(p, guest);
	p = fmt_lit(p, "\",pid=\"");
	p = fmt_u64(p, tgid);
	if (with_vcpu) {
		p = fmt_lit(p, "\",vcpu=\"");
		p = fmt_s64(p, vcpu);
	}
	return p;
}

/* guest="..",pid="..",[vcpu="..",]kind="..",isa="..",reason="..": the exit series' labels. */
static size_t exit_labels(char *out, const char *guest, __u32 tgid, __s32 vcpu, bool with_vcpu,
			  __u32 isa, __u32 reason, bool with_isa)
{
	char rb[REASON_STR_MAX];
	const char *name_s;
	char *p = guest_pid_labels(out, guest, tgid, vcpu, with_vcpu);

	p = fmt_str(p, isa == VMEXIT_ISA_USER ? "\",kind=\"user" : "\",kind=\"kernel");
	if (with_isa) {
		p = fmt_lit(p, "\",isa=\"");
		p = fmt_str(p, isa_name(isa));
	}
	p = fmt_lit(p, "\",reason=\"");
	/* The table's name when there is one: no printf for the common case. */
	name_s = reason_name(isa, reason);
	p = prom_label_esc(p, name_s ? name_s : reason_str(isa, reason, rb, sizeof(rb)));
	*p++ = '"';
	return p - out;
}

/* Values shorter than each bound (whole kernel buckets below it), then all of them. */
void expo_le_of_hist(const __u64 *hist, const struct expo_buckets *bk, __u64 *out)
{
	__u64 cum = 0;
	__u32 hb = 0;

	for (__u32 j = 0; j <= bk->nr; j++) {
		__u32 upto = j < bk->nr ? bk->bucket[j] : NR_BUCKETS;

		for (; hb < upto; hb++)
			cum += hist[hb];
		out[j] = cum;
	}
}

void expo_counts_of(struct expo_counts *c, const struct row *r, const struct expo_buckets *b,
		    __u64 *le)
{
	c->key = r->key;
	c->count = r->count;
	c->total_ns = r->total_ns;
	c->oncpu_ns = r->oncpu_ns;
	c->blocked_ns = r->blocked_ns;
	c->runq_ns = r->runq_ns;
	expo_le_of_hist(r->hist, b, le);
}

/* Series i's numbers, as taken into in->counts. */
static const struct row_key *s_key(const struct expo_input *in, __u32 i)
{
	return &in->counts[i].key;
}

static __u64 s_count(const struct expo_input *in, __u32 i)
{
	return in->counts[i].count;
}

static __u64 s_total(const struct expo_input *in, __u32 i)
{
	return in->counts[i].total_ns;
}

/*
 * The exit series' labels, formatted once per scrape: each family repeats them for every series
 * (and the histogram once per bucket), and escaping a guest name is the costly part of a line.
 */
struct series_labels {
	char *buf;		/* series i's labels: buf + off[i] up to buf + off[i + 1] */
	size_t *off;
};

static int labels_make(const struct expo_input *in, struct series_labels *sl)
{
	size_t cap = (size_t)in->nr_series * 128 + LABELS_MAX, len = 0;

	sl->off = malloc(((size_t)in->nr_series + 1) * sizeof(*sl->off));
	sl->buf = malloc(cap);
	if (!sl->off || !sl->buf)
		return -ENOMEM;
	for (__u32 i = 0; i < in->nr_series; i++) {
		const struct expo_series *s = &in->series[i];
		const struct row_key *k = s_key(in, i);

		if (len + LABELS_MAX > cap) {
			char *p = realloc(sl->buf, cap * 2);

			if (!p)
				return -ENOMEM;
			sl->buf = p;
			cap *= 2;
		}
		sl->off[i] = len;
		len += exit_labels(sl->buf + len, s->guest, k->tgid, k->vcpu, in->by_vcpu, k->isa,
				   k->reason, true);
	}
	sl->off[in->nr_series] = len;
	return 0;
}

static void labels_free(struct series_labels *sl)
{
	free(sl->buf);
	free(sl->off);
}

_Static_assert(LABELS_MAX <= EXPO_LABELS_MAX, "EXPO_LABELS_MAX holds an exit series' labels");

size_t expo_series_labels(const struct expo_input *in, __u32 i, char *out)
{
	const struct row_key *k = s_key(in, i);

	return exit_labels(out, in->series[i].guest, k->tgid, k->vcpu, in->by_vcpu, k->isa,
			   k->reason, true);
}

static const char *labels_of(const struct series_labels *sl, __u32 i, size_t *len)
{
	*len = sl->off[i + 1] - sl->off[i];
	return sl->buf + sl->off[i];
}

static int render_exits(const struct expo_input *in, enum expo_format fmt, struct expo_buf *b,
			const struct series_labels *sl)
{
	int err;

	err = family(b, fmt, "vmexit_exits", "counter", NULL, expo_exits_help);
	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		const struct expo_series *s = &in->series[i];
		size_t n;
		const char *labels = labels_of(sl, i, &n);

		err = sample_u64(b, "vmexit_exits_total", labels, n, s_count(in, i));
		if (!err)
			err = sample_created(b, fmt, "vmexit_exits_created", labels, n,
					     s->created_ms);
	}
	return err;
}

static int render_durations(const struct expo_input *in, enum expo_format fmt,
			    struct expo_buf *b, const struct series_labels *sl)
{
	static const char bucket[] = "vmexit_exit_duration_seconds_bucket{";
	const struct expo_buckets *bk = in->buckets;
	size_t le_len[EXPO_MAX_BOUNDS + 1], le_max = 4;
	int err;

	err = family(b, fmt, "vmexit_exit_duration_seconds", "histogram", "seconds",
		     expo_duration_help);
	for (__u32 j = 0; j < bk->nr; j++) {
		le_len[j] = strlen(bk->le[j]);
		if (le_len[j] > le_max)
			le_max = le_len[j];
	}
	le_len[bk->nr] = 4;	/* +Inf */
	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		const struct expo_series *s = &in->series[i];
		size_t n;
		const char *labels = labels_of(sl, i, &n);
		/* Room for the series' bucket lines at once: one check, not one per line. */
		char *p = reserve(b, (bk->nr + 1) * (sizeof(bucket) + n + le_max + 16 +
						     FMT_NUM_MAX));
		const __u64 *cum = in->counts[i].le;

		if (!p)
			return -ENOMEM;
		for (__u32 j = 0; j <= bk->nr; j++) {
			p = fmt_lit(p, bucket);
			memcpy(p, labels, n);
			p = fmt_lit(p + n, ",le=\"");
			memcpy(p, j < bk->nr ? bk->le[j] : "+Inf", le_len[j]);
			p = fmt_lit(p + le_len[j], "\"} ");
			p = fmt_u64(p, cum[j]);
			*p++ = '\n';
		}
		b->len = p - b->p;
		/* _count is the +Inf bucket: the histogram's own total, so the two always agree. */
		err = sample_u64(b, "vmexit_exit_duration_seconds_count", labels, n, cum[bk->nr]);
		if (!err)
			err = sample_sec(b, "vmexit_exit_duration_seconds_sum", labels, n,
					 s_total(in, i));
		if (!err)
			err = sample_created(b, fmt, "vmexit_exit_duration_seconds_created", labels,
					     n, s->created_ms);
	}
	return err;
}

/* --split: each series' exit time in three states, which add up to its duration sum. */
static int render_states(const struct expo_input *in, enum expo_format fmt, struct expo_buf *b,
			 const struct series_labels *sl)
{
	static const char *const state[] = { "oncpu", "blocked", "runq" };
	char labels[LABELS_MAX + 32];
	int err;

	err = family(b, fmt, "vmexit_exit_state_seconds", "counter", "seconds",
		     "Time in completed KVM exits by what the vCPU thread was doing: on CPU, "
		     "blocked (asleep), runq (runnable, waiting for a CPU). The three add up to "
		     "vmexit_exit_duration_seconds_sum.");
	for (__u32 i = 0; !err && i < in->nr_series; i++) {
		const struct expo_series *s = &in->series[i];
		const struct expo_counts *c = &in->counts[i];
		const __u64 ns[] = { c->oncpu_ns, c->blocked_ns, c->runq_ns };
		size_t n;
		const char *l = labels_of(sl, i, &n);

		memcpy(labels, l, n);

		for (int k = 0; !err && k < 3; k++) {
			char *p = fmt_lit(labels + n, ",state=\"");

			p = fmt_str(p, state[k]);
			*p++ = '"';
			err = sample_sec(b, "vmexit_exit_state_seconds_total", labels, p - labels,
					 ns[k]);
			if (!err)
				err = sample_created(b, fmt, "vmexit_exit_state_seconds_created",
						     labels, p - labels, s->created_ms);
		}
	}
	return err;
}

/* The labels of an exported exit in flight (expo_input.inflight), its guest named. */
static size_t inflight_labels(const struct expo_input *in, const struct inflight_exit *f,
			      char *labels)
{
	const char *guest = name_cache_get_at(in->names, f->tgid, f->proc_start);

	return exit_labels(labels, guest, f->tgid, f->vcpu, true, f->isa, f->reason, false);
}

/* --split: a stuck vCPU asleep, spinning on CPU, or starved of a CPU: three different alarms. */
static int render_inflight_states(const struct expo_input *in, enum expo_format fmt,
				  struct expo_buf *b)
{
	static const char *const state[] = { "oncpu", "blocked", "runq" };
	char labels[LABELS_MAX + 32];
	int err;

	err = family(b, fmt, "vmexit_exit_in_flight_state_seconds", "gauge", "seconds",
		     "vmexit_exit_in_flight_seconds by what the vCPU thread has been doing: on "
		     "CPU, blocked (asleep), runq (runnable, waiting for a CPU).");
	for (__u32 i = 0; !err && i < in->nr_inflight; i++) {
		const struct inflight_exit *f = &in->inflight[i];
		__u64 ns[3];
		size_t n;

		if (!inflight_stuck(f, in->now_ns, in->stuck_ns))
			continue;
		inflight_split(f, in->now_ns, &ns[0], &ns[1], &ns[2]);
		n = inflight_labels(in, f, labels);
		for (int k = 0; !err && k < 3; k++) {
			char *p = fmt_lit(labels + n, ",state=\"");

			p = fmt_str(p, state[k]);
			*p++ = '"';
			err = sample_sec(b, "vmexit_exit_in_flight_state_seconds", labels,
					 p - labels, ns[k]);
		}
	}
	return err;
}

/* The exits in flight for --stuck or more. An exit whose thread exited in it is over, not
 * stuck: its row counted it, and it never completes. */
static int render_inflight(const struct expo_input *in, enum expo_format fmt,
			   struct expo_buf *b)
{
	char labels[LABELS_MAX];
	int err;

	err = family(b, fmt, "vmexit_exits_in_flight", "gauge", NULL,
		     "Exits in flight for longer than --stuck: a vCPU stuck in its VMM or in the "
		     "kernel.");
	for (__u32 i = 0; !err && i < in->nr_inflight; i++) {
		const struct inflight_exit *f = &in->inflight[i];

		if (inflight_stuck(f, in->now_ns, in->stuck_ns))
			err = sample_u64(b, "vmexit_exits_in_flight", labels,
					 inflight_labels(in, f, labels), 1);
	}
	if (!err)
		err = family(b, fmt, "vmexit_exit_in_flight_seconds", "gauge", "seconds",
			     "How long the exits in vmexit_exits_in_flight have been in flight.");
	for (__u32 i = 0; !err && i < in->nr_inflight; i++) {
		const struct inflight_exit *f = &in->inflight[i];

		if (inflight_stuck(f, in->now_ns, in->stuck_ns))
			err = sample_sec(b, "vmexit_exit_in_flight_seconds", labels,
					 inflight_labels(in, f, labels),
					 inflight_age(f, in->now_ns));
	}
	return err || !in->split ? err : render_inflight_states(in, fmt, b);
}

/* One counter per BPF program: its run time (seconds) or its number of runs. */
static int render_progs(const struct expo_input *in, enum expo_format fmt, struct expo_buf *b,
			const char *family_name, bool seconds)
{
	char labels[LABELS_MAX], total[64], created[64];
	int err = 0;

	snprintf(total, sizeof(total), "%s_total", family_name);
	snprintf(created, sizeof(created), "%s_created", family_name);
	for (__u32 i = 0; !err && i < in->nr_progs; i++) {
		const struct expo_prog *pr = &in->progs[i];
		char name[sizeof(pr->name) + 1], *p;

		snprintf(name, sizeof(name), "%.*s", (int)sizeof(pr->name), pr->name);
		p = fmt_lit(labels, "program=\"");
		p = prom_label_esc(p, name);
		*p++ = '"';
		if (seconds)
			err = sample_sec(b, total, labels, p - labels, pr->run_ns);
		else
			err = sample_u64(b, total, labels, p - labels, pr->run_cnt);
		if (!err)
			err = sample_created(b, fmt, created, labels, p - labels, in->start_ms);
	}
	return err;
}

/* One family of lost counters: the causes that lose exits (details false) or details. */
static int render_lost(const struct expo_input *in, enum expo_format fmt, struct expo_buf *b,
		       const char *family_name, bool details)
{
	char labels[LABELS_MAX], total[64], created[64];
	int err = 0;
	size_t n;
	char *p;

	snprintf(total, sizeof(total), "%s_total", family_name);
	snprintf(created, sizeof(created), "%s_created", family_name);
	for (int c = 0; !err && c < NR_LOST; c++) {
		if ((lost_cause_effect(c) == LOST_EFFECT_DETAIL) != details)
			continue;
		p = fmt_lit(labels, "cause=\"");
		p = fmt_str(p, lost_cause_key(c));
		*p++ = '"';
		n = p - labels;
		err = sample_u64(b, total, labels, n, in->lost[c]);
		if (!err)
			err = sample_created(b, fmt, created, labels, n, in->start_ms);
	}
	return err;
}

/* --max-series: the cap, and how many series it left out of this scrape. */
static int render_series_cap(const struct expo_input *in, enum expo_format fmt,
			     struct expo_buf *b)
{
	int err;

	err = family(b, fmt, "vmexit_series_dropped", "gauge", NULL,
		     "Per-guest series left out of this scrape by --max-series (0: none).");
	if (!err)
		err = sample_u64(b, "vmexit_series_dropped", "", 0, in->series_dropped);
	if (!err)
		err = family(b, fmt, "vmexit_series_max", "gauge", NULL,
			     "The per-guest series a scrape may hold (--max-series).");
	if (!err)
		err = sample_u64(b, "vmexit_series_max", "", 0, in->max_series);
	return err;
}

/*
 * The kvm_exit/kvm_entry pair in use: a run started on an idle host moves from the classic
 * pair to the fast one once exits begin (src/kernel/fast_switch.h), and its cost with it.
 */
static int render_exit_hooks(const struct hooks_info *h, enum expo_format fmt,
			     struct expo_buf *b)
{
	char labels[LABELS_MAX];
	char *p;
	int err;

	err = family(b, fmt, "vmexit_exit_hooks_info", "gauge", NULL,
		     "The programs on kvm_exit and kvm_entry: path=\"fast\" (raw tracepoints) or "
		     "\"classic\" (the tracepoints' records).");
	if (err)
		return err;
	p = fmt_lit(labels, "path=\"");
	p = fmt_str(p, !strncmp(h->kvm_exit, "tp_btf/", 7) ? "fast" : "classic");
	p = fmt_lit(p, "\",kvm_exit=\"");
	p = prom_label_esc(p, h->kvm_exit);
	p = fmt_lit(p, "\",kvm_entry=\"");
	p = prom_label_esc(p, h->kvm_entry);
	*p++ = '"';
	return sample_u64(b, "vmexit_exit_hooks_info", labels, p - labels, 1);
}

static int render_process(const struct expo_input *in, enum expo_format fmt,
			  struct expo_buf *b)
{
	char labels[LABELS_MAX], version[64], kernel[GUEST_MAX];
	char *p;
	int err;

	err = family(b, fmt, "vmexit_lost_exits", "counter", NULL,
		     "Exits the kernel side could not record, by cause.");
	if (!err)
		err = render_lost(in, fmt, b, "vmexit_lost_exits", false);
	if (!err)
		err = family(b, fmt, "vmexit_lost_details", "counter", NULL,
			     "Exits counted whose detail (stack, key) was not kept, by cause.");
	if (!err)
		err = render_lost(in, fmt, b, "vmexit_lost_details", true);
	if (!err && in->progs)
		err = family(b, fmt, "vmexit_bpf_run_seconds", "counter", "seconds",
			     "CPU time spent in vmexit's BPF programs, as the kernel accounts it.");
	if (!err && in->progs)
		err = render_progs(in, fmt, b, "vmexit_bpf_run_seconds", true);
	if (!err && in->progs)
		err = family(b, fmt, "vmexit_bpf_runs", "counter", NULL,
			     "Runs of vmexit's BPF programs, as the kernel accounts them.");
	if (!err && in->progs)
		err = render_progs(in, fmt, b, "vmexit_bpf_runs", false);
	if (!err && in->max_series)
		err = render_series_cap(in, fmt, b);
	if (!err && in->hooks)
		err = render_exit_hooks(in->hooks, fmt, b);
	if (!err)
		err = family(b, fmt, "vmexit_guests", "gauge", NULL,
			     "VMM processes that made exits and are still running.");
	if (!err)
		err = sample_u64(b, "vmexit_guests", "", 0, in->guests);
	if (!err)
		/* A gauge in both formats, as exporters' *_build_info are: the text format has no
		 * info type, and promtool (2.42) reads OpenMetrics with the text parser. */
		err = family(b, fmt, "vmexit_build_info", "gauge", NULL,
			     "vmexit's version and the kernel it runs on.");
	if (!err) {
		snprintf(version, sizeof(version), "%s", in->version);
		snprintf(kernel, sizeof(kernel), "%s", in->kernel);
		p = fmt_lit(labels, "version=\"");
		p = prom_label_esc(p, version);
		p = fmt_lit(p, "\",kernel=\"");
		p = prom_label_esc(p, kernel);
		*p++ = '"';
		err = sample_u64(b, "vmexit_build_info", labels, p - labels, 1);
	}
	return err;
}

/*
 * The exporter itself: the kernel sample behind the counts, and its process as every client
 * library exports it (names, types and units as theirs, so that dashboards for any exporter
 * work).
 */
static int render_self(const struct expo_input *in, enum expo_format fmt, struct expo_buf *b)
{
	enum { NS, MS, NUM };
	const struct process_stats *ps = in->self;
	const struct {
		const char *name, *type, *unit, *help;
		int kind;
		__u64 v;
		bool on;
	} m[] = {
		{ "vmexit_sample_duration_seconds", "gauge", "seconds",
		  "How long the kernel sample behind these counts took (read and copied).",
		  NS, in->sample_ns, in->sample_ms },
		{ "vmexit_last_sample_timestamp_seconds", "gauge", "seconds",
		  "When the kernel sample behind these counts was taken, in Unix time.",
		  MS, in->sample_ms, in->sample_ms },
		{ "process_cpu_seconds", "counter", "seconds",
		  "Total user and system CPU time spent in seconds.", NS, ps ? ps->cpu_ns : 0, ps },
		{ "process_resident_memory_bytes", "gauge", "bytes", "Resident memory size in bytes.",
		  NUM, ps ? ps->resident_bytes : 0, ps },
		{ "process_virtual_memory_bytes", "gauge", "bytes", "Virtual memory size in bytes.",
		  NUM, ps ? ps->virtual_bytes : 0, ps },
		{ "process_open_fds", "gauge", NULL, "Number of open file descriptors.",
		  NUM, ps ? ps->open_fds : 0, ps },
		{ "process_max_fds", "gauge", NULL, "Maximum number of open file descriptors.",
		  NUM, ps ? ps->max_fds : 0, ps },
		{ "process_start_time_seconds", "gauge", "seconds",
		  "Start time of the process since unix epoch in seconds.",
		  MS, ps ? ps->start_ms : 0, ps },
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(m) / sizeof(m[0]); i++) {
		char name[64];
		bool counter = !strcmp(m[i].type, "counter");

		if (!m[i].on)
			continue;
		snprintf(name, sizeof(name), "%s%s", m[i].name, counter ? "_total" : "");
		err = family(b, fmt, m[i].name, m[i].type, m[i].unit, m[i].help);
		if (!err && m[i].kind == NS)
			err = sample_sec(b, name, "", 0, m[i].v);
		else if (!err && m[i].kind == MS)
			err = sample_ms(b, name, "", 0, m[i].v);
		else if (!err)
			err = sample_u64(b, name, "", 0, m[i].v);
		if (!err && counter) {
			snprintf(name, sizeof(name), "%s_created", m[i].name);
			err = sample_created(b, fmt, name, "", 0, ps->start_ms);
		}
	}
	return err;
}

/* An exit series' labels, then key_kind="..",key="..",key_dir="..",key_name="..". */
static size_t key_labels(char *out, const struct expo_key *e)
{
	const struct key_note *k = &e->key.key;
	bool real = k->kind != KEY_NONE && k->kind != KEY_OTHER;
	char *p = out + exit_labels(out, e->guest, e->key.tgid, 0, false, e->key.isa,
				    e->key.reason, true);

	p = fmt_lit(p, ",key_kind=\"");
	p = fmt_str(p, key_kind_name(k->kind));
	p = fmt_lit(p, "\",key=\"");
	/* "none", "other" or the key in hex: JSON numbers it, a label cannot. */
	p = real ? fmt_hex(fmt_lit(p, "0x"), k->key) : fmt_str(p, key_kind_name(k->kind));
	/* A device's span (key_groups.h): "0xa0000-0xbffff". */
	if (real && e->key.key_end)
		p = fmt_hex(fmt_lit(p, "-0x"), e->key.key_end);
	p = fmt_lit(p, "\",key_dir=\"");
	p = fmt_str(p, key_dir_name(k->dir));
	p = fmt_lit(p, "\",key_name=\"");
	p = prom_label_esc(p, e->name);
	*p++ = '"';
	return p - out;
}

/* serve --keys: completed exits and their time per key (key_series.h). */
static int render_keys(const struct expo_input *in, enum expo_format fmt, struct expo_buf *b)
{
	char labels[LABELS_MAX + PROM_ESC_MAX(64) + 128];
	int err;

	err = family(b, fmt, "vmexit_key_exits", "counter", NULL,
		     "Completed KVM exits per key (serve --keys: each guest x reason's top keys, "
		     "the rest as key=\"other\").");
	for (__u32 i = 0; !err && i < in->nr_keys; i++) {
		size_t n = key_labels(labels, &in->keys[i]);

		err = sample_u64(b, "vmexit_key_exits_total", labels, n, in->keys[i].count);
		if (!err)
			err = sample_created(b, fmt, "vmexit_key_exits_created", labels, n,
					     in->keys[i].created_ms);
	}
	if (!err)
		err = family(b, fmt, "vmexit_key_exit_seconds", "counter", "seconds",
			     "Time in completed KVM exits per key (serve --keys).");
	for (__u32 i = 0; !err && i < in->nr_keys; i++) {
		size_t n = key_labels(labels, &in->keys[i]);

		err = sample_sec(b, "vmexit_key_exit_seconds_total", labels, n,
				 in->keys[i].total_ns);
		if (!err)
			err = sample_created(b, fmt, "vmexit_key_exit_seconds_created", labels, n,
					     in->keys[i].created_ms);
	}
	return err;
}

int expo_render(const struct expo_input *in, enum expo_format fmt, struct expo_buf *out)
{
	struct series_labels sl = {};
	/* Made only for the families that print them: a protobuf scrape has its own. */
	int err = !in->no_exits || !in->no_classic || in->split ? labels_make(in, &sl) : 0;

	if (!err && !in->no_exits)
		err = render_exits(in, fmt, out, &sl);
	if (!err && !in->no_classic)
		err = render_durations(in, fmt, out, &sl);
	if (!err && in->split)
		err = render_states(in, fmt, out, &sl);
	labels_free(&sl);
	if (!err && in->keys_on)
		err = render_keys(in, fmt, out);
	if (!err && in->export_stuck)
		err = render_inflight(in, fmt, out);
	/* A protobuf scrape (no_classic) gets the wake histograms from prom_protobuf.c. */
	if (!err && in->wake)
		err = expo_render_wake(in->wake, in->buckets, fmt, !in->no_classic, out);
	if (!err)
		err = render_process(in, fmt, out);
	if (!err)
		err = render_self(in, fmt, out);
	if (!err && fmt == EXPO_OPENMETRICS)
		err = put(out, "# EOF\n");
	return err;
}

/* For wake_exposition.c (prom_exposition.h says why). */
int expo_family(struct expo_buf *b, enum expo_format fmt, const char *name, const char *type,
		const char *unit, const char *help)
{
	return family(b, fmt, name, type, unit, help);
}

int expo_sample_u64(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		    __u64 v)
{
	return sample_u64(b, name, labels, llen, v);
}

int expo_sample_sec(struct expo_buf *b, const char *name, const char *labels, size_t llen,
		    __u64 ns)
{
	return sample_sec(b, name, labels, llen, ns);
}

int expo_sample_created(struct expo_buf *b, enum expo_format fmt, const char *name,
			const char *labels, size_t llen, __u64 ms)
{
	return sample_created(b, fmt, name, labels, llen, ms);
}

_Static_assert(PROM_ESC_MAX(GUEST_MAX) <= EXPO_GUEST_ESC_MAX, "room for a guest label");

char *expo_guest_labels(char *p, const char *guest, __u32 tgid, __s32 vcpu, bool with_vcpu)
{
	p = guest_pid_labels(p, guest, tgid, vcpu, with_vcpu);
	*p++ = '"';
	return p;
}
