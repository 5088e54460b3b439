// SPDX-License-Identifier: GPL-2.0
/* The hlt record's payload, written and checked (record_hlt.h). */
#include <stdio.h>
#include "record_hlt.h"
#include "record_le.h"

void hlt_record_encode(unsigned char *q, const struct vmexit_event *ev)
{
	struct vmexit_event e = *ev;
	__u16 type = VMEXIT_EV_TYPE(ev->type);

	put64(q, e.ts_ns);
	put64(q + 8, e.latency_ns);
	for (int i = 0; i < NR_HLT_PARTS; i++)
		put64(q + 16 + 8 * i, *hlt_event_part(&e, i));
	q += 16 + 8 * NR_HLT_PARTS;
	put32(q, e.tgid);
	put32(q + 4, e.tid);
	put32(q + 8, (__u32)e.vcpu);
	put32(q + 12, type);
	put32(q + 16, type == VMEXIT_EV_HALT ? e.error_code : e.intr_info);
	put32(q + 20, e.cpu);
}

int hlt_record_decode(const unsigned char *p, size_t len, struct vmexit_event *ev, char *why,
		      size_t whylen)
{
	const unsigned char *q = p + 16 + 8 * NR_HLT_PARTS;
	__u64 sum = 0;
	__u32 n;

	if (len < HLT_RECORD_LEN) {
		snprintf(why, whylen, "too short (%zu bytes, need %d)", len, HLT_RECORD_LEN);
		return -1;
	}
	memset(ev, 0, sizeof(*ev));
	ev->ts_ns = get64(p);
	ev->latency_ns = get64(p + 8);
	for (int i = 0; i < NR_HLT_PARTS; i++) {
		__u64 v = get64(p + 16 + 8 * i);

		*hlt_event_part(ev, i) = v;
		if (__builtin_add_overflow(sum, v, &sum)) {
			snprintf(why, whylen, "with parts past 64 bits: corrupt data");
			return -1;
		}
	}
	ev->tgid = get32(q);
	ev->tid = get32(q + 4);
	ev->vcpu = (__s32)get32(q + 8);
	ev->type = get32(q + 12);
	n = get32(q + 16);
	ev->cpu = get32(q + 20);
	if (ev->type != VMEXIT_EV_HALT && ev->type != VMEXIT_EV_HLT) {
		snprintf(why, whylen, "of type %u (%u a halt, %u a halted exit): corrupt data",
			 ev->type, VMEXIT_EV_HALT, VMEXIT_EV_HLT);
		return -1;
	}
	if (ev->type == VMEXIT_EV_HALT && n & ~(VMEXIT_HALT_WAITED | VMEXIT_HALT_VALID)) {
		snprintf(why, whylen, "of a halt with flags 0x%x (at most 0x%x): corrupt data", n,
			 VMEXIT_HALT_WAITED | VMEXIT_HALT_VALID);
		return -1;
	}
	/* A halted exit held one halt at least: bpf/wake.bpf.c sends none without. */
	if (ev->type == VMEXIT_EV_HLT && !n) {
		snprintf(why, whylen, "of a halted exit without a halt: corrupt data");
		return -1;
	}
	if (ev->type == VMEXIT_EV_HALT)
		ev->error_code = n;
	else
		ev->intr_info = n;
	if (sum != ev->latency_ns) {
		snprintf(why, whylen, "whose parts sum to %llu ns, not its latency %llu ns: corrupt "
			 "data", (unsigned long long)sum, (unsigned long long)ev->latency_ns);
		return -1;
	}
	return 0;
}
