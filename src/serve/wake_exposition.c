// SPDX-License-Identifier: GPL-2.0
/* serve --wake's families in the text formats (wake_exposition.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "fmt_num.h"
#include "text_escape.h"
#include "wake_exposition.h"

const char wake_delivery_help[] = "Interrupt delivery latency: from an interrupt made pending "
	"for a vCPU (kvm_apic_accept_irq; a LAPIC timer from its hrtimer's expiry) to the "
	"vCPU's next kvm_entry.";
const char wake_halt_help[] = "Per halt (kvm_vcpu_wakeup): from its start to the wake-up (a "
	"successful poll's end, or the scheduler's wake-up of the sleeping vCPU thread): a "
	"halt-poll window at least this long would have caught it.";

size_t wake_series_labels(const struct wake_series *ws, __u32 i, char *out)
{
	const struct expo_wake *w = &ws->wake[i];
	char *p = expo_guest_labels(out, w->guest, w->tgid, w->vcpu, ws->by_vcpu);

	p = fmt_lit(p, ",source=\"");
	p = fmt_str(p, wake_source_name(w->source));
	*p++ = '"';
	return p - out;
}

size_t halt_series_labels(const struct wake_series *ws, __u32 i, char *out)
{
	const struct expo_halt *h = &ws->halt[i];

	return expo_guest_labels(out, h->guest, h->tgid, h->vcpu, ws->by_vcpu) - out;
}

/* labels + ,NAME="VALUE": one more label after a series' own. */
static size_t add_label(char *out, size_t n, const char *name, const char *value)
{
	char *p = out + n;

	*p++ = ',';
	p = fmt_str(p, name);
	p = fmt_lit(p, "=\"");
	p = fmt_str(p, value);
	*p++ = '"';
	return p - out;
}

/* A classic histogram's lines: NAME_bucket per bound and +Inf, _count (the +Inf bucket's), _sum. */
static int classic_hist(struct expo_buf *b, enum expo_format fmt, const char *name,
			const char *labels, size_t n, const __u64 *hist, __u64 sum_ns,
			__u64 created_ms, const struct expo_buckets *bk)
{
	char line[EXPO_LABELS_MAX + 64], sname[96];
	__u64 le[EXPO_MAX_BOUNDS + 1];
	int err = 0;

	expo_le_of_hist(hist, bk, le);
	memcpy(line, labels, n);
	snprintf(sname, sizeof(sname), "%s_bucket", name);
	for (__u32 j = 0; !err && j <= bk->nr; j++)
		err = expo_sample_u64(b, sname, line,
				      add_label(line, n, "le", j < bk->nr ? bk->le[j] : "+Inf"),
				      le[j]);
	snprintf(sname, sizeof(sname), "%s_count", name);
	if (!err)
		err = expo_sample_u64(b, sname, labels, n, le[bk->nr]);
	snprintf(sname, sizeof(sname), "%s_sum", name);
	if (!err)
		err = expo_sample_sec(b, sname, labels, n, sum_ns);
	snprintf(sname, sizeof(sname), "%s_created", name);
	if (!err)
		err = expo_sample_created(b, fmt, sname, labels, n, created_ms);
	return err;
}

/* A counter sample and its _created (name without _total). */
static int counter(struct expo_buf *b, enum expo_format fmt, const char *name, bool seconds,
		   const char *labels, size_t n, __u64 v, __u64 created_ms)
{
	char sname[96];
	int err;

	snprintf(sname, sizeof(sname), "%s_total", name);
	err = seconds ? expo_sample_sec(b, sname, labels, n, v) :
			expo_sample_u64(b, sname, labels, n, v);
	snprintf(sname, sizeof(sname), "%s_created", name);
	return err ? err : expo_sample_created(b, fmt, sname, labels, n, created_ms);
}

static int render_delivery(const struct wake_series *ws, const struct expo_buckets *bk,
			   enum expo_format fmt, bool classic, struct expo_buf *b)
{
	char labels[EXPO_LABELS_MAX + 64];
	int err = 0;

	if (classic && ws->nr_wake)
		err = expo_family(b, fmt, WAKE_DELIVERY_HIST, "histogram", "seconds",
				  wake_delivery_help);
	for (__u32 i = 0; classic && !err && i < ws->nr_wake; i++) {
		size_t n = wake_series_labels(ws, i, labels);

		err = classic_hist(b, fmt, WAKE_DELIVERY_HIST, labels, n, ws->wake[i].c.hist,
				   ws->wake[i].c.sum_ns, ws->wake[i].created_ms, bk);
	}
	if (!err && ws->nr_wake)
		err = expo_family(b, fmt, "vmexit_irq_delivery_part_seconds", "counter", "seconds",
				  "Interrupt delivery latency by what the vCPU was doing when it "
				  "became pending: guest, exit, polled, slept, runq, oncpu (part); "
				  "the parts add up to vmexit_irq_delivery_seconds_sum.");
	for (__u32 i = 0; !err && i < ws->nr_wake; i++) {
		size_t n = wake_series_labels(ws, i, labels);

		for (int p = 0; !err && p < NR_WAKE_PARTS; p++)
			err = counter(b, fmt, "vmexit_irq_delivery_part_seconds", true, labels,
				      add_label(labels, n, "part", wake_part_name(p)),
				      ws->wake[i].c.parts[p], ws->wake[i].created_ms);
	}
	if (!err && ws->nr_wake)
		err = expo_family(b, fmt, "vmexit_irq_posted", "counter", NULL,
				  "Interrupts KVM posted (APICv/AVIC) to a vCPU in guest mode: "
				  "taken with no exit, so not timed: not in "
				  "vmexit_irq_delivery_seconds.");
	for (__u32 i = 0; !err && i < ws->nr_wake; i++)
		err = counter(b, fmt, "vmexit_irq_posted", false, labels,
			      wake_series_labels(ws, i, labels), ws->wake[i].c.posted,
			      ws->wake[i].created_ms);
	return err;
}

static int render_halts(const struct wake_series *ws, const struct expo_buckets *bk,
			enum expo_format fmt, bool classic, struct expo_buf *b)
{
	static const char *const outcome[WAKE_HALT_OUTCOMES] = { "polled", "poll_slept", "slept" };
	char labels[EXPO_LABELS_MAX + 64];
	int err = 0;

	if (!ws->nr_halt)
		return 0;
	err = expo_family(b, fmt, "vmexit_halted_exits", "counter", NULL,
			  "Completed KVM exits in which the vCPU halted (one or more "
			  "kvm_vcpu_wakeup).");
	for (__u32 i = 0; !err && i < ws->nr_halt; i++) {
		size_t n = halt_series_labels(ws, i, labels);

		err = counter(b, fmt, "vmexit_halted_exits", false, labels, n,
			      ws->halt[i].c.exits, ws->halt[i].created_ms);
	}
	if (!err)
		err = expo_family(b, fmt, "vmexit_halted_exit_part_seconds", "counter", "seconds",
				  "Time in halted exits by part: poll, sleep, runq (woken, waiting "
				  "for a CPU), other; the parts add up to the exits' time.");
	for (__u32 i = 0; !err && i < ws->nr_halt; i++) {
		size_t n = halt_series_labels(ws, i, labels);

		for (int p = 0; !err && p < NR_HLT_PARTS; p++)
			err = counter(b, fmt, "vmexit_halted_exit_part_seconds", true, labels,
				      add_label(labels, n, "part", hlt_part_name(p)),
				      ws->halt[i].c.parts[p], ws->halt[i].created_ms);
	}
	if (!err)
		err = expo_family(b, fmt, "vmexit_halts", "counter", NULL,
				  "Halts (kvm_vcpu_wakeup) by outcome: polled (woken while "
				  "polling), poll_slept (polled, then slept), slept (no poll).");
	for (__u32 i = 0; !err && i < ws->nr_halt; i++) {
		const struct hlt_cell *c = &ws->halt[i].c;
		const __u64 v[] = { c->polled, c->poll_slept, c->slept };
		size_t n = halt_series_labels(ws, i, labels);

		for (int k = 0; !err && k < WAKE_HALT_OUTCOMES; k++)
			err = counter(b, fmt, "vmexit_halts", false, labels,
				      add_label(labels, n, "outcome", outcome[k]), v[k],
				      ws->halt[i].created_ms);
	}
	if (!err)
		err = expo_family(b, fmt, "vmexit_halt_invalid_wakeups", "counter", NULL,
				  "Halts KVM woke with nothing to deliver (kvm_vcpu_wakeup "
				  "valid=0).");
	for (__u32 i = 0; !err && i < ws->nr_halt; i++) {
		size_t n = halt_series_labels(ws, i, labels);

		err = counter(b, fmt, "vmexit_halt_invalid_wakeups", false, labels, n,
			      ws->halt[i].c.invalid, ws->halt[i].created_ms);
	}
	if (!err && classic)
		err = expo_family(b, fmt, WAKE_HALT_HIST, "histogram", "seconds", wake_halt_help);
	for (__u32 i = 0; classic && !err && i < ws->nr_halt; i++) {
		const struct hlt_cell *c = &ws->halt[i].c;
		size_t n = halt_series_labels(ws, i, labels);

		err = classic_hist(b, fmt, WAKE_HALT_HIST, labels, n, c->hist, c->wake_sum_ns,
				   ws->halt[i].created_ms, bk);
	}
	return err;
}

int expo_render_wake(const struct wake_series *ws, const struct expo_buckets *bk,
		     enum expo_format fmt, bool classic, struct expo_buf *out)
{
	char labels[64];
	int err = render_delivery(ws, bk, fmt, classic, out);

	if (!err)
		err = render_halts(ws, bk, fmt, classic, out);
	if (!err && ws->halt_poll_ns >= 0)
		err = expo_family(out, fmt, "vmexit_kvm_halt_poll_seconds", "gauge", "seconds",
				  "KVM's halt_poll_ns module parameter: the longest a halted vCPU "
				  "polls before it sleeps.");
	if (!err && ws->halt_poll_ns >= 0)
		err = expo_sample_sec(out, "vmexit_kvm_halt_poll_seconds", "", 0,
				      (__u64)ws->halt_poll_ns);
	if (!err)
		err = expo_family(out, fmt, "vmexit_wake_lost", "counter", NULL,
				  "What serve --wake's kernel side could not keep, by cause: "
				  "slots (pending interrupts past a vCPU's), cells, threads (maps "
				  "full).");
	for (int c = 0; !err && c < NR_WAKE_LOST; c++) {
		char *p = fmt_lit(labels, "cause=\"");

		p = fmt_str(p, wake_lost_key(c));
		*p++ = '"';
		err = expo_sample_u64(out, "vmexit_wake_lost_total", labels, p - labels,
				      ws->lost[c]);
	}
	/* Neither lost nor timed: a rate of its own, so that no one reads the deliveries as all;
	 * after the lost family's samples, which must follow its header (a family's lines stay
	 * together, or strict parsers refuse the scrape). */
	if (!err && ws->untimed_known)
		err = expo_family(out, fmt, "vmexit_wake_untimed", "counter", NULL,
				  "Interrupts made pending (kvm_apic_accept_irq) for vCPUs never seen "
				  "entering guest mode, of every guest served: in no delivery series "
				  "(no kvm:kvm_entry for them: a software KVM, or a vCPU halted since "
				  "before serve started).") ?:
		      expo_sample_u64(out, "vmexit_wake_untimed_total", "", 0, ws->untimed);
	return err;
}
