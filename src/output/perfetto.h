/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Chrome trace-event JSON for ui.perfetto.dev and chrome://tracing (`vmexit stream --perfetto
 * FILE`, `vmexit report --perfetto FILE`).
 *
 * What the trace shows:
 *  - one process per VM: pid = VMM tgid, process_name = guest name (perfetto_guest);
 *  - per vCPU two thread tracks, "vCPU N" with the kvm exits (cat "kvm_exit") and right below
 *    it "vCPU N (VMM)" with the userspace exits (cat "kvm_userspace_exit"). A kvm exit that is
 *    handled in the VMM contains that userspace exit in time; on one track the two would have
 *    to nest perfectly, and a pair matched across a lost event would overlap partially, which
 *    the importers resolve by dropping or misplacing slices. Separate tracks never overlap
 *    (each holds one thread's strictly sequential exits) and still line up vertically.
 *    tids are synthetic, unique per (tgid, vcpu, track), assigned in order of appearance;
 *    the real thread id is in each slice's args. Exits of a thread whose vCPU is not known yet
 *    (vcpu -1) go to the vCPU's track once any event told which vCPU the thread runs, and to a
 *    "thread TID" track before that;
 *  - every exit is a complete event ("ph":"X"), ts/dur in microseconds with three decimals
 *    (ns precision) on the events' CLOCK_MONOTONIC clock (see perfetto_time_base), named
 *    after the reason,
 *    args: reason, isa, rip, info1, info2, intr_info, error_code, latency_ns, cpu, tid
 *    (64-bit values as hex strings: JSON numbers are doubles);
 *  - TSC offset writes are instant events on the vCPU track with the previous and next
 *    offset; at close each vCPU's thread_name metadata also carries its latest offset
 *    ("tsc_offset", signed decimal string), for aligning guest-side TSC traces;
 *  - the other kvm tracepoints (--kvm-events) are instant events on the vCPU track, named
 *    after the tracepoint ("kvm_pio"), cat "kvm_event", args: the event's named fields
 *    (reasons.h) plus cpu, tid, vcpu; they are not exits and the rates leave them out;
 *  - --wake's deliveries (stream live, report of a recording) are flows on the vCPU's kvm track,
 *    its halts slices there inside the exits that halted, with their pieces nested
 *    (halt_slices.h); each needs only its own event, so a stream draws them as they come;
 *  - each VM has an "exits/s" counter track (guest exits, exits to the VMM), one value per
 *    100 ms window of the exits' start times, as perf stat -I would give;
 *  - the events of a guest's own trace (report --guest-trace) on tracks "guest ..." of their
 *    own in the VM's process, above its vCPUs (cat "guest"), their phases kept;
 *  - lost records are global instant events; counters from perf stat (report --counters)
 *    global counter events, one name each.
 * The output is the JSON Array Format, one event per line: close adds the final ']', and a file
 * cut short before that (kill -9) still loads in both UIs, which accept a missing ']'.
 * Memory is constant apart from one small entry per VM, vCPU and thread.
 */
#ifndef VMEXIT_PERFETTO_H
#define VMEXIT_PERFETTO_H

#include <stdio.h>
#include <linux/types.h>

#include "vmexit.h"

struct perfetto_writer;

/* Starts the trace on f (which the caller closes after perfetto_close). NULL on ENOMEM. */
struct perfetto_writer *perfetto_open(FILE *f);
/*
 * Timestamps are CLOCK_MONOTONIC by default, so the trace lines up with other traces on that
 * clock (perf --clock-id=monotonic, guest traces shifted by the TSC offset). The text is exact,
 * but the UIs read ts in us as a double, which resolves 1 ns only up to about 26 days of uptime
 * (2 ns to 52 days, ...): a caller that prefers exactness to alignment sets a base (e.g. the
 * recording's start) that is subtracted from every timestamp.
 */
void perfetto_time_base(struct perfetto_writer *w, __u64 base_ns);
/* Names a VM; may come before or after its events, and again to rename it. */
void perfetto_guest(struct perfetto_writer *w, __u32 tgid, const char *name);
/* One event; name NULL means the reason's name (reason_str()). TSC offset and kvm events too. */
void perfetto_event(struct perfetto_writer *w, const struct vmexit_event *ev, const char *name);
/* n records were lost around ts_ns (what: a short reason, e.g. "ring buffer full", or NULL). */
void perfetto_lost(struct perfetto_writer *w, __u64 ts_ns, __u64 n, const char *what);
/* A value of an outside counter (report --counters): a "C" event of pid 0, args {"value"}. */
void perfetto_counter(struct perfetto_writer *w, const char *name, __u64 ts_ns, double value);
struct trace_guest_event;
/* An event of a guest's own trace, on its guest track (announced the first time). */
void perfetto_guest_event(struct perfetto_writer *w, const struct trace_guest_event *e);
/* An exit in flight for a while (stream --stuck): a global instant named by what. */
void perfetto_stuck(struct perfetto_writer *w, __u64 ts_ns, const char *what);
/* Writes per-vCPU metadata and the closing ']', flushes, frees. 0 or -errno (-EIO). */
int perfetto_close(struct perfetto_writer *w);

#endif /* VMEXIT_PERFETTO_H */
