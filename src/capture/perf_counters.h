/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `perf stat -I MS -x, ...` output (report --counters FILE), read line by line into counter
 * values on the recording's clock:
 *
 *   # started on Thu Nov 26 15:11:31 2026
 *
 *        0.103815157,1.27,msec,task-clock,1274148,100.00,0.013,CPUs utilized
 *        0.103815157,2,,context-switches,1274148,100.00,1.570,K/sec
 *
 * TIME is when the interval ended, in seconds since perf began counting; with -A/--per-cpu a
 * CPUn (or S0-D0-C1 ...) column comes second, and names the counter with the event. A value
 * "<not counted>" / "<not supported>" is no value. perf stat gives its start only as that
 * wall-clock line, to the second: the caller passes where perf's time 0 is on the
 * recording's clock (from that line, or from the user).
 */
#ifndef VMEXIT_PERF_COUNTERS_H
#define VMEXIT_PERF_COUNTERS_H

#include <stddef.h>
#include <linux/types.h>

/* One interval's count of one counter: from_ns to to_ns on perf's clock (0 = its start). */
struct perf_count {
	__u64 from_ns;
	__u64 to_ns;
	const char *name;	/* "task-clock (msec)", "cycles:G CPU3": valid during the call */
	double value;
};

typedef int (*perf_count_fn)(void *ctx, const struct perf_count *c);

/*
 * Reads path, calling fn for each value in file order (fn's non-zero return stops the read
 * and is returned). *started_s: the "# started on" wall-clock time, seconds since 1970 (0 when
 * the file has none). 0, fn's error, or -EINVAL (err: "PATH:LINE: what is wrong"), -errno.
 */
int perf_counters_read(const char *path, perf_count_fn fn, void *ctx, __s64 *started_s,
		       char *err, size_t errlen);

#endif /* VMEXIT_PERF_COUNTERS_H */
