// SPDX-License-Identifier: GPL-2.0
/* A trace.dat checked, and its formats tried in a child, before it is opened (tracedat_guard.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <trace-cmd.h>
#include "crash_guard.h"
#include "tracedat_guard.h"
#include "tracedat_layout.h"

/* The marks for "libtracecmd opens the file", after every format was parsed, then "opens its
 * buffer instances" (trace-cmd record -B), which the reader opens too (import_tracedat.c). */
#define MARK_OPEN	UINT64_MAX
#define MARK_INSTANCES	(UINT64_MAX - 1)

struct probe {
	const char *path;
	const struct tracedat_layout *l;
};

/* In the child: each format as libtracecmd will parse it, then libtracecmd's own open. */
static int probe(struct crash_guard *g, void *arg)
{
	const struct probe *p = arg;
	const struct tracedat_layout *l = p->l;
	struct tep_handle *tep = tep_alloc();
	struct tracecmd_input *in;

	if (!tep)
		return 1;
	tep_set_file_bigendian(tep, l->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
	tep_set_long_size(tep, (int)l->long_size);
	tep_set_page_size(tep, (int)l->page_size);
	for (size_t i = 0; i < l->nr_fmt; i++) {
		const struct tracedat_format *f = &l->fmt[i];
		char *text = (char *)l->map + f->off;

		crash_guard_at(g, f->off);
		/* What it makes of a format does not matter here, only that it survives. */
		if (f->system)
			tep_parse_event(tep, text, f->size, f->system);
		else
			tep_parse_header_page(tep, text, f->size, (int)l->long_size);
	}
	crash_guard_at(g, MARK_OPEN);
	tracecmd_set_loglevel(TEP_LOG_NONE);
	in = tracecmd_open(p->path, TRACECMD_FL_LOAD_NO_PLUGINS);
	if (!in)
		return 1;
	/*
	 * libtracecmd 3.1 (Debian 12's) closes an instance it failed to set up as if it had
	 * been set up (tracecmd_buffer_instance_handle()'s error path), which dereferences NULL
	 * on a damaged instance section: found by tests/fuzz/run-capture_mutants.sh.
	 */
	crash_guard_at(g, MARK_INSTANCES);
	for (int i = 0, n = tracecmd_buffer_instances(in); i < n; i++) {
		struct tracecmd_input *inst = tracecmd_buffer_instance_handle(in, i);

		if (inst)
			tracecmd_close(inst);
	}
	tracecmd_close(in);
	return 0;
}

int tracedat_guard(const char *path, char *err, size_t errlen)
{
	struct tracedat_layout l;
	struct crash_guard_result r;
	struct probe p = { .path = path, .l = &l };
	char how[48];
	int ret;

	if (tracedat_layout_read(path, &l, err, errlen))
		return -1;
	ret = crash_guard_run(probe, &p, &r);
	tracedat_layout_free(&l);
	if (ret) {
		snprintf(err, errlen, "%s: cannot start a process to check it: %s", path,
			 strerror(-ret));
		return -1;
	}
	if (r.done)
		return 0;
	crash_guard_death(&r, how, sizeof(how));
	if (r.marked && r.mark == MARK_INSTANCES)
		snprintf(err, errlen, "%s: damaged trace.dat: libtracecmd failed opening its "
			 "buffer instances (%s, in a child process), past the checks of its header "
			 "and sections", path, how);
	else if (r.marked && r.mark != MARK_OPEN)
		snprintf(err, errlen, "%s: offset %llu: damaged trace.dat: libtraceevent failed "
			 "parsing the event format there (%s, in a child process)", path,
			 (unsigned long long)r.mark, how);
	else
		/* Its header and sections checked out: the library does not say where it was. */
		snprintf(err, errlen, "%s: damaged trace.dat: libtracecmd failed reading it (%s, "
			 "in a child process), past the checks of its header and sections", path,
			 how);
	return -1;
}
