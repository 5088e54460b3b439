// SPDX-License-Identifier: GPL-2.0
/* `vmexit top`'s text levels (stacks, wake-ups): a scrolled window onto lines counted in full. */
#include <stdarg.h>
#include <stdio.h>
#include "top_view_int.h"

static void vtext(struct top_window *w, unsigned int attr, const char *fmt, va_list ap)
{
	char buf[TOP_LINE_MAX];

	if (w->n >= w->first && w->n - w->first < w->avail && !w->err) {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		w->err = top_linef(w->v, w->width, attr, "%s", buf);
	}
	w->n++;
}

void top_wtext(struct top_window *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vtext(w, 0, fmt, ap);
	va_end(ap);
}

void top_wtext_attr(struct top_window *w, unsigned int attr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vtext(w, attr, fmt, ap);
	va_end(ap);
}

int top_window_lines(struct top_view *v, const struct top_data *d, struct top_ui *ui, int width,
		     int avail, void (*text)(struct top_window *w, const struct top_data *d,
					     const struct top_ui *ui))
{
	struct top_window w = { .v = v, .width = width, .avail = 0 };

	text(&w, d, ui);
	v->nr_text = w.n;
	if (ui->first > w.n - avail)
		ui->first = w.n - avail;
	if (ui->first < 0)
		ui->first = 0;
	w = (struct top_window){ .v = v, .width = width, .first = ui->first, .avail = avail };
	text(&w, d, ui);
	return w.err;
}
