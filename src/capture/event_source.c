// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_source.h"
#include "tracedat_file.h"

/* The first bytes of each kind: trace-cmd's (tracedat_file.h), perf's "PERFILE2". */
static const char tracedat_magic[] = TRACEDAT_MAGIC;
static const char perf_magic[] = "PERFILE2";

struct record_source {
	struct event_source s;
	struct rec_reader *rd;
};

static int record_next(struct event_source *s, struct rec_item *item, char *err, size_t errlen)
{
	return rec_reader_next(((struct record_source *)s)->rd, item, err, errlen);
}

static const char *record_reason_name(struct event_source *s, __u32 isa, __u32 reason)
{
	return rec_reader_reason_name(((struct record_source *)s)->rd, isa, reason);
}

static void record_close(struct event_source *s)
{
	rec_reader_close(((struct record_source *)s)->rd);
	free(s);
}

static __u64 record_skipped(struct event_source *s, __u16 *first_type)
{
	return rec_reader_skipped(((struct record_source *)s)->rd, first_type);
}

static const struct event_source_ops record_ops = {
	.next = record_next, .reason_name = record_reason_name, .close = record_close,
	.skipped = record_skipped,
};

static struct event_source *record_source_open(const char *path, char *err, size_t errlen)
{
	struct record_source *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return NULL;
	}
	r->rd = rec_reader_open(path, err, errlen);
	if (!r->rd) {
		/* The file is none of the three kinds report reads: say all three. */
		if (strstr(err, ": offset 0: bad magic"))
			snprintf(err, errlen, "%s: offset 0: not a vmexit recording, a trace-cmd "
				 "trace.dat or a perf.data (its first bytes are none of theirs)",
				 path);
		free(r);
		return NULL;
	}
	r->s.ops = &record_ops;
	r->s.meta = *rec_reader_meta(r->rd);
	return &r->s;
}

struct event_source *event_source_open(const char *path, char *err, size_t errlen)
{
	char head[sizeof(tracedat_magic)] = "";
	size_t n = 0;
	FILE *f;

	/* Standard input cannot be read twice: only vmexit's own recordings come through it. */
	if (strcmp(path, "-")) {
		f = fopen(path, "rb");
		if (!f) {
			snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
			return NULL;
		}
		n = fread(head, 1, sizeof(head) - 1, f);
		fclose(f);
	}
	if (n >= sizeof(tracedat_magic) - 1 && !memcmp(head, tracedat_magic, n))
		return tracedat_source_open(path, err, errlen);
	if (n >= sizeof(perf_magic) - 1 && !memcmp(head, perf_magic, sizeof(perf_magic) - 1))
		return perf_source_open(path, err, errlen);
	return record_source_open(path, err, errlen);
}
