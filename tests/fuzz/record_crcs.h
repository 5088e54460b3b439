/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Recomputes every checksum of a record file that its layout lets us find, so that mutated
 * lengths, counts and tables get past the checksums to the parsers behind them. Shared by the
 * fuzzer and test_report_mutations.
 */
#ifndef VMEXIT_RECORD_CRCS_H
#define VMEXIT_RECORD_CRCS_H

#include <stddef.h>
#include <stdint.h>

#include "record_file.h"

static inline uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* Recomputes the header and record checksums, following docs/record-format.md. */
static inline void fix_crcs(uint8_t *d, size_t size)
{
	static const uint8_t zero[4];
	size_t hlen, off;
	uint32_t crc;

	if (size < 48)
		return;
	hlen = le32(d + 12);
	if (hlen < 48 || hlen > size)
		return;
	crc = rec_crc32c(0, d, 16);
	crc = rec_crc32c(crc, zero, 4);
	put32(d + 16, rec_crc32c(crc, d + 20, hlen - 20));
	for (off = hlen; size - off >= 8;) {
		size_t body = ((size_t)(d[off + 6] | d[off + 7] << 8) + 7) & ~(size_t)7;

		if (size - off - 8 < body)
			break;
		put32(d + off, rec_crc32c(0, d + off + 4, 4 + body));
		off += 8 + body;
	}
}

#endif /* VMEXIT_RECORD_CRCS_H */
