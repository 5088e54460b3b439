/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A recorded halt (VMEXIT_EV_HALT, record --wake) as slices of a Perfetto trace: the one
 * definition the JSON (perfetto.c) and protobuf (perfetto_proto.c) writers both draw.
 *
 * The halt is a slice on its vCPU's kvm track, from its start for KVM's halt time, named by how
 * it ended (polled, poll_slept, slept), its parts and validity as arguments. It nests inside
 * the exit slice that halted, whichever program set's clock that exit was read on: KVM halts
 * only after kvm_exit's programs returned and ends it before kvm_entry's run. A halt that slept
 * has its pieces as slices nested in it, one after the other from its start: poll, sleep, runq
 * (the scheduler's wake-up to on CPU) and other (on CPU to KVM's end of the halt), so that the
 * wake-up-to-entry time reads on the timeline as runq, other, then the gap to the exit's end.
 * Only pieces of non-zero time, and only when they tile the halt exactly: a halt whose start
 * bpf/wake_common.bpf.h moved back to its first sleep can have pieces longer than KVM's time,
 * and a piece cut to fit would be a time the record does not hold (its arguments still say
 * them). A polled halt is one piece, itself. The halted exit (VMEXIT_EV_HLT) is not drawn: the
 * exit's own slice is it, and the same span from another program set's clock reads would
 * overlap it partially, which Perfetto drops.
 */
#ifndef VMEXIT_HALT_SLICES_H
#define VMEXIT_HALT_SLICES_H

#include <stdbool.h>

#include "wake.h"

struct halt_slice {
	const char *name;	/* a constant: the writers intern names by address */
	__u64 ts_ns;
	__u64 dur_ns;
};

struct halt_slices {
	/* [0] the halt, then its pieces in time order: write them in this order, parent first,
	 * so that an importer sorting by time alone still nests one that starts with it. */
	struct halt_slice s[1 + NR_HLT_PARTS];
	unsigned int n;
	__u64 parts[NR_HLT_PARTS];	/* the record's, as the halt's arguments */
	bool valid;			/* KVM's: the wake-up had something to deliver */
};

/* The argument names of the parts: "poll_ns", ... (include/wake.h's list). */
extern const char *const halt_slice_arg[NR_HLT_PARTS];
/* Category of the halt and its pieces. */
#define HALT_SLICE_CAT	"halt"

/* The slices of halt ev (a VMEXIT_EV_HALT). */
void halt_slices_of(const struct vmexit_event *ev, struct halt_slices *hs);

#endif /* VMEXIT_HALT_SLICES_H */
