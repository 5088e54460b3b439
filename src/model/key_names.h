/* SPDX-License-Identifier: GPL-2.0 */
/* Names of keys (--by key): the kinds, the directions, and the built-in device names. */
#ifndef VMEXIT_KEY_NAMES_H
#define VMEXIT_KEY_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include "vmexit.h"

/* "port", "mmio", ... (key_kind in CSV and JSON). */
const char *key_kind_name(__u32 kind);
/* "in", "out", "read", "write", "hv" or "". */
const char *key_dir_name(__u32 dir);
/* The built-in name of the key ("serial", "pci-conf-idx", "EFER"), or "". */
const char *key_builtin_name(const struct key_note *k);
/* The built-in MMIO window holding addr (ioapic, hpet, lapic): true with its bounds. */
bool key_builtin_mmio_range(__u64 addr, __u64 *lo, __u64 *hi);
/* The table's KEY column: "0x3f8 out serial", "(none)", "(other)"; name may be "". */
const char *key_str(const struct key_note *k, const char *name, char *buf, size_t len);

/* The same for a span of keys (key_groups.h), "0xa0000-0xbffff write vga-lowmem"; end 0 or
 * k->key: one key. */
const char *key_span_str(const struct key_note *k, __u64 end, const char *name, char *buf,
			 size_t len);

#endif /* VMEXIT_KEY_NAMES_H */
