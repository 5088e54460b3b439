// SPDX-License-Identifier: GPL-2.0
#include "inflight.h"

__u64 inflight_age(const struct inflight_exit *e, __u64 now_ns)
{
	if (e->end_ns)
		return e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
	return now_ns > e->start_ns ? now_ns - e->start_ns : 0;
}

bool inflight_stuck(const struct inflight_exit *e, __u64 now_ns, __u64 stuck_ns)
{
	return !e->end_ns && !e->completed && inflight_age(e, now_ns) >= stuck_ns;
}

void inflight_split(const struct inflight_exit *e, __u64 now_ns, __u64 *oncpu, __u64 *blocked,
		    __u64 *runq)
{
	__u64 age = inflight_age(e, now_ns), end = e->end_ns ? e->end_ns : now_ns;
	__u64 b = e->blocked_ns, r = e->runq_ns;

	if (e->off_ts && end > e->off_ts) {
		if (e->off_runq)
			r += end - e->off_ts;
		else
			b += end - e->off_ts;
	}
	/* As the kernel clamps a completed exit's split: two CPUs' clocks may differ a little. */
	if (b > age)
		b = age;
	if (r > age - b)
		r = age - b;
	*blocked = b;
	*runq = r;
	*oncpu = age - b - r;
}
