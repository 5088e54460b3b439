/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pieces of the `vmexit top` model share (top_items.c builds the items that
 * top_layout.c lays out, top_keys.c moves through and top_log.c prints); not for callers.
 */
#ifndef VMEXIT_TOP_VIEW_INT_H
#define VMEXIT_TOP_VIEW_INT_H

#include "top_view.h"

/* v's items for the level ui is at, grouped, filtered, sorted, stuck ones marked. */
int top_build_items(struct top_view *v, const struct top_data *d, const struct top_ui *ui);
/* The VMs with any rows, sorted, duplicates dropped; *n of them (NULL with n 0 if none). */
__u32 *top_vm_list(const struct top_data *d, int *n);
/* Is a row of tgid (process start, 0: unknown) in the VM drilled into (any, at the top)? */
bool top_in_view(const struct top_ui *ui, __u32 tgid, __u64 start);
/*
 * LV_STACKS: the column header and the stacks' lines from ui->first (fixed up), at most avail
 * of them; v->nr_text says how many there are. 0 or -ENOMEM.
 */
int top_stack_lines(struct top_view *v, const struct top_data *d, struct top_ui *ui,
		    int width, int avail);
/*
 * The text levels (LV_STACKS, LV_WAKE) scroll lines, not items: all are counted, only those in
 * the window of avail lines from first are built (top_window.c).
 */
struct top_window {
	struct top_view *v;
	int width, first, avail, n;
	int err;
};

void top_wtext(struct top_window *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * The window's lines from ui->first, at most avail, of what text() writes: text() runs twice,
 * once to count (so that ui->first is held where the last line ends the window, as scrolling a
 * list does), once to write; v->nr_text says how many lines there are. 0 or -ENOMEM.
 */
int top_window_lines(struct top_view *v, const struct top_data *d, struct top_ui *ui, int width,
		     int avail, void (*text)(struct top_window *w, const struct top_data *d,
					     const struct top_ui *ui));
/* The same, with TOP_A_* attributes (a header among the lines). */
void top_wtext_attr(struct top_window *w, unsigned int attr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * LV_WAKE: the column header and the deliveries' and halts' lines from ui->first (fixed up),
 * at most avail; v->nr_text says how many there are (top_wake.c). 0 or -ENOMEM.
 */
int top_wake_lines(struct top_view *v, const struct top_data *d, struct top_ui *ui,
		   int width, int avail);
/* A line cut at width columns, names in it escaped (top_layout.c). 0 or -ENOMEM. */
int top_linef(struct top_view *v, int width, unsigned int attr, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
