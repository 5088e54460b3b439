/* SPDX-License-Identifier: GPL-2.0 */
/* The record format's little-endian fields, whatever the host is (docs/record-format.md). */
#ifndef VMEXIT_RECORD_LE_H
#define VMEXIT_RECORD_LE_H

#include <string.h>
#include <linux/types.h>

static inline void put16(unsigned char *p, __u16 v)
{
	p[0] = v;
	p[1] = v >> 8;
}

static inline void put32(unsigned char *p, __u32 v)
{
	__u32 le = __builtin_bswap32(v);

	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
		le = v;
	memcpy(p, &le, 4);
}

static inline void put64(unsigned char *p, __u64 v)
{
	__u64 le = __builtin_bswap64(v);

	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
		le = v;
	memcpy(p, &le, 8);
}

static inline __u16 get16(const unsigned char *p)
{
	return p[0] | (__u16)p[1] << 8;
}

static inline __u32 get32(const unsigned char *p)
{
	__u32 v;

	memcpy(&v, p, 4);
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap32(v);
}

static inline __u64 get64(const unsigned char *p)
{
	__u64 v;

	memcpy(&v, p, 8);
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap64(v);
}

#endif /* VMEXIT_RECORD_LE_H */
