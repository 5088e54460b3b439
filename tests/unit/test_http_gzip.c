// SPDX-License-Identifier: GPL-2.0
/* http_gzip: which Accept-Encoding headers get gzip, and that the member inflates back. */
#include <stdlib.h>
#include <zlib.h>
#include "check.h"
#include "http_gzip.h"

static void test_accepted(void)
{
	static const struct { const char *h; bool gzip; } cases[] = {
		{ NULL, false },
		{ "", false },
		{ "identity", false },
		{ "gzip", true },
		{ "GZip", true },
		{ "x-gzip", true },
		{ "gzip, deflate, br", true },		/* curl --compressed */
		{ "deflate,gzip;q=0.5", true },
		{ "br ,  gzip ; q=1.0", true },
		{ "gzip;q=0", false },
		{ "gzip; q=0.000", false },
		{ "gzip;q=0.001", true },
		{ "*", true },
		{ "*;q=0", false },
		{ "*, gzip;q=0", false },		/* named beats * */
		{ "gzip;q=0, *", false },
		{ "identity;q=1, *;q=0.1", true },
		{ "gzipx", false },
		{ "xgzip, br", false },
		{ "deflate", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (http_gzip_accepted(cases[i].h) != cases[i].gzip) {
			fprintf(stderr, "Accept-Encoding '%s': gzip %d, expected %d\n",
				cases[i].h ? cases[i].h : "(none)", !cases[i].gzip, cases[i].gzip);
			check_failures++;
		}
	}
}

static void test_round_trip(void)
{
	size_t n = 1 << 20, len = 0, cap = 0;
	char *in = malloc(n), *back = malloc(n + 1), *z;
	z_stream s = {};

	/* An exposition's shape: the same label sets over and over, numbers changing. */
	for (size_t i = 0, off = 0; off < n; i++)
		off += snprintf(in + off, n - off, "vmexit_exits_total{guest=\"web%zu\","
				"reason=\"IO\"} %zu\n", i % 100, i * 7919);
	z = http_gzip(in, n, HTTP_GZIP_LEVEL, &len, &cap);
	CHECK(z != NULL);
	if (!z)
		return;
	CHECK(len <= cap);
	CHECK(len < n / 5);
	CHECK((unsigned char)z[0] == 0x1f && (unsigned char)z[1] == 0x8b);	/* gzip magic */
	CHECK(inflateInit2(&s, 15 + 16) == Z_OK);
	s.next_in = (Bytef *)z;
	s.avail_in = len;
	s.next_out = (Bytef *)back;
	s.avail_out = n + 1;
	CHECK(inflate(&s, Z_FINISH) == Z_STREAM_END);
	CHECK_EQ_U64(s.total_out, n);
	CHECK(!memcmp(in, back, n));
	inflateEnd(&s);
	/* Empty in, a valid empty member out. */
	free(z);
	z = http_gzip("", 0, HTTP_GZIP_LEVEL, &len, &cap);
	CHECK(z && len >= 20);
	free(z);
	free(in);
	free(back);
}

int main(void)
{
	test_accepted();
	test_round_trip();
	CHECK_DONE("http_gzip");
}
