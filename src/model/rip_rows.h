/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by rip: an exit's guest RIP as a row key (from a recorded event), the guest mode a RIP
 * lies in, and the top N RIPs of each guest x reason with the rest summed as (other).
 */
#ifndef VMEXIT_RIP_ROWS_H
#define VMEXIT_RIP_ROWS_H

#include <stdbool.h>
#include "rows.h"

#define RIP_TOP_DEFAULT	10

/*
 * "kernel" or "user": the half of the address space the RIP is in. Kernels (Linux, Windows,
 * the BSDs; on arm64 the TTBR1 half) map themselves in the upper half and their user space in
 * the lower: the exit record has no privilege level, so this is the rule, and a guest kernel
 * that runs low (as vmexit-guest's code does) reads as "user".
 */
const char *rip_guest_mode(__u64 rip);
/*
 * The key stat --by rip charges ev to: a guest exit's RIP; an exit to the VMM's the RIP of the
 * guest exit that led to it (VMEXIT_UEXIT_RIP), else none.
 */
void rip_event_key(const struct vmexit_event *ev, struct key_note *k);
/*
 * The rows of in (in their order: sorted first) into out (reset first), keeping the first top
 * RIP rows of each guest x [vCPU x] reason and summing the rest into its (other) row, with the
 * exits the kernel already put there. 0 or -ENOMEM.
 */
int rip_rows_top(const struct row_table *in, __u32 top, struct row_table *out);

#endif /* VMEXIT_RIP_ROWS_H */
