// SPDX-License-Identifier: GPL-2.0
/* Event formats parsed for their fields, a crash kept in a child (event_format_parse.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <event-parse.h>
#include "crash_guard.h"
#include "event_format_parse.h"

/* What stands for the print format that was cut: one libtraceevent accepts as is. */
static const char no_print[] = "print fmt: \"\"\n";

/* One format up to its print format, which becomes no_print. */
static void parse_fields(struct tep_handle *tep, const struct event_format_text *f)
{
	static const char tag[] = "\nprint fmt:";
	size_t keep = f->size;
	char *copy;

	for (size_t i = 0; i + sizeof(tag) - 1 <= f->size; i++) {
		if (!memcmp(f->text + i, tag, sizeof(tag) - 1)) {
			keep = i + 1;
			break;
		}
	}
	copy = malloc(keep + sizeof(no_print));
	if (!copy)
		return;
	memcpy(copy, f->text, keep);
	memcpy(copy + keep, no_print, sizeof(no_print));
	tep_parse_event(tep, copy, keep + sizeof(no_print) - 1, f->system);
	free(copy);
}

struct batch {
	struct tep_handle *tep;
	const struct event_format_text *f;
	size_t n;
};

static int parse_all(struct crash_guard *g, void *arg)
{
	const struct batch *b = arg;

	for (size_t i = 0; i < b->n; i++) {
		if (g)
			crash_guard_at(g, b->f[i].off);
		parse_fields(b->tep, &b->f[i]);
	}
	return 0;
}

int event_formats_parse(struct tep_handle *tep, const struct event_format_text *f, size_t n,
			const char *path, const char *kind, char *err, size_t errlen)
{
	struct batch b = { tep, f, n };
	struct crash_guard_result r;
	int ret;

	ret = crash_guard_run(parse_all, &b, &r);
	if (ret) {
		snprintf(err, errlen, "%s: cannot start a process to parse its event formats: %s",
			 path, strerror(-ret));
		return -1;
	}
	if (!r.done) {
		char how[48];

		crash_guard_death(&r, how, sizeof(how));
		snprintf(err, errlen, "%s: offset %llu: damaged %s: libtraceevent failed parsing "
			 "the event format there (%s, in a child process)", path,
			 (unsigned long long)r.mark, kind, how);
		return -1;
	}
	parse_all(NULL, &b);
	return 0;
}
