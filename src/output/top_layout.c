// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top` lines: the header, the lost and stuck lines, one line per item cut to the
 * width, the help and the status line; and the cursor kept in view.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "durations.h"
#include "lost_causes.h"
#include "text_escape.h"
#include "top_view_int.h"

#define W_TOTAL		10
#define W_CUR		8
#define W_PCT		6
#define W_LAT		7
#define W_PID		7
#define W_ONCPU		7	/* --split: "OnCPU%" */
/* " Total Current Time% Avg P99 Max" */
#define W_NUMBERS	(1 + W_TOTAL + 1 + W_CUR + 1 + W_PCT + 3 * (1 + W_LAT))
#define LABEL_MIN	8
#define LABEL_MAX	40
#define KEY_LABEL_MAX	64	/* LV_KEYS: a reason and a key, "kvm_exit(MSR_WRITE) 0x6e0 ..." */
/* A label of KEY_LABEL_MAX + 1 columns of 4-byte characters (or escapes), and its NUL. */
#define LABEL_BUF	(4 * (KEY_LABEL_MAX + 1) + 1)

void top_view_free(struct top_view *v)
{
	free(v->items);
	free(v->lines);
	row_table_free(&v->g_tot);
	row_table_free(&v->g_cur);
	memset(v, 0, sizeof(*v));
}

static struct top_line *add_line(struct top_view *v, unsigned int attr)
{
	struct top_line *l;

	if (array_reserve(v->lines, v->nr_lines, v->cap_lines, 64))
		return NULL;
	l = &v->lines[v->nr_lines++];
	l->text[0] = 0;
	l->attr = attr;
	return l;
}

static int linef(struct top_view *v, int width, unsigned int attr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A line cut at width columns: what does not fit is dropped, never wrapped. */
static int linef(struct top_view *v, int width, unsigned int attr, const char *fmt, ...)
{
	struct top_line *l = add_line(v, attr);
	char tmp[sizeof(l->text)];
	va_list ap;

	if (!l)
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	/* Cut at a character, by columns; the names in it are escaped already, and anything
	 * else that would reach the terminal unescaped is escaped here. */
	text_fit(l->text, sizeof(l->text), tmp, 0, width);
	return 0;
}

/*
 * label into exactly w columns (out has room for w columns of 4-byte characters); a cut label
 * ends in '~' so it is not mistaken for another.
 */
static void fit(char *out, size_t len, const char *label, int w)
{
	size_t n;

	if (w < 1)
		w = 1;
	if (text_cols(label) <= w) {
		text_fit(out, len, label, w, w);
		return;
	}
	text_fit(out, len - 1, label, 0, w - 1);
	n = strlen(out);
	out[n++] = '~';
	/* A wide character that did not fit in the last column: a space for it. */
	text_fit(out + n, len - n, "", w - text_cols(out), -1);
}

static const char *hms(double s, char *buf, size_t len)
{
	unsigned long t = s > 0 ? (unsigned long)s : 0;

	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
	return buf;
}

static void view_name(const struct top_data *d, const struct top_ui *ui, char *buf,
		      size_t len)
{
	char vm[96] = "all VMs", nb[TEXT_NAME_MAX];
	const char *name;

	/* The name cut (whole characters) to leave room for its pid. */
	if (ui->tgid) {
		name = name_cache_get_at(d->names, ui->tgid, ui->start);
		snprintf(vm, sizeof(vm), "%s (pid %u)", text_fit(nb, sizeof(vm) - 20, name, 0, -1),
			 ui->tgid);
	}
	switch (ui->level) {
	case LV_VMS:
		snprintf(buf, len, "all VMs");
		break;
	case LV_VCPUS:
		snprintf(buf, len, "vCPUs of %s", vm);
		break;
	case LV_REASONS:
		if (ui->vcpu >= 0)
			snprintf(buf, len, "exits of %s vCPU %d", vm, ui->vcpu);
		else
			snprintf(buf, len, "exits of %s", vm);
		break;
	case LV_KEYS:
	case LV_STACKS: {
		char r[64] = "exits";

		if (!ui->key_all)
			top_reason_label(ui->key_isa, ui->key_reason, r, sizeof(r));
		/* The kernel charges stacks per guest, not per vCPU: a vCPU's are its VM's. */
		if (ui->level == LV_STACKS)
			snprintf(buf, len, "kernel stacks of %s of %s%s", r, vm,
				 ui->vcpu >= 0 ? " (all vCPUs)" : "");
		else if (ui->vcpu >= 0)
			snprintf(buf, len, "keys of %s of %s vCPU %d", r, vm, ui->vcpu);
		else
			snprintf(buf, len, "keys of %s of %s", r, vm);
		break;
	}
	case LV_WAKE:
		if (ui->vcpu >= 0)
			snprintf(buf, len, "interrupt deliveries and halts of %s vCPU %d", vm,
				 ui->vcpu);
		else
			snprintf(buf, len, "interrupt deliveries and halts of %s", vm);
		break;
	}
}

/* Lost counters: every non-zero one, wrapped to the width; never dropped for lack of room. */
static int lost_lines(struct top_view *v, const struct top_data *d, int width)
{
	char buf[TOP_LINE_MAX] = "";
	unsigned int attr = 0;
	size_t n = 0;

	for (int i = 0; i < NR_LOST; i++) {
		char item[64];
		int len;

		if (!d->lost[i])
			continue;
		/* An entry with no exit is a vCPU's first run, not a loss: not an alert. */
		if (lost_cause_effect(i) != LOST_EFFECT_NONE)
			attr = TOP_A_ALERT | TOP_A_BOLD;
		len = snprintf(item, sizeof(item), "%s%s %llu", n ? ", " : "Lost: ",
			       lost_cause_key(i), (unsigned long long)d->lost[i]);
		if (n && (int)(n + len) > width) {
			if (linef(v, width, attr, "%s", buf))
				return -ENOMEM;
			n = snprintf(buf, sizeof(buf), "      %s", item + 2);
		} else {
			n += snprintf(buf + n, sizeof(buf) - n, "%s", item);
		}
	}
	if (n && linef(v, width, attr, "%s", buf))
		return -ENOMEM;
	return 0;
}

/* How many exits are stuck, and the oldest: never scrolled away, unlike its rows. */
static int stuck_line(struct top_view *v, const struct top_data *d, int width)
{
	const struct inflight_exit *old = NULL;
	/* The name unescaped: linef escapes the whole line. */
	char age[24], lim[24], rb[REASON_STR_MAX + 24];
	__u32 n = 0;

	for (__u32 i = 0; d->stuck_ns && i < d->nr_inflight; i++) {
		const struct inflight_exit *e = &d->inflight[i];

		if (!inflight_stuck(e, d->now_ns, d->stuck_ns))
			continue;
		n++;
		if (!old || e->start_ns < old->start_ns)
			old = e;
	}
	if (!n)
		return 0;
	top_reason_label(old->isa, old->reason, rb, sizeof(rb));
	/* The figures first: a narrow screen cuts the names. */
	return linef(v, width, TOP_A_ALERT | TOP_A_BOLD, "Stuck (in flight >= %s, rows !): %u; "
		     "oldest %s: %s vCPU %d %s", fmt_duration(0, d->stuck_ns, lim, sizeof(lim)), n,
		     fmt_duration(0, inflight_age(old, d->now_ns), age, sizeof(age)),
		     name_cache_get_at(d->names, old->tgid, old->proc_start),
		     old->vcpu, rb);
}

static int header_lines(struct top_view *v, const struct top_data *d, const struct top_ui *ui,
			int width)
{
	char up[24], since[24], view[160];
	int err;

	/* What changes first: a long host name may be cut at the right edge, not these. */
	err = linef(v, width, TOP_A_BOLD, "vmexit top - %d VM%s - traced %s - %s - Linux %s",
		    v->nr_vms, v->nr_vms == 1 ? "" : "s", hms(d->elapsed_s, up, sizeof(up)),
		    d->host ? d->host : "?", d->kernel ? d->kernel : "?");
	view_name(d, ui, view, sizeof(view));
	err = err ? err : linef(v, width, 0, "View: %s", view);
	err = err ? err : linef(v, width, 0, "Sort: %s | Every %gs | Totals since %s %s",
				top_sort_name(ui->sort), ui->delay,
				d->was_reset ? "reset" : "start",
				hms(d->since_s, since, sizeof(since)));
	if (!err && ((d->filters && *d->filters) || ui->have_re || ui->skip_zero)) {
		char re[TOP_INPUT_MAX + 16] = "";
		bool cli = d->filters && *d->filters;

		if (ui->have_re)
			snprintf(re, sizeof(re), "%srows /%s/", cli ? " | " : "", ui->filter);
		err = linef(v, width, 0, "Filters: %s%s%s", cli ? d->filters : "", re,
			    !ui->skip_zero ? "" : cli || ui->have_re ? " | -z" : "-z");
	}
	if (!err && d->overhead)
		err = linef(v, width, 0, "%s", d->overhead);
	return err ? err : stuck_line(v, d, width) ? -ENOMEM : lost_lines(v, d, width);
}

static int label_width(const struct top_ui *ui, int width)
{
	int fixed = 1 + W_NUMBERS + (ui->level >= LV_REASONS ? 0 : 1) +
		    (ui->level == LV_VMS ? 1 + W_PID : 0) + (ui->split ? 1 + W_ONCPU : 0);
	int w = width - fixed, max = ui->level == LV_KEYS ? KEY_LABEL_MAX : LABEL_MAX;

	return w < LABEL_MIN ? LABEL_MIN : w > max ? max : w;
}

static int column_header(struct top_view *v, const struct top_ui *ui, int width, int lw)
{
	const char *what = ui->level == LV_VMS ? "VM" : ui->level == LV_VCPUS ? "vCPU" :
			   ui->level == LV_KEYS ? "Event and key" : "Event";
	char label[LABEL_BUF], pid[16] = "";

	fit(label, sizeof(label), what, lw + (ui->level >= LV_REASONS ? 0 : 1));
	if (ui->level == LV_VMS)
		snprintf(pid, sizeof(pid), " %*s", W_PID, "PID");
	return linef(v, width, TOP_A_REVERSE, " %s%s %*s %*s %*s %*s %*s %*s%s", label, pid,
		     W_TOTAL, "Total", W_CUR, "Current", W_PCT, "Time%", W_LAT, "Avg", W_LAT,
		     "P99", W_LAT, "Max", ui->split ? "  OnCPU%" : "");
}

static int item_line(struct top_view *v, const struct top_data *d, const struct top_ui *ui,
		     int idx, int width, int lw)
{
	const struct top_item *it = &v->items[idx];
	const struct row *c = it->cur;
	bool sel = ui->interactive && idx == ui->sel_idx;
	char label[LABEL_BUF], pid[16] = "", flag[2] = "";
	char avg[24] = "-", p99[24] = "-", max[24] = "-", pct[24], oncpu[24] = "";
	double iv = d->interval_s;
	unsigned int attr;

	fit(label, sizeof(label), it->kind == TI_KEY && text_cols(it->label) > lw ?
		it->key_label : it->label, lw);
	if (ui->level < LV_REASONS)
		snprintf(flag, sizeof(flag), "%s", it->user_src ? "*" : " ");
	if (ui->level == LV_VMS)
		snprintf(pid, sizeof(pid), " %*u", W_PID, it->key.tgid);
	if (c->completed) {
		fmt_duration(0, c->total_ns / c->completed, avg, sizeof(avg));
		fmt_duration(0, row_percentile(c, 99), p99, sizeof(p99));
		fmt_duration(0, c->max_ns, max, sizeof(max));
	}
	/* As stat's TIME%: only the part of each exit inside the interval (rows.h). A kvm event
	 * happens at an instant: it has no time. */
	if (it->key.isa == TOP_ISA_KVM_EVENT)
		snprintf(pct, sizeof(pct), "-");
	else
		snprintf(pct, sizeof(pct), "%.1f%%",
			 iv > 0 ? (double)row_time_in_ns(c) / (iv * 1e9) * 100 : 0);
	/* The share of this interval's exit time that was spent on CPU (the rest: off it). */
	if (ui->split && c->total_ns)
		snprintf(oncpu, sizeof(oncpu), " %*.1f%%", W_ONCPU - 1,
			 100.0 * c->oncpu_ns / c->total_ns);
	else if (ui->split)
		snprintf(oncpu, sizeof(oncpu), " %*s", W_ONCPU, "-");
	/* A stuck row: '!' in the cursor's column (a plain-text screen has no colours) and the
	 * alert colour. */
	attr = sel ? TOP_A_REVERSE : it->kind == TI_GROUP ? TOP_A_BOLD : 0;
	if (it->stuck_ns)
		attr |= TOP_A_ALERT;
	return linef(v, width, attr,
		     "%c%s%s%s %*llu %*.0f %*s %*s %*s %*s%s", sel ? '>' : it->stuck_ns ? '!' : ' ',
		     label, flag, pid,
		     W_TOTAL, (unsigned long long)it->tot->count, W_CUR,
		     iv > 0 ? (double)c->count / iv : 0, W_PCT, pct, W_LAT, avg, W_LAT, p99,
		     W_LAT, max, oncpu);
}

static const char *const help_text[] = {
	"Keys:",
	"  q            quit",
	"  x, Enter     drill down: VM/vCPU to reasons, reason to keys/stacks; x: back",
	"  v / S / w    vCPUs (v: back) / a reason's stacks (--stacks) / wake-ups (--wake)",
	"  b            all VMs' exit reasons together, as kvm_stat (b again: per VM)",
	"  Left, Esc    back up one level; Up/Down, k/j, PgUp/PgDn, Home/End: move",
	"  s / o        sort: count, rate, time, max, p99, oncpu / Total or Current",
	"  f / c        filter names and reasons by a regex (any case) / clear it",
	"  g / p        show one guest, by name / by pid (empty: all VMs)",
	"  r            reset the totals (the kernel counters keep running)",
	"  + / -        refresh less / more often; h, ?: this help",
	"",
	"Total: exits since start or reset. Current: exits/s in the last interval.",
	"Time%: time in exit per interval (100% = one vCPU always out of the guest).",
	"Avg, P99, Max: exit latency in the last interval (kvm_pio...: events, no time).",
	"VM and vCPU rows count guest exits (kvm_exit); '*' marks one without any,",
	"counted from its exits to the VMM instead (software KVM backends).",
	"!: a row with an exit in flight for --stuck (default 1s) or more: a vCPU",
	"stuck in its VMM or in the kernel. The Stuck line names the oldest.",
	"Lost: exits the kernel side could not record; unmatched_entry is benign",
	"(a vCPU's first entry, or one in flight when tracing began).",
	"",
	"Press any key (q too) to return.",
};

static const char *const prompts[] = {
	[PR_FILTER] = "Regex filter on names (empty: none)",
	[PR_GUEST] = "Guest name (empty: all VMs)",
	[PR_PID] = "Guest pid (empty: all VMs)",
};

/* The levels that scroll lines, with no items and no cursor. */
static bool text_level(const struct top_ui *ui)
{
	return ui->level == LV_STACKS || ui->level == LV_WAKE;
}

static int status_line(struct top_view *v, const struct top_ui *ui, int width, int avail)
{
	char range[48] = "";
	int n = text_level(ui) ? v->nr_text : v->nr_items;

	if (ui->prompt != PR_NONE)
		return linef(v, width, TOP_A_BOLD, "%s: %s_", prompts[ui->prompt], ui->input);
	if (ui->msg[0])
		return linef(v, width, TOP_A_BOLD, "%s", ui->msg);
	if (ui->help)
		return linef(v, width, 0, "any key: back");
	if (n > avail)
		snprintf(range, sizeof(range), "  [%d-%d/%d]", ui->first + 1,
			 ui->first + avail < n ? ui->first + avail : n, n);
	return linef(v, width, 0, "q quit x drill v vCPUs s sort f filter g/p guest r reset "
		     "h help%s", range);
}

/* Keeps the cursor on the same item when it moved, else at the same place; and in view. */
static void fix_cursor(const struct top_view *v, struct top_ui *ui, int avail)
{
	int i;

	for (i = 0; ui->have_sel && i < v->nr_items; i++) {
		if (v->items[i].kind == ui->sel.kind &&
		    !row_key_cmp(&v->items[i].key, &ui->sel.key))
			break;
	}
	if (ui->have_sel && i < v->nr_items)
		ui->sel_idx = i;
	if (ui->sel_idx >= v->nr_items)
		ui->sel_idx = v->nr_items - 1;
	if (ui->sel_idx < 0)
		ui->sel_idx = 0;
	ui->have_sel = v->nr_items > 0;
	if (ui->have_sel) {
		ui->sel.kind = v->items[ui->sel_idx].kind;
		ui->sel.key = v->items[ui->sel_idx].key;
	}
	if (ui->sel_idx < ui->first)
		ui->first = ui->sel_idx;
	if (ui->sel_idx >= ui->first + avail)
		ui->first = ui->sel_idx - avail + 1;
	if (ui->first > v->nr_items - avail)
		ui->first = v->nr_items - avail;
	if (ui->first < 0)
		ui->first = 0;
}

int top_view_build(struct top_view *v, const struct top_data *d, struct top_ui *ui)
{
	int width = ui->width - 1, lw, avail, err, header, nr_rows = 0;
	__u32 *vms;

	/* One column short of the screen: curses would wrap a line that fills the last one. */
	if (width < 20)
		width = 20;
	if (width > TOP_LINE_MAX - 1)
		width = TOP_LINE_MAX - 1;
	v->nr_lines = 0;
	vms = top_vm_list(d, &v->nr_vms);
	free(vms);
	err = top_build_items(v, d, ui);
	/* The help takes the whole screen (24 lines): it has no room for the header. */
	err = err || ui->help ? err : header_lines(v, d, ui, width);
	if (err)
		return err;
	header = v->nr_lines;
	avail = ui->height > 0 ? ui->height - header - 1 - (ui->interactive ? 1 : 0) : 0;
	if (ui->height <= 0)
		avail = v->nr_items > 0 ? v->nr_items : 1;
	if (avail < 1)
		avail = 1;
	ui->page = avail;
	/* The stacks' level scrolls its lines (top_stacks.c): it has no items, no cursor. */
	if (!text_level(ui))
		fix_cursor(v, ui, avail);

	lw = label_width(ui, width);
	if (ui->help) {
		for (size_t i = 0; i < sizeof(help_text) / sizeof(help_text[0]); i++) {
			if (linef(v, width, 0, "%s", help_text[i]))
				return -ENOMEM;
		}
	} else if (ui->level == LV_STACKS) {
		if (top_stack_lines(v, d, ui, width, ui->height > 0 ? avail : INT_MAX))
			return -ENOMEM;
	} else if (ui->level == LV_WAKE) {
		if (top_wake_lines(v, d, ui, width, ui->height > 0 ? avail : INT_MAX))
			return -ENOMEM;
	} else {
		if (column_header(v, ui, width, lw))
			return -ENOMEM;
		for (int i = ui->first; i < v->nr_items && nr_rows < avail; i++, nr_rows++) {
			if (item_line(v, d, ui, i, width, lw))
				return -ENOMEM;
		}
		if (!v->nr_items &&
		    linef(v, width, 0, "  (%s)", ui->have_re ? "no row matches the filter" :
			  ui->level == LV_VMS ? "no exits yet" : "no exits here yet"))
			return -ENOMEM;
	}
	if (!ui->interactive)
		return 0;
	/* The status line goes on the screen's last line. */
	while (ui->height > 0 && v->nr_lines < ui->height - 1) {
		if (!add_line(v, 0))
			return -ENOMEM;
	}
	return status_line(v, ui, width, avail);
}

/* linef() for top_stacks.c. */
int top_linef(struct top_view *v, int width, unsigned int attr, const char *fmt, ...)
{
	char tmp[TOP_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	return linef(v, width, attr, "%s", tmp);
}
