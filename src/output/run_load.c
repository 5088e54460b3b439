// SPDX-License-Identifier: GPL-2.0
/* A run read from a recording, an import or stat --json (run_load.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_rows.h"
#include "event_source.h"
#include "name_cache.h"
#include "rip_rows.h"
#include "run_load.h"
#include "stat_json_read.h"
#include "time_span.h"

static const char *cached_name(void *ctx, __u32 tgid, __u64 start)
{
	return name_cache_get_at(ctx, tgid, start);
}

struct loader {
	struct row_table rows;		/* by vCPU, with keys where the file has them */
	struct row_table rips;		/* by VM, keyed by the guest RIP (rip_rows.h) */
	struct name_cache names;
	struct time_span span;		/* as report's */
};

static int keep_stack(struct loader *l, struct run_profile *p, const struct stack_row *s)
{
	/* The name of the guest at the stack's process start; the file names it before. */
	return run_profile_add_stack(p, name_cache_get_at(&l->names, s->tgid, s->proc_start),
				     s->isa, s->reason, s->frames, s->nr_frames, s->ns, s->count);
}

/* The items of a recording or capture, as report reads them. */
static int load_events(const char *path, struct loader *l, struct run_profile *p,
		       struct run_load_info *info, char *err, size_t errlen)
{
	struct event_source *rd = event_source_open(path, err, errlen);
	struct rec_item *it = calloc(1, sizeof(*it));
	int n = 0, ret = 0;

	if (!rd || !it) {
		if (rd)
			snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		event_source_close(rd);
		free(it);
		return -1;
	}
	p->kind = rd->clock ? "capture" : "recording";
	info->keyless = !rd->meta.keys;
	info->splitless = !rd->meta.split;
	while (!ret && (n = event_source_next(rd, it, err, errlen)) == 1) {
		__u64 start;
		struct key_note k;

		switch (it->kind) {
		case REC_GUEST:
			ret = name_cache_set_at(&l->names, it->tgid, it->start, it->name);
			break;
		case REC_EVENT:
			time_span_note(&l->span, it->ev.ts_ns + it->ev.latency_ns);
			start = name_cache_start_at_time(&l->names, it->ev.tgid, it->ev.ts_ns);
			ret = event_rows_add(&l->rows, BY_VCPU, &it->ev, start, rd->meta.keys);
			rip_event_key(&it->ev, &k);
			if (!ret && k.kind == KEY_RIP)
				ret = event_rows_add_key(&l->rips, BY_VM, &it->ev, start, &k);
			info->events++;
			break;
		case REC_LOST:
			if (it->ts_ns)
				time_span_note(&l->span, it->ts_ns);
			for (int i = 0; i < NR_LOST; i++)
				info->lost[i] += it->lost[i];
			break;
		case REC_STACK:
			ret = keep_stack(l, p, &it->stack);
			break;
		default:
			break;
		}
	}
	/* What the file was recorded with, whether or not its exits show it. */
	p->keys |= rd->meta.keys;
	p->split |= rd->meta.split;
	p->span_s = time_span_s(&l->span, rd->meta.mono_ns);
	event_source_close(rd);
	free(it);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return -1;
	}
	return n < 0 ? -1 : 0;
}

int run_load(const char *path, struct run_profile *p, struct run_load_info *info, char *err,
	     size_t errlen)
{
	struct loader l = {};
	int rc;

	memset(info, 0, sizeof(*info));
	row_table_init(&l.rows);
	row_table_init(&l.rips);
	if (strcmp(path, "-") && stat_json_looks(path)) {
		p->kind = "stat --json";
		rc = stat_json_read(path, &l.rows, &l.names, &p->span_s, err, errlen);
	} else {
		rc = load_events(path, &l, p, info, err, errlen);
	}
	/* What was read before any damage still counts, as report prints it. */
	if (run_profile_add_rows(p, &l.rows, cached_name, &l.names) ||
	    run_profile_add_rows(p, &l.rips, cached_name, &l.names)) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		rc = -1;
	}
	row_table_free(&l.rows);
	row_table_free(&l.rips);
	name_cache_free(&l.names);
	return rc;
}
