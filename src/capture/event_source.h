/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What `vmexit report -i FILE` reads events from, told by the file's content: vmexit's own
 * recording (record_file.h), a trace-cmd trace.dat or a perf.data of kvm tracepoints
 * (capture_import.h turns their records into the same items). Every report output works from
 * any of them; errors are one line naming the file, as record_file.h's.
 */
#ifndef VMEXIT_EVENT_SOURCE_H
#define VMEXIT_EVENT_SOURCE_H

#include <stddef.h>
#include "lost_causes.h"
#include "record_file.h"

struct event_source;

struct event_source_ops {
	/* As rec_reader_next(): 1 item, 0 clean end, -1 damaged (err: "PATH: offset N: what"). */
	int (*next)(struct event_source *s, struct rec_item *item, char *err, size_t errlen);
	/* The writer's name of a reason, or NULL (captures name none: the built-in tables do). */
	const char *(*reason_name)(struct event_source *s, __u32 isa, __u32 reason);
	void (*close)(struct event_source *s);
	/* Records of kinds this vmexit does not know, skipped (rec_reader_skipped()); may be
	 * NULL: a capture skips none unsaid. */
	__u64 (*skipped)(struct event_source *s, __u16 *first_type);
};

struct event_source {
	const struct event_source_ops *ops;
	struct rec_meta meta;		/* what the file says of its host and clocks; 0 unknown */
	/* The clock of the events' timestamps as the capture says ("trace_clock_local",
	 * "perf_clock"); NULL: CLOCK_MONOTONIC, vmexit's own. */
	const char *clock;
	enum lost_source lost_source;	/* who took the events, for the fix of a loss */
};

/*
 * Opens path ("-": standard input, a vmexit recording) and tells its kind by its first bytes.
 * NULL with a one-line message in err on failure.
 */
struct event_source *event_source_open(const char *path, char *err, size_t errlen);

static inline int event_source_next(struct event_source *s, struct rec_item *item, char *err,
				    size_t errlen)
{
	return s->ops->next(s, item, err, errlen);
}

static inline const char *event_source_reason_name(struct event_source *s, __u32 isa,
						   __u32 reason)
{
	return s->ops->reason_name ? s->ops->reason_name(s, isa, reason) : NULL;
}

static inline __u64 event_source_skipped(struct event_source *s, __u16 *first_type)
{
	return s->ops->skipped ? s->ops->skipped(s, first_type) : 0;
}

/* The name of the events' clock, for headers and messages: "CLOCK_MONOTONIC" for our own. */
static inline const char *event_source_clock(const struct event_source *s)
{
	return s->clock ? s->clock : "CLOCK_MONOTONIC";
}

static inline void event_source_close(struct event_source *s)
{
	if (s)
		s->ops->close(s);
}

/* The importers event_source_open() hands a capture to (capture_import.h's engine behind). */
struct event_source *tracedat_source_open(const char *path, char *err, size_t errlen);
struct event_source *perf_source_open(const char *path, char *err, size_t errlen);

#endif /* VMEXIT_EVENT_SOURCE_H */
