/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A protobuf wire-format encoder of just what vmexit writes: varints, length-delimited bytes
 * and nested messages, into a caller's fixed buffer. A nested message reserves room for the
 * longest length it may need and moves its body down when it closes, so every length is its
 * minimal varint (what a protobuf library writes; no padded lengths as protozero's).
 * Writing past the buffer sets `full` and writes nothing more: the caller drops the message.
 */
#ifndef VMEXIT_PROTO_ENC_H
#define VMEXIT_PROTO_ENC_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "text_escape.h"

enum pb_wire { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2 };

/* Nested messages are at most this long: a length of 3 varint bytes (2^21 - 1). */
#define PB_NEST_LEN_BYTES	3

struct pb {
	__u8 *buf;
	__u8 *p;
	__u8 *end;
	bool full;
};

static inline void pb_init(struct pb *b, void *buf, size_t len)
{
	b->buf = b->p = buf;
	b->end = b->buf + len;
	b->full = false;
}

static inline size_t pb_len(const struct pb *b)
{
	return b->p - b->buf;
}

static inline bool pb_room(struct pb *b, size_t n)
{
	if (b->full || (size_t)(b->end - b->p) < n) {
		b->full = true;
		return false;
	}
	return true;
}

static inline void pb_varint(struct pb *b, __u64 v)
{
	if (!pb_room(b, 10))
		return;
	while (v >= 0x80) {
		*b->p++ = (__u8)v | 0x80;
		v >>= 7;
	}
	*b->p++ = (__u8)v;
}

static inline void pb_tag(struct pb *b, __u32 field, enum pb_wire wire)
{
	pb_varint(b, (__u64)field << 3 | wire);
}

/* uint32/uint64/enum/bool fields; an int64 is its two's complement (negative: 10 bytes). */
static inline void pb_uint(struct pb *b, __u32 field, __u64 v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

static inline void pb_double(struct pb *b, __u32 field, double v)
{
	pb_tag(b, field, PB_I64);
	if (!pb_room(b, 8))
		return;
	memcpy(b->p, &v, 8);	/* little-endian hosts only: x86 and arm64 */
	b->p += 8;
}

/* fixed64 fields (Perfetto's flow ids). */
static inline void pb_fixed64(struct pb *b, __u32 field, __u64 v)
{
	pb_tag(b, field, PB_I64);
	if (!pb_room(b, 8))
		return;
	memcpy(b->p, &v, 8);	/* little-endian hosts only, as pb_double */
	b->p += 8;
}

static inline void pb_bytes(struct pb *b, __u32 field, const void *data, size_t len)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	if (!pb_room(b, len))
		return;
	memcpy(b->p, data, len);
	b->p += len;
}

/* Bytes already encoded (fields of the message being written), as they are. */
static inline void pb_raw(struct pb *b, const void *data, size_t len)
{
	if (!pb_room(b, len))
		return;
	memcpy(b->p, data, len);
	b->p += len;
}

/*
 * A protobuf string must be UTF-8 (protoc and Perfetto refuse the trace otherwise), and names
 * come from guests and files: each ill-formed sequence becomes U+FFFD, as in the JSON output.
 */
static inline void pb_str(struct pb *b, __u32 field, const char *s)
{
	size_t len = utf8_fixed_len(s);

	pb_tag(b, field, PB_LEN);
	pb_varint(b, len);
	if (!pb_room(b, len))
		return;
	b->p = (__u8 *)utf8_fix((char *)b->p, s);
}

/* Opens nested message `field`; returns the mark pb_close needs. */
static inline __u8 *pb_open(struct pb *b, __u32 field)
{
	pb_tag(b, field, PB_LEN);
	if (!pb_room(b, PB_NEST_LEN_BYTES))
		return b->p;
	b->p += PB_NEST_LEN_BYTES;
	return b->p;
}

static inline void pb_close(struct pb *b, __u8 *body)
{
	size_t len = b->p - body, n = 1;
	__u8 *q = body - PB_NEST_LEN_BYTES;

	if (b->full)
		return;
	if (len >> (7 * PB_NEST_LEN_BYTES)) {
		b->full = true;
		return;
	}
	while (len >> (7 * n))
		n++;
	for (size_t i = 0; i < n; i++)
		*q++ = (__u8)(len >> (7 * i)) | (i + 1 < n ? 0x80 : 0);
	memmove(q, body, len);
	b->p = q + len;
}

#endif /* VMEXIT_PROTO_ENC_H */
