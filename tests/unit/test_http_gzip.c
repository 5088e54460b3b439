// SPDX-License-Identifier: GPL-2.0
/* http_gzip: which Accept-Encoding headers get gzip, and that the member inflates back. */
#include <stdlib.h>
#include <string.h>
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

/* z[0, len) inflates to in[0, n) exactly. */
static bool inflates_to(const char *z, size_t len, const char *in, size_t n)
{
	char *back = malloc(n + 1);
	z_stream s = {};
	bool ok;

	if (!back || inflateInit2(&s, 15 + 16) != Z_OK) {
		free(back);
		return false;
	}
	s.next_in = (Bytef *)z;
	s.avail_in = len;
	s.next_out = (Bytef *)back;
	s.avail_out = n + 1;
	ok = inflate(&s, Z_FINISH) == Z_STREAM_END && s.total_out == n && !memcmp(in, back, n);
	inflateEnd(&s);
	free(back);
	return ok;
}

/*
 * A server's kept compressor (http_gzip_kept): responses of 3 bytes, 1 MB (the spare too small:
 * a new buffer, kept), 3 bytes and 1 MB in it, then 2 MB (a new one again), each handed back
 * once sent, each member the bytes a fresh http_gzip() makes and inflating back to its own
 * input, nothing of the last one in it.
 */
static void test_kept(void)
{
	static const size_t sizes[] = { 3, 1 << 20, 3, 1 << 20, 2 << 20 };
	struct http_gzip_state st = {};
	size_t big = 2 << 20;
	char *in = malloc(big);

	for (size_t i = 0, off = 0; off < big; i++)
		off += snprintf(in + off, big - off, "vmexit_exits_total{guest=\"vm%zu\"} %zu\n",
				i % 300, i * 104729);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		/* Each input different from the last at the same offsets. */
		const char *p = in + k * 7;
		size_t n = sizes[k] < big - k * 7 ? sizes[k] : big - k * 7;
		size_t len, cap, flen, fcap;
		char *z = http_gzip_kept(&st, p, n, HTTP_GZIP_LEVEL, &len, &cap);
		char *f = http_gzip(p, n, HTTP_GZIP_LEVEL, &flen, &fcap);

		CHECK(z && f);
		if (!z || !f)
			break;
		CHECK(len <= cap);
		CHECK(inflates_to(z, len, p, n));
		CHECK_EQ_U64(len, flen);
		CHECK(!memcmp(z, f, len));
		free(f);
		http_gzip_give_back(&st, z, cap);
	}
	http_gzip_state_free(&st);
	free(in);
}

int main(void)
{
	test_accepted();
	test_round_trip();
	test_kept();
	CHECK_DONE("http_gzip");
}
