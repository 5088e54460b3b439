/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kvm tracepoint records of another tool's capture (trace-cmd, perf), made into the events
 * vmexit's own programs would have sent: each kvm_exit completed by its thread's next kvm_entry,
 * each kvm_userspace_exit by the thread's next KVM_RUN (kvm_fpu load, as on the live side), TSC
 * offset writes and the kvm events of VMEXIT_KVM_EVENTS as they come. Exits left open at the
 * end are sent in flight, aged to the capture's last timestamp. What a capture lacks (no
 * kvm_entry, so no latency; no guest names) is said once on stderr, never made up.
 */
#ifndef VMEXIT_CAPTURE_IMPORT_H
#define VMEXIT_CAPTURE_IMPORT_H

#include <stdbool.h>
#include "event_source.h"

/* One tracepoint record of the capture, as its reader hands it over. */
struct tp_record {
	const char *event;		/* the tracepoint's name without its system: "kvm_exit" */
	__u64 ts_ns;
	__u32 tgid;			/* 0 when the capture does not say */
	__u32 tid;
	__u32 cpu;
	const char *comm;		/* the thread's name, "" when unknown */
	/* A numeric field of the record (sign-extended when signed); false when absent. */
	bool (*field)(const void *ctx, const char *name, __u64 *val);
	const void *ctx;
};

struct capture_import;

/*
 * path and kind ("trace-cmd trace.dat", "perf.data") name the capture in the notes. no_tgid:
 * the capture keeps thread ids only (trace.dat): each thread stands for its own VMM, said once.
 */
struct capture_import *capture_import_new(const char *path, const char *kind, bool no_tgid);
/* Takes one record. 0, or -ENOMEM. */
int capture_import_add(struct capture_import *ci, const struct tp_record *r);
/* The capture's buffers overflowed: n events are missing (a lost record, never silent). */
void capture_import_missed(struct capture_import *ci, __u64 ts_ns, __u64 n);
/* The capture has ended: every exit still open is sent, in flight. */
void capture_import_end(struct capture_import *ci);
/* 1: the next item (in the order the live side would have sent them), 0: none waiting. */
int capture_import_pop(struct capture_import *ci, struct rec_item *item);
/* The notes on what the capture lacks, once each, on stderr. */
void capture_import_notes(struct capture_import *ci);
void capture_import_free(struct capture_import *ci);

#endif /* VMEXIT_CAPTURE_IMPORT_H */
