// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: any bytes handed to the record reader must end in a clean end or one
 * error message naming an offset, never a crash, a hang or a leak.
 *
 * Random bytes almost never carry valid CRC32Cs, so the parsers behind the checksums would
 * stay unexplored. Each input is therefore read twice: as is, and with every checksum the
 * layout lets us find recomputed, so mutated lengths, counts and tables get through.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "record_crcs.h"
#include "record_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_all(const uint8_t *data, size_t size)
{
	char err[512];
	struct rec_item item;
	struct rec_reader *r;
	int ret;

	r = rec_reader_open_mem(data, size, err, sizeof(err));
	if (!r) {
		if (!strstr(err, "offset "))
			abort();
		return;
	}
	/* Use the file's reason table the way a report does. */
	for (__u32 isa = 0; isa < 4; isa++)
		(void)rec_reader_reason_name(r, isa, 12);
	while ((ret = rec_reader_next(r, &item, err, sizeof(err))) == 1) {
		if (item.kind == REC_GUEST && strlen(item.name) > REC_NAME_MAX)
			abort();
	}
	if (ret < 0 && !strstr(err, "offset "))
		abort();
	rec_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy;

	read_all(data, size);
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fix_crcs(copy, size);
	read_all(copy, size);
	free(copy);
	return 0;
}
