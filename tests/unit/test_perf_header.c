// SPDX-License-Identifier: GPL-2.0
/*
 * A perf.data whose header points past the file's end is refused in one line that names the
 * header field at fault (its offset in the file), what it points to and the file's size, for
 * each of the header's pointers: the attributes and data sections, the feature table, and a
 * feature's own section. The files are made here, byte by byte, from perf's header layout
 * (tools/perf/util/header.h: magic, header size, attribute size, then {offset, size} of the
 * attributes, data and event types sections, then the feature bitmap).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "check.h"
#include "event_source.h"

#define HEAD_SIZE	104

struct head {
	char magic[8];
	__u64 size, attr_size;
	__u64 sec[3][2];
	__u64 features[4];
};

static char path[] = "/tmp/vmexit-perf-header-XXXXXX";

/* Writes h, then body bytes of zeros (a file of HEAD_SIZE + body bytes). */
static void write_file(const struct head *h, size_t body)
{
	FILE *f = fopen(path, "wb");
	char *zero = calloc(1, body + 1);

	CHECK(f && zero);
	if (!f || !zero)
		exit(1);
	CHECK(fwrite(h, sizeof(*h), 1, f) == 1);
	CHECK(fwrite(zero, 1, body, f) == body);
	CHECK(fclose(f) == 0);
	free(zero);
}

/* Opens the file: it must be refused, with err holding every string of want. */
static void refused(const char *const *want)
{
	char err[512] = "";
	struct event_source *s = event_source_open(path, err, sizeof(err));

	CHECK(s == NULL);
	CHECK(strchr(err, '\n') == NULL);
	for (; *want; want++) {
		if (!strstr(err, *want)) {
			fprintf(stderr, "message '%s' lacks '%s'\n", err, *want);
			check_failures++;
		}
	}
}

int main(void)
{
	int fd = mkstemp(path);
	struct head h = { .magic = "PERFILE2", .size = HEAD_SIZE, .attr_size = 136 };
	/* The attributes at 104 (136 bytes), the data after them (200 bytes): 440 bytes in all. */
	const size_t body = 136 + 200;

	CHECK(sizeof(h) == HEAD_SIZE);
	if (fd < 0)
		return 1;
	close(fd);
	h.sec[0][0] = HEAD_SIZE;
	h.sec[0][1] = 136;
	h.sec[1][0] = HEAD_SIZE + 136;

	/* The data section's entry (at 40): its size runs past the end. */
	h.sec[1][1] = 1000;
	write_file(&h, body);
	refused((const char *const[]){ "offset 40:", "data section", "1000 bytes at offset 240",
				       "440 bytes", path, NULL });

	/* The attributes' entry (at 24) points past the end. */
	h.sec[1][1] = 200;
	h.sec[0][0] = 5000;
	write_file(&h, body);
	refused((const char *const[]){ "offset 24:", "attributes section",
				       "136 bytes at offset 5000", NULL });

	/* Two features named, but the file ends at the data's end: no feature table. */
	h.sec[0][0] = HEAD_SIZE;
	h.features[0] = (1ull << 2) | (1ull << 3);
	write_file(&h, body);
	refused((const char *const[]){ "offset 440:", "2 features", "440 bytes", NULL });

	/* The table is there (at 440, 16 bytes an entry); the second entry points past the end. */
	{
		FILE *f;
		__u64 ft[2][2] = { { 472, 8 }, { 480, 4096 } };

		write_file(&h, body);
		f = fopen(path, "ab");
		CHECK(f && fwrite(ft, sizeof(ft), 1, f) == 1 && fwrite("12345678", 8, 1, f) == 1);
		if (f)
			fclose(f);
		refused((const char *const[]){ "offset 456:", "feature 2 of 2",
					       "4096 bytes at offset 480", "480 bytes", NULL });
	}
	unlink(path);
	CHECK_DONE("perf_header");
}
