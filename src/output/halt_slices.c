// SPDX-License-Identifier: GPL-2.0
/* A recorded halt as Perfetto slices: halt_slices.h. */
#include "halt_slices.h"
#include "hlt_events.h"
#include "wake_rows.h"

const char *const halt_slice_arg[NR_HLT_PARTS] = {
#define HALT_SLICE_ARG(ID, name) [HLT_PART_##ID] = #name "_ns",
	HLT_PARTS(HALT_SLICE_ARG)
#undef HALT_SLICE_ARG
};

void halt_slices_of(const struct vmexit_event *ev, struct halt_slices *hs)
{
	struct vmexit_event e = *ev;
	__u64 sum = 0, at = ev->ts_ns;

	hs->valid = ev->error_code & VMEXIT_HALT_VALID;
	for (int i = 0; i < NR_HLT_PARTS; i++) {
		hs->parts[i] = *hlt_event_part(&e, i);
		sum += hs->parts[i];
	}
	hs->s[0].name = halt_end_name(halt_end_of(ev));
	hs->s[0].ts_ns = ev->ts_ns;
	hs->s[0].dur_ns = ev->latency_ns;
	hs->n = 1;
	if (!(ev->error_code & VMEXIT_HALT_WAITED) || sum != ev->latency_ns)
		return;
	for (int i = 0; i < NR_HLT_PARTS; i++) {
		if (!hs->parts[i])
			continue;
		hs->s[hs->n].name = hlt_part_name(i);
		hs->s[hs->n].ts_ns = at;
		hs->s[hs->n].dur_ns = hs->parts[i];
		hs->n++;
		at += hs->parts[i];
	}
}
