/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record tests' hostile files: a record found by the documented layout
 * (docs/record-format.md), spoiled in place, its checksum made right again so that only the
 * reader's own checks can refuse it, and the file read back to its end. Include after check.h
 * and record_file.h.
 */
#ifndef VMEXIT_TESTS_RECORD_BYTES_H
#define VMEXIT_TESTS_RECORD_BYTES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Offset of the n-th record of type (0-based), from the documented layout; 0 if none. */
static inline size_t find_record(const unsigned char *d, size_t len, __u16 type, int nth)
{
	size_t off = d[12] | d[13] << 8 | d[14] << 16 | (size_t)d[15] << 24;

	while (off + 8 <= len) {
		__u16 t = d[off + 4] | d[off + 5] << 8, l = d[off + 6] | d[off + 7] << 8;

		if (t == type && nth-- == 0)
			return off;
		off += 8 + ((l + 7) & ~7u);
	}
	return 0;
}

static inline void put_le(unsigned char *p, __u64 v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = v >> (8 * i);
}

/* The record's CRC over its type, length and padded payload, as a writer would seal it. */
static inline void reseal(unsigned char *rec)
{
	__u16 l = rec[6] | rec[7] << 8;

	put_le(rec, rec_crc32c(0, rec + 4, 4 + ((l + 7) & ~7u)), 4);
}

/* Reads d to its end: the last error, how many items of kind came before it, and how many
 * records of types the reader does not know it skipped. */
static inline int read_all(const unsigned char *d, size_t len, enum rec_kind kind, char *err,
			   size_t errlen, __u64 *count, __u64 *skipped)
{
	struct rec_reader *r = rec_reader_open_mem(d, len, err, errlen);
	struct rec_item *it = calloc(1, sizeof(*it));
	int n;

	*count = 0;
	while ((n = rec_reader_next(r, it, err, errlen)) == 1)
		*count += it->kind == kind;
	*skipped = rec_reader_skipped(r, NULL);
	rec_reader_close(r);
	free(it);
	return n;
}

/*
 * The nth record of type, spoiled: refused at its offset, in one line naming what, after
 * every item of kind before it.
 */
static inline void check_refused(const unsigned char *orig, size_t len, __u16 type,
				 enum rec_kind kind, int nth, const char *what,
				 void (*spoil)(unsigned char *rec))
{
	unsigned char *d = malloc(len);
	size_t off = find_record(orig, len, type, nth);
	char err[512], at[64];
	__u64 count, skipped;
	int n;

	memcpy(d, orig, len);
	spoil(d + off);
	reseal(d + off);
	n = read_all(d, len, kind, err, sizeof(err), &count, &skipped);
	snprintf(at, sizeof(at), "offset %zu: ", off);
	CHECK(n == -1);
	CHECK(strstr(err, at) != NULL);
	CHECK(strstr(err, what) != NULL);
	CHECK(strchr(err, '\n') == NULL);
	CHECK_EQ_U64(count, nth);
	if (!strstr(err, what))
		fprintf(stderr, "  got: %s\n", err);
	free(d);
}

#endif
