/* SPDX-License-Identifier: GPL-2.0 */
/*
 * top --kvm-events: the kernel's records of other kvm tracepoints (kvm_pio, kvm_inj_virq...)
 * read from the session's ring buffer, as stream reads them, and only counted: rows keyed
 * tgid x vCPU x TOP_ISA_KVM_EVENT x event id, which top's model lists beside the exits.
 */
#ifndef VMEXIT_KVM_EVENT_COUNTS_H
#define VMEXIT_KVM_EVENT_COUNTS_H

#include "rows.h"
#include "session.h"

struct ring_buffer;

struct kvm_event_counts {
	struct ring_buffer *rb;
	struct row_table rows;		/* counted since the last kvm_event_counts_take() */
	__s32 vcpu;			/* -c: a record whose vCPU is unknown cannot pass it */
	int err;
};

/* Reads s's ring buffer (opened with kvm_events set). 0, or -errno (said on stderr). */
int kvm_event_counts_open(struct kvm_event_counts *c, struct session *s, __s32 vcpu);
/*
 * Waits up to timeout_ms for a wakeup, then counts every record waiting: woken or not, as the
 * kernel wakes readers per batch (event_submit). 0, or -errno.
 */
int kvm_event_counts_poll(struct kvm_event_counts *c, int timeout_ms);
/* Adds the counts since the last take into a table (top: the interval's rows), starts anew. */
int kvm_event_counts_take(struct kvm_event_counts *c, struct row_table *into);
void kvm_event_counts_close(struct kvm_event_counts *c);

#endif /* VMEXIT_KVM_EVENT_COUNTS_H */
