/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter: which VMMs, vCPU, exit reasons and latencies to keep. One type from the command
 * line (options/filter_options.h) to the kernel's maps (kernel/session.c fills them from
 * session_opts.filter) and, offline, to report's matching (event_filter_match()).
 */
#ifndef VMEXIT_EVENT_FILTER_H
#define VMEXIT_EVENT_FILTER_H

#include <stdbool.h>
#include "filter_limits.h"
#include "reasons.h"
#include "vmexit.h"

struct event_filter {
	int pids[MAX_PID_FILTER];	/* -p, then (live) the VMMs of -g names */
	int nr_pids;			/* 0: every VMM */
	__s32 vcpu;			/* -1: every vCPU */
	struct reason_sel reasons[MAX_REASON_SEL];
	int nr_reasons;			/* 0: every reason */
	__u64 min_latency_ns;		/* exits shorter are dropped */
};

/*
 * Whether ev passes the filter, with the kernel's rules: TSC offset writes and kvm events are
 * kept whatever the reason and latency filters say (they are not exits), exits must pass all.
 */
bool event_filter_match(const struct event_filter *f, const struct vmexit_event *ev);

#endif /* VMEXIT_EVENT_FILTER_H */
