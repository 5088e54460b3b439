// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top --wake`, the wake-up level (w): per guest, vCPU, source and vector, the interrupts
 * delivered (Total since start or r), those KVM posted with no exit (Posted, likewise: not
 * timed, in none of the other columns), the deliveries' rate, P50 and P99 latency (pending to
 * the vCPU's next entry) and what the vCPU was doing meanwhile, as shares of that time; then per vCPU its
 * halts: how they ended and what the halted exits' time was made of. Rates, latencies and
 * shares are of the last interval, as the other levels' Current and P99 are. The rows are
 * stat --wake's (wake_row_of(), hlt_row_of()), in its order. The level has no items: Up/Down
 * scroll its lines, as the stacks' do.
 */
#include <errno.h>
#include <stdio.h>
#include "durations.h"
#include "text_escape.h"
#include "top_view_int.h"

#define W_TOTAL		9
#define W_RATE		8
#define W_LAT		7
#define W_SHARE		6

/* start: the VMM's process start (the cells' key), so that a reused pid shows its own. */
static bool vcpu_shown(const struct top_ui *ui, __u32 tgid, __u64 start, __s32 vcpu)
{
	return top_in_view(ui, tgid, start) && (ui->vcpu < 0 || vcpu == ui->vcpu);
}

/* The row's guest and what else names it; -f matches all of it. */
static bool label_of(const struct top_data *d, const struct top_ui *ui, __u32 tgid, __u64 start,
		     __s32 vcpu, const char *rest, char *buf, size_t len)
{
	char nb[TEXT_NAME_MAX];

	snprintf(buf, len, "%s/%u vCPU %d%s", text_esc(nb, name_cache_get_at(d->names, tgid, start)),
		 tgid, vcpu, rest);
	return !ui->have_re || !regexec(&ui->re, buf, 0, NULL, 0);
}

static void share(char *buf, size_t len, __u64 whole, double pct)
{
	if (whole)
		snprintf(buf, len, " %*.1f", W_SHARE, pct);
	else
		snprintf(buf, len, " %*s", W_SHARE, "-");
}

static int wake_rows_text(struct top_window *w, const struct top_data *d,
			  const struct top_ui *ui)
{
	const struct wake_snapshot *cur = d->wake_cur, *tot = d->wake_tot;
	double iv = d->interval_s;
	int shown = 0;

	for (size_t i = 0; i < tot->nr_wake && i < cur->nr_wake; i++) {
		const struct wake_key *k = &tot->wkeys[i];
		const struct wake_cell *c = &cur->wcells[i];
		char label[TOP_LINE_MAX], rest[32], p50[24] = "-", p99[24] = "-", parts[128];
		struct wake_row r;
		size_t n = 0;

		snprintf(rest, sizeof(rest), " %s 0x%02x", wake_source_name(k->source), k->vector);
		/* The two deltas are of one snapshot: the same keys, row for row (wake_delta.h). */
		if (wake_key_cmp(k, &cur->wkeys[i]) || !vcpu_shown(ui, k->tgid, k->proc_start, k->vcpu) ||
		    (ui->skip_zero && !c->count && !c->posted) ||
		    !label_of(d, ui, k->tgid, k->proc_start, k->vcpu, rest, label, sizeof(label)))
			continue;
		wake_row_of(c, &r);
		if (c->count) {
			fmt_duration(0, r.p50_ns, p50, sizeof(p50));
			fmt_duration(0, r.p99_ns, p99, sizeof(p99));
		}
		for (int p = 0; p < NR_WAKE_PARTS; p++, n += W_SHARE + 1)
			share(parts + n, sizeof(parts) - n, c->sum_ns, r.part_pct[p]);
		top_wtext(w, " %*llu %*llu %*.0f %*s %*s%s  %s", W_TOTAL,
			  (unsigned long long)tot->wcells[i].count, W_TOTAL,
			  (unsigned long long)tot->wcells[i].posted, W_RATE,
			  iv > 0 ? (double)c->count / iv : 0, W_LAT, p50, W_LAT, p99, parts, label);
		shown++;
	}
	return shown;
}

static int hlt_rows_text(struct top_window *w, const struct top_data *d, const struct top_ui *ui)
{
	const struct wake_snapshot *cur = d->wake_cur, *tot = d->wake_tot;
	double iv = d->interval_s;
	int shown = 0;

	for (size_t i = 0; i < tot->nr_hlt && i < cur->nr_hlt; i++) {
		const struct hlt_key *k = &tot->hkeys[i];
		const struct hlt_cell *c = &cur->hcells[i];
		char label[TOP_LINE_MAX], kinds[64], parts[96];
		struct hlt_row r;
		size_t n = 0;

		if (hlt_key_cmp(k, &cur->hkeys[i]) || !vcpu_shown(ui, k->tgid, k->proc_start, k->vcpu) ||
		    (ui->skip_zero && !c->halts) ||
		    !label_of(d, ui, k->tgid, k->proc_start, k->vcpu, "", label, sizeof(label)))
			continue;
		hlt_row_of(c, &r);
		share(kinds, sizeof(kinds), c->halts, r.polled_pct);
		share(kinds + W_SHARE + 1, sizeof(kinds) - W_SHARE - 1, c->halts, r.poll_slept_pct);
		share(kinds + 2 * (W_SHARE + 1), sizeof(kinds) - 2 * (W_SHARE + 1), c->halts,
		      r.slept_pct);
		for (int p = 0; p < NR_HLT_PARTS; p++, n += W_SHARE + 1)
			share(parts + n, sizeof(parts) - n, c->sum_ns, r.part_pct[p]);
		top_wtext(w, " %*llu %*.0f%s%s  %s", W_TOTAL,
			  (unsigned long long)tot->hcells[i].halts, W_RATE, iv > 0 ? (double)c->halts / iv : 0, kinds, parts, label);
		shown++;
	}
	return shown;
}

/* All the lines, counted; those in the window built. */
static void wake_text(struct top_window *w, const struct top_data *d, const struct top_ui *ui)
{
	char hdr[TOP_LINE_MAX];
	size_t n;

	if (!wake_rows_text(w, d, ui))
		top_wtext(w, "  (%s)", ui->have_re ? "no delivery matches the filter" :
			  "no interrupt delivered yet");
	/* Pending for vCPUs never seen entering guest mode: none can be timed (stat says why). */
	if (d->wake_tot->untimed_known && d->wake_tot->untimed)
		top_wtext(w, "  untimed: %llu made pending for vCPUs never seen entering guest mode "
			  "(no kvm:kvm_entry for them)", (unsigned long long)d->wake_tot->untimed);
	top_wtext(w, "%s", "");
	n = (size_t)snprintf(hdr, sizeof(hdr), " %*s %*s %*s %*s %*s", W_TOTAL, "Halts", W_RATE,
			     "Current", W_SHARE, "polled", W_SHARE, "p+slpt", W_SHARE, "slept");
	for (int p = 0; p < NR_HLT_PARTS && n < sizeof(hdr); p++)
		n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, " %*s", W_SHARE, hlt_part_name(p));
	top_wtext_attr(w, TOP_A_REVERSE, "%s  Guest/pid vCPU: halts' kinds %%, halted exits' "
		       "time %%", hdr);
	if (!hlt_rows_text(w, d, ui))
		top_wtext(w, "  (%s)", ui->have_re ? "no halt matches the filter" :
			  "no halt yet");
	for (int l = 0; l < NR_WAKE_LOST; l++)
		if (d->wake_tot->lost[l])
			top_wtext_attr(w, TOP_A_ALERT | TOP_A_BOLD, "Lost: %llu %s",
				       (unsigned long long)d->wake_tot->lost[l], wake_lost_name(l));
}

int top_wake_lines(struct top_view *v, const struct top_data *d, struct top_ui *ui, int width,
		   int avail)
{
	char hdr[TOP_LINE_MAX];
	size_t n;

	v->nr_text = 0;
	if (!d->wake_cur || !d->wake_tot)
		return top_linef(v, width, 0, "  (no wake-up statistics: start top with --wake)");
	n = (size_t)snprintf(hdr, sizeof(hdr), " %*s %*s %*s %*s %*s", W_TOTAL, "Total", W_TOTAL,
			     "Posted", W_RATE, "Current", W_LAT, "P50", W_LAT, "P99");
	for (int p = 0; p < NR_WAKE_PARTS && n < sizeof(hdr); p++)
		n += (size_t)snprintf(hdr + n, sizeof(hdr) - n, " %*s", W_SHARE, wake_part_name(p));
	if (top_linef(v, width, TOP_A_REVERSE, "%s  Guest/pid vCPU source vector: parts %%", hdr))
		return -ENOMEM;
	return top_window_lines(v, d, ui, width, avail, wake_text);
}
