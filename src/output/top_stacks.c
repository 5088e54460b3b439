// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top --split --stacks`, the stacks level: the kernel stacks a reason's exits were off
 * CPU with (or every reason's), most time first, each with its time, share and periods and
 * then its frames, innermost first, as stat's STACKS table names them. The kernel keeps one
 * table for the whole run: these are since start (r resets the rows' totals, not these). The
 * level has no items: Up/Down and PgUp/PgDn scroll its lines.
 */
#include <stdio.h>
#include "durations.h"
#include "text_escape.h"
#include "top_view_int.h"

#define W_TIME		9
#define W_SHARE		6
#define W_PERIODS	8

static bool shown(const struct top_data *d, const struct top_ui *ui, const struct stack_row *r)
{
	char label[REASON_STR_MAX + 32];

	if (!top_in_view(ui, r->tgid, r->proc_start) ||
	    (!ui->key_all && (r->isa != ui->key_isa || r->reason != ui->key_reason)))
		return false;
	if (!ui->have_re)
		return true;
	/* -f finds a stack by its guest, its reason or any of its frames. */
	top_reason_label(r->isa, r->reason, label, sizeof(label));
	if (!regexec(&ui->re, label, 0, NULL, 0) ||
	    !regexec(&ui->re, name_cache_get_at(d->names, r->tgid, r->proc_start), 0, NULL, 0))
		return true;
	for (__u32 k = 0; k < r->nr_frames; k++) {
		if (!regexec(&ui->re, r->frames[k], 0, NULL, 0))
			return true;
	}
	return false;
}

/* All the lines, counted; those in the window built. */
static void stack_text(struct top_window *w, const struct top_data *d, const struct top_ui *ui)
{
	const struct stack_table *t = d->stacks;
	char tb[32], nb[TEXT_NAME_MAX], rb[REASON_STR_MAX + 32];
	__u64 ns = 0, count = 0;
	size_t nr = 0;

	for (size_t i = 0; t && i < t->nr; i++) {
		if (shown(d, ui, &t->rows[i])) {
			ns += t->rows[i].ns;
			count += t->rows[i].count;
			nr++;
		}
	}
	if (!nr) {
		top_wtext(w, "  (%s)", ui->have_re ? "no stack matches the filter" :
			  "no time off CPU during these exits yet");
		return;
	}
	top_wtext(w, "  %s off CPU in %llu periods since start, %zu stack%s",
		  fmt_duration(0, ns, tb, sizeof(tb)), (unsigned long long)count, nr,
		  nr == 1 ? "" : "s");
	for (size_t i = 0; i < t->nr; i++) {
		const struct stack_row *r = &t->rows[i];

		if (!shown(d, ui, r))
			continue;
		top_reason_label(r->isa, r->reason, rb, sizeof(rb));
		top_wtext(w, " %*s %*.1f%% %*llu  %s %s", W_TIME,
			  fmt_duration(0, r->ns, tb, sizeof(tb)), W_SHARE - 1,
			  ns ? 100.0 * r->ns / ns : 0, W_PERIODS, (unsigned long long)r->count,
			  text_esc(nb, name_cache_get_at(d->names, r->tgid, r->proc_start)), rb);
		for (__u32 k = 0; k < r->nr_frames; k++)
			top_wtext(w, "      %s", r->frames[k]);
		if (!r->nr_frames)
			top_wtext(w, "      (no kernel frames)");
	}
}

int top_stack_lines(struct top_view *v, const struct top_data *d, struct top_ui *ui,
		    int width, int avail)
{

	v->nr_text = 0;
	if (top_linef(v, width, TOP_A_REVERSE, " %*s %*s %*s  %s", W_TIME, "Off CPU", W_SHARE,
		      "Share", W_PERIODS, "Periods", "Guest and exit; kernel stack, innermost "
		      "frame first"))
		return -ENOMEM;
	return top_window_lines(v, d, ui, width, avail, stack_text);
}
