// SPDX-License-Identifier: GPL-2.0
/*
 * The protobuf encoder (proto_enc.h), byte for byte against the wire format: varints at their
 * length boundaries, negative int64, strings, and nested messages whose length needs one, two
 * or three bytes (the body moves down to the minimal length), nested two deep; and a buffer
 * too small is refused, never overrun.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "proto_enc.h"

static void check_bytes(const struct pb *b, const __u8 *want, size_t n, int line)
{
	if (pb_len(b) != n || memcmp(b->buf, want, n)) {
		fprintf(stderr, "%s:%d: %zu bytes written, expected %zu:", __FILE__, line,
			pb_len(b), n);
		for (size_t i = 0; i < pb_len(b); i++)
			fprintf(stderr, " %02x", b->buf[i]);
		fprintf(stderr, "\n");
		check_failures++;
	}
}
#define CHECK_BYTES(b, ...)                                                                        \
	do {                                                                                       \
		static const __u8 w_[] = { __VA_ARGS__ };                                          \
		check_bytes(b, w_, sizeof(w_), __LINE__);                                          \
	} while (0)

static void test_varints(void)
{
	__u8 buf[64];
	struct pb b;

	pb_init(&b, buf, sizeof(buf));
	pb_uint(&b, 1, 0);
	pb_uint(&b, 1, 127);
	pb_uint(&b, 1, 128);
	pb_uint(&b, 1, 300);
	CHECK_BYTES(&b, 0x08, 0x00, 0x08, 0x7f, 0x08, 0x80, 0x01, 0x08, 0xac, 0x02);

	pb_init(&b, buf, sizeof(buf));
	pb_uint(&b, 16, UINT64_MAX);	/* field 16: a two-byte tag */
	CHECK_BYTES(&b, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);

	pb_init(&b, buf, sizeof(buf));
	pb_uint(&b, 4, (__u64)(__s64)-1);	/* int64 -1: ten bytes */
	CHECK_BYTES(&b, 0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01);

	pb_init(&b, buf, sizeof(buf));
	pb_str(&b, 2, "hi");
	pb_str(&b, 3, "");
	pb_double(&b, 5, 1.0);
	CHECK_BYTES(&b, 0x12, 0x02, 'h', 'i', 0x1a, 0x00, 0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f);
}

static size_t varint_len(size_t v)
{
	size_t n = 1;

	while (v >>= 7)
		n++;
	return n;
}

/* A nested message whose body (one bytes field) is n long gets a length of len_bytes. */
static void test_nested_length(size_t n, size_t len_bytes)
{
	static __u8 buf[1 << 18], want[1 << 18];
	size_t inner = n - 2;
	struct pb b;
	__u8 *m, *payload;
	size_t w = 0;

	while (1 + varint_len(inner) + inner > n)
		inner--;
	CHECK_EQ_U64(1 + varint_len(inner) + inner, n);
	payload = malloc(inner);
	memset(payload, 'x', inner);
	pb_init(&b, buf, sizeof(buf));
	m = pb_open(&b, 7);
	pb_bytes(&b, 1, payload, inner);
	pb_close(&b, m);
	CHECK(!b.full);
	/* What it must be: tag, minimal length, then the body as written. */
	want[w++] = 7 << 3 | 2;
	for (size_t v = n; ; v >>= 7) {
		want[w++] = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		if (v < 0x80)
			break;
	}
	CHECK_EQ_U64(w, 1 + len_bytes);
	want[w++] = 0x0a;
	for (size_t v = inner; ; v >>= 7) {
		want[w++] = (v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
		if (v < 0x80)
			break;
	}
	memcpy(want + w, payload, inner);
	w += inner;
	CHECK_EQ_U64(w, 1 + len_bytes + n);
	check_bytes(&b, want, w, __LINE__);
	free(payload);
}

static void test_nested(void)
{
	__u8 buf[64];
	struct pb b;
	__u8 *outer, *inner;

	pb_init(&b, buf, sizeof(buf));
	outer = pb_open(&b, 1);
	pb_uint(&b, 8, 5);
	inner = pb_open(&b, 11);
	pb_uint(&b, 9, 1);
	pb_close(&b, inner);
	pb_close(&b, outer);
	pb_uint(&b, 2, 1);	/* writing goes on after the moved body */
	CHECK_BYTES(&b, 0x0a, 0x06, 0x40, 0x05, 0x5a, 0x02, 0x48, 0x01, 0x10, 0x01);

	pb_init(&b, buf, sizeof(buf));
	outer = pb_open(&b, 1);
	pb_close(&b, outer);
	CHECK_BYTES(&b, 0x0a, 0x00);

	test_nested_length(127, 1);
	test_nested_length(128, 2);
	test_nested_length(16383, 2);
	test_nested_length(16384, 3);
}

static void test_full(void)
{
	__u8 buf[8];
	struct pb b;
	__u8 *m;
	size_t len;

	memset(buf, 0xee, sizeof(buf));
	pb_init(&b, buf, 6);
	pb_str(&b, 1, "0123456789");
	CHECK(b.full);
	CHECK_EQ_U64(buf[6], 0xee);
	len = pb_len(&b);
	pb_uint(&b, 1, 1);	/* nothing more once full */
	CHECK_EQ_U64(pb_len(&b), len);

	pb_init(&b, buf, 6);
	m = pb_open(&b, 1);
	pb_uint(&b, 1, UINT64_MAX);
	pb_close(&b, m);
	CHECK(b.full);
	CHECK_EQ_U64(buf[6], 0xee);
}

int main(void)
{
	test_varints();
	test_nested();
	test_full();
	CHECK_DONE("proto_enc");
}
