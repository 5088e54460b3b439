/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Perfetto trace writers behind one table of operations: Chrome trace-event JSON
 * (perfetto.h) and Perfetto's protobuf (perfetto_proto.h). Both draw the same tracks
 * (trace_tracks.h) from the same calls; a new format is one file and one line here.
 */
#ifndef VMEXIT_TRACE_WRITER_H
#define VMEXIT_TRACE_WRITER_H

#include <stdio.h>
#include <linux/types.h>

#include "vmexit.h"

enum trace_format {
	TRACE_AUTO,	/* by the file name: .pftrace, .perfetto-trace, .pb are protobuf */
	TRACE_JSON,
	TRACE_PROTO,
};

/*
 * An event of a guest's own trace (report --guest-trace), already on the host's clock: drawn
 * on a track of its own inside the VM's process, above its vCPUs' tracks.
 */
struct trace_guest_event {
	__u32 tgid;		/* the VM */
	__u32 track;		/* the guest thread's track in the VM, numbered from 0 */
	const char *track_name;	/* "guest tid 7", "guest vCPU 0" */
	char ph;		/* 'B' begin, 'E' end, 'X' complete (dur_ns), 'i' instant */
	__u64 ts_ns;
	__u64 dur_ns;
	const char *name;
};

/* Guest tracks sort above every vCPU track, in the order they were first used. */
#define TRACE_GUEST_SORT(track)	(-(1ll << 20) + (long long)(track))

struct trace_writer_ops {
	const char *name;	/* --perfetto-format's value */
	/*
	 * Starts the trace on f (the caller closes f after close). clock: what the events' times
	 * are, as event_source.h names it ("CLOCK_MONOTONIC", an import's "trace_clock=local",
	 * "perf_clock"...); NULL: CLOCK_MONOTONIC. NULL on ENOMEM.
	 */
	void *(*open)(FILE *f, const char *clock);
	/* Names a VM; before or after its events, and again to rename it. */
	void (*guest)(void *w, __u32 tgid, const char *name);
	/* One event; name NULL: the reason's. */
	void (*event)(void *w, const struct vmexit_event *ev, const char *name);
	/* n records lost around ts_ns (what: a short cause, or NULL). */
	void (*lost)(void *w, __u64 ts_ns, __u64 n, const char *what);
	/* A value of a counter from outside (perf stat): a global counter track per name. */
	void (*counter)(void *w, const char *name, __u64 ts_ns, double value);
	/* An event of a guest's own trace. */
	void (*guest_event)(void *w, const struct trace_guest_event *e);
	/* An exit in flight for a while: a global marker named what. */
	void (*stuck)(void *w, __u64 ts_ns, const char *what);
	/* Finishes the trace, flushes f, frees w: 0 or -errno. */
	int (*close)(void *w);
};

extern const struct trace_writer_ops perfetto_json_ops;
extern const struct trace_writer_ops perfetto_proto_ops;

/* The writer for format (TRACE_AUTO: by path's extension; "-" is JSON). */
const struct trace_writer_ops *trace_writer_for(enum trace_format format, const char *path);

#endif /* VMEXIT_TRACE_WRITER_H */
