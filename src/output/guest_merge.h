/* SPDX-License-Identifier: GPL-2.0 */
/*
 * report --guest-trace GUEST=FILE[,clock=ns]: a guest's own trace (guest_trace.h) placed on
 * the recording's clock (guest_clock.h) and written into the Perfetto output as tracks of that
 * guest's process, one per guest thread (per vCPU when its events name one in args.vcpu).
 */
#ifndef VMEXIT_GUEST_MERGE_H
#define VMEXIT_GUEST_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "event_output.h"
#include "guest_clock.h"

#define GUEST_TRACES_MAX	16

struct guest_trace_spec {
	char guest[64];		/* the guest's name, as the recording has it */
	char path[4096];
	/* The trace's times are guest ns (guest TSC / its rate), not TSC ticks: uftrace's
	 * own clock is ns, a TSC-stamped trace's ticks. */
	bool ns;
};

/* Parses "GUEST=FILE[,clock=ns|tsc]"; -EINVAL with err saying what is wrong. */
int guest_trace_spec_parse(const char *arg, struct guest_trace_spec *s, char *err,
			   size_t errlen);

/* What the recording says around the guest's trace. */
struct guest_merge_ctx {
	const char *capture;		/* names the recording in messages */
	__u64 span_from, span_to;	/* tracing began and ended (CLOCK_MONOTONIC) */
	__u64 exit_ns;			/* the guest's median exit, about (0: no exits) */
	bool keep_outside;		/* --keep-outside: a trace wholly outside is a note */
};

/*
 * Writes s's events as events of VM tgid to out, once all of them are placed: says where KVM
 * traced offsets it did not apply, where events fall outside the recording, where the route's
 * error bound exceeds the guest's exits, and a uftrace file read as TSC ticks. 0, or -EINVAL
 * after a one-line message on stderr (a bad file, a vCPU with no offset, every event outside
 * the recording without keep_outside), or out's error.
 */
int guest_merge(const struct guest_trace_spec *s, __u32 tgid, const struct guest_clock *gc,
		const struct guest_merge_ctx *mc, struct evout *out);

#endif /* VMEXIT_GUEST_MERGE_H */
