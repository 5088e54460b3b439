/* SPDX-License-Identifier: GPL-2.0 */
/* Protobuf read back by the exposition tests: one varint decoder for them all. */
#ifndef VMEXIT_TEST_PB_VARINT_H
#define VMEXIT_TEST_PB_VARINT_H

#include <linux/types.h>

/* A varint at *p (below end), *p moved past it; ~0 (and *p = end) past the end. */
static inline __u64 varint(const __u8 **p, const __u8 *end)
{
	__u64 v = 0;

	for (int shift = 0; *p < end && shift < 64; shift += 7) {
		__u8 c = *(*p)++;

		v |= (__u64)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	*p = end;
	return ~0ULL;
}

#endif
