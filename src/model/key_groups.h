/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --by key by device: the rows of ports and MMIO addresses summed per device region, as the
 * table shows them unless --per-address asks for each key. With the guest's QEMU map (--qmp),
 * a key goes to the flat range that holds it (`vga-lowmem`, 0xa0000-0xbffff); a key the map
 * has nothing at stays alone (ports) or goes to its page (MMIO). Without a map, ports stay
 * per port (a port is a register of a device already) and MMIO addresses go to the built-in
 * window that holds them (ioapic, hpet, lapic), else to their KEY_MMIO_PAGE_SHIFT page: a VGA
 * text console's byte writes are a handful of rows, not one per byte. Every other key kind
 * (MSR, CPUID leaf, ...) stays as it is.
 */
#ifndef VMEXIT_KEY_GROUPS_H
#define VMEXIT_KEY_GROUPS_H

#include "rows.h"

struct qmp_names;

#define KEY_MMIO_PAGE_SHIFT	12	/* MMIO grouped by 4 KiB page where nothing names it */

/* The span [*lo, *hi] that key k of guest (tgid, start) is grouped into (lo == hi: alone). */
void key_group_span(struct qmp_names *q, __u32 tgid, __u64 start, const struct key_note *k,
		    __u64 *lo, __u64 *hi);
/*
 * out (empty, initialised) = in's rows with each port / MMIO key summed into its span's row
 * (key.key the span's first key, key_end its last), in's other rows as they are. q may be
 * NULL (no maps). 0 or -ENOMEM.
 */
int key_groups_build(const struct row_table *in, struct qmp_names *q, struct row_table *out);

#endif /* VMEXIT_KEY_GROUPS_H */
