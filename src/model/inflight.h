/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exits in flight: started and not yet completed, as the kernel's statistics cells show them.
 * The live side (tracker, live events) reads them; stat, top, stream and the exporter show them.
 */
#ifndef VMEXIT_INFLIGHT_H
#define VMEXIT_INFLIGHT_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * An exit that had not completed at a sample. Its age is the sample's CLOCK_MONOTONIC time minus
 * start_ns, or end_ns - start_ns when its thread exited in it (then it never completes, and it
 * is listed once, at the first sample after the thread's end). Or (completed) one that took
 * stuck_ns or more and completed since the last sample: end_ns - start_ns is its latency.
 */
struct inflight_exit {
	__u32 tgid;
	__u32 tid;
	__u64 proc_start;		/* the process's start time, as in row_key.start */
	__s32 vcpu;			/* resolved as for rows; -1 unknown */
	__u32 isa;
	__u32 reason;
	__u64 start_ns;
	__u64 end_ns;			/* 0: still in flight */
	/* --split (the cell's if_* fields): off CPU until the thread's last context switch, and
	 * since when it has been off CPU (0: on CPU); all 0 when it has not left its CPU. */
	__u64 blocked_ns;
	__u64 runq_ns;
	__u64 off_ts;
	bool off_runq;
	bool completed;
	/* completed: exits of the thread and reason that took stuck_ns or more, this one the
	 * longest of them; else 1. */
	__u64 nr;
};

/* Its age at now_ns (CLOCK_MONOTONIC); for an exit its thread ended in, its age then. */
__u64 inflight_age(const struct inflight_exit *e, __u64 now_ns);
/*
 * --split: its age at now_ns as on CPU + blocked + runq, exactly (the time since its thread
 * left the CPU goes to blocked or runq, as the kernel will count it).
 */
void inflight_split(const struct inflight_exit *e, __u64 now_ns, __u64 *oncpu, __u64 *blocked,
		    __u64 *runq);
/* Still in flight (its thread lives, it has not completed) and for stuck_ns or more at now_ns. */
bool inflight_stuck(const struct inflight_exit *e, __u64 now_ns, __u64 stuck_ns);

#endif /* VMEXIT_INFLIGHT_H */
