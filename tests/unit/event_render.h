/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One event through an output mode into a string, as stream prints it: the event tests compare
 * the lines and JSON whole. Include after check.h and event_output.h; the caller frees it.
 */
#ifndef VMEXIT_TESTS_EVENT_RENDER_H
#define VMEXIT_TESTS_EVENT_RENDER_H

#include <stdio.h>
#include <stdlib.h>

static inline char *render(enum evout_mode mode, const struct vmexit_event *ev,
			   struct name_cache *n)
{
	struct evout_opts opts = { .mode = mode, .names = n };
	char *buf = NULL;
	size_t size = 0;
	struct evout o;
	FILE *f;

	CHECK_EQ_U64(evout_open(&o, &opts), 0);
	f = open_memstream(&buf, &size);
	if (!f)
		abort();
	o.f = f;
	CHECK_EQ_U64(evout_event(&o, ev), 0);
	CHECK_EQ_U64(evout_close(&o), 0);
	fclose(f);
	return buf;
}

#endif
