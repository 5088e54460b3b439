/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record's reads of each traced vCPU's TSC offset and scaling as KVM applies them (KVM's
 * debugfs, kvm_tsc_state.h) into the recording: at its start (guests already running: no
 * kvm_write_tsc_offset will ever say theirs), when a VMM is first seen, and after each traced
 * offset write (what KVM made of it). report --guest-trace places guest times by them.
 */
#ifndef VMEXIT_RECORD_TSC_H
#define VMEXIT_RECORD_TSC_H

#include <stdbool.h>
#include <linux/types.h>

#include "event_filter.h"
#include "record_file.h"

struct record_tsc {
	struct rec_writer *w;
	const struct event_filter *f;	/* the traced VMMs (-p, -g) and vCPU (-c) */
	bool off;			/* nothing to read (no TSC, no debugfs): said once */
};

/* The start: says once when debugfs cannot be read (and how to mount it), then reads every
 * traced VM. on: the host has a TSC (an arm64 host has neither TSC nor offsets). 0 or the
 * writer's error. */
int record_tsc_start(struct record_tsc *t, bool on);
/* A VMM seen for the first time: its vCPUs. */
int record_tsc_guest(struct record_tsc *t, __u32 tgid);
/* After the traced offset write ev (type VMEXIT_EV_TSC_OFFSET): its vCPU. */
int record_tsc_write(struct record_tsc *t, const struct vmexit_event *ev);

#endif /* VMEXIT_RECORD_TSC_H */
