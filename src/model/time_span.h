/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The span of a recording or capture, for its rates and TIME%: from its first to its last
 * timestamp (an exit counts to its end, a lost record to its sampling), or from the time its
 * header gives when it holds no event. report and run_load (diff, explain) read it alike.
 */
#ifndef VMEXIT_TIME_SPAN_H
#define VMEXIT_TIME_SPAN_H

#include <linux/types.h>

struct time_span {
	__u64 first_ns, last_ns;	/* 0: none yet */
};

static inline void time_span_note(struct time_span *s, __u64 ts)
{
	if (!s->first_ns || ts < s->first_ns)
		s->first_ns = ts;
	if (ts > s->last_ns)
		s->last_ns = ts;
}

/* Seconds from the first timestamp (else start_ns, the header's clock) to the last. */
static inline double time_span_s(const struct time_span *s, __u64 start_ns)
{
	__u64 from = s->first_ns ? s->first_ns : start_ns;

	return s->last_ns > from ? (s->last_ns - from) / 1e9 : 0;
}

#endif /* VMEXIT_TIME_SPAN_H */
