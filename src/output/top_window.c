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
