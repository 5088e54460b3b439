/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A guest-side trace in Chrome trace-event JSON (report --guest-trace), as `uftrace dump
 * --chrome` writes it: {"traceEvents":[...], ...} or a bare array, each event an object
 *	{"ts":12.345,"ph":"B","pid":1,"tid":1,"name":"main","dur":1.5,"args":{...}}
 * The numbers ts and dur are read exactly as fixed point with three decimals, returned times
 * 1000: in µs that is ns; in a trace stamped with TSC ticks the convention (the trace merger
 * vmexit grew from, a uftrace patched to record the TSC) is ticks / 1000, so times 1000 it is
 * ticks again. Events of phases B, E, X, i / I are returned; metadata (M) and the others are
 * skipped. args.vcpu, when present, says which vCPU ran the event.
 */
#ifndef VMEXIT_GUEST_TRACE_H
#define VMEXIT_GUEST_TRACE_H

#include <stddef.h>
#include <linux/types.h>

struct guest_trace_event {
	char ph;		/* 'B', 'E', 'X' or 'i' ('I' is returned as 'i') */
	__u64 ts;		/* the ts number times 1000 */
	__u64 dur;		/* 'X': the dur number times 1000 */
	const char *name;	/* "" when absent; valid during the call */
	__s64 pid, tid;		/* -1 when absent */
	__s32 vcpu;		/* args.vcpu, -1 when absent */
	unsigned int line;	/* where the event starts, for messages */
};

typedef int (*guest_trace_fn)(void *ctx, const struct guest_trace_event *e);

/*
 * Reads path, calling fn for each event in file order (fn's non-zero return stops the read and
 * is returned). 0, fn's error, -EINVAL with err "PATH:LINE: what is wrong" (a file cut short:
 * "PATH: offset N: ends inside ...: truncated"), or -errno with err filled. The file is parsed
 * as it is read: memory does not grow with it (a pipe or a character device is read the same).
 * A time (ts, dur, ts + dur) past 18446744073709551.615, the number times 1000 past 2^64 - 1,
 * is refused.
 */
int guest_trace_read(const char *path, guest_trace_fn fn, void *ctx, char *err, size_t errlen);

/* Who wrote the file: its precision differs (README "Guest traces"). */
enum guest_trace_kind {
	GUEST_TRACE_JSON,	/* Chrome JSON of another writer (a TSC-stamped trace) */
	GUEST_TRACE_UFTRACE,	/* uftrace dump --chrome (metadata.version): ns of its clock */
	GUEST_TRACE_TRACEDAT,	/* trace-cmd's trace.dat */
};

/* guest_trace_read(), and who wrote the file in *kind (known once the whole file is read). */
int guest_trace_read_kind(const char *path, guest_trace_fn fn, void *ctx,
			  enum guest_trace_kind *kind, char *err, size_t errlen);

/*
 * The same over len bytes at data (a Chrome JSON trace), name standing for the file in
 * messages. The reader never looks past data + len.
 */
int guest_trace_read_mem(const char *name, const void *data, size_t len, guest_trace_fn fn,
			 void *ctx, char *err, size_t errlen);

/*
 * The same for a guest's own trace-cmd trace.dat recorded with -C x86-tsc (guest_trace_read()
 * hands one over, told by its first bytes): each record an instant ('i') named "system:event",
 * ts its guest TSC, vcpu the guest CPU it was taken on, line its number in the file.
 */
int guest_tracedat_read(const char *path, guest_trace_fn fn, void *ctx, char *err,
			size_t errlen);

#endif /* VMEXIT_GUEST_TRACE_H */
