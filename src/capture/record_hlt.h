/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hlt record (format 1.9, docs/record-format.md): a halt (VMEXIT_EV_HALT) or a halted exit
 * (VMEXIT_EV_HLT) of record --wake, as bpf/wake.bpf.c sends it. u64 ts_ns, latency_ns, the
 * NR_HLT_PARTS parts (poll, sleep, runq, other); u32 tgid, tid; s32 vcpu; u32 type (6 halt,
 * 7 halted exit), n (a halt: VMEXIT_HALT_WAITED | VMEXIT_HALT_VALID; an exit: its halts), cpu.
 */
#ifndef VMEXIT_RECORD_HLT_H
#define VMEXIT_RECORD_HLT_H

#include <stddef.h>
#include "wake.h"

#define HLT_RECORD_LEN		(16 + 8 * NR_HLT_PARTS + 24)

/* ev into the HLT_RECORD_LEN bytes at q. */
void hlt_record_encode(unsigned char *q, const struct vmexit_event *ev);
/*
 * The len bytes at p into ev: 0, or -1 with why (after "hlt record ") when they cannot be a
 * halt or halted exit (too short, another type, flags or halts out of range, parts that do not
 * sum to the latency).
 */
int hlt_record_decode(const unsigned char *p, size_t len, struct vmexit_event *ev, char *why,
		      size_t whylen);

#endif /* VMEXIT_RECORD_HLT_H */
