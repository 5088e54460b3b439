// SPDX-License-Identifier: GPL-2.0
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "http_gzip.h"

static const char *skip_ows(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* The weight of one element's parameters ("; q=0.5"), in 1000ths; 1000 without a q. */
static int weight(const char *p, const char *end)
{
	while (p < end) {
		p = skip_ows(p);
		if (*p == ';')
			p = skip_ows(p + 1);
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=') {
			/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
			int w = 0, scale = 100;

			p += 2;
			if (p < end && *p >= '0' && *p <= '9')
				w = (*p++ - '0') * 1000;
			if (p < end && *p == '.')
				for (p++; p < end && *p >= '0' && *p <= '9' && scale; p++, scale /= 10)
					w += (*p - '0') * scale;
			return w;
		}
		while (p < end && *p != ';')
			p++;
	}
	return 1000;
}

bool http_gzip_accepted(const char *h)
{
	int gzip = -1, star = -1;

	while (h && *h) {
		const char *end = strchr(h, ','), *tok = skip_ows(h), *t;
		size_t n;

		if (!end)
			end = h + strlen(h);
		for (t = tok; t < end && *t != ';' && *t != ' ' && *t != '\t'; t++)
			;
		n = t - tok;
		if ((n == 4 && !strncasecmp(tok, "gzip", 4)) ||
		    (n == 6 && !strncasecmp(tok, "x-gzip", 6)))
			gzip = weight(t, end);
		else if (n == 1 && *tok == '*')
			star = weight(t, end);
		h = *end ? end + 1 : end;
	}
	/* gzip named decides; else * does; neither: not accepted (identity is the default). */
	return gzip >= 0 ? gzip > 0 : star > 0;
}

char *http_gzip(const char *in, size_t in_len, int level, size_t *len, size_t *cap)
{
	z_stream z = {};
	char *out;

	/* One deflate() call takes at most 4 GB (uInt): far more than an exposition may be
	 * (the server's budget of responses in flight is 64 MB). */
	if (in_len > UINT_MAX / 2)
		return NULL;
	/* 15 window bits, +16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	*cap = deflateBound(&z, in_len);
	out = malloc(*cap);
	if (out) {
		z.next_in = (Bytef *)in;
		z.avail_in = in_len;
		z.next_out = (Bytef *)out;
		z.avail_out = *cap;
		/* The bound holds it all: one call ends the stream. */
		if (deflate(&z, Z_FINISH) == Z_STREAM_END) {
			*len = z.total_out;
		} else {
			free(out);
			out = NULL;
		}
	}
	deflateEnd(&z);
	return out;
}

char *http_gzip_kept(struct http_gzip_state *st, const char *in, size_t in_len, int level,
		     size_t *len, size_t *cap)
{
	size_t need;
	char *out;

	if (in_len > UINT_MAX / 2)
		return NULL;
	if (st->ready && st->level != level) {
		deflateEnd(&st->z);
		st->ready = false;
	}
	if (!st->ready) {
		memset(&st->z, 0, sizeof(st->z));
		if (deflateInit2(&st->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return NULL;
		st->ready = true;
		st->level = level;
	} else if (deflateReset(&st->z) != Z_OK) {
		return NULL;
	}
	need = deflateBound(&st->z, in_len);
	if (st->spare && st->spare_cap >= need) {
		out = st->spare;
		*cap = st->spare_cap;
		st->spare = NULL;
	} else {
		out = malloc(need);
		*cap = need;
	}
	if (!out)
		return NULL;
	st->z.next_in = (Bytef *)in;
	st->z.avail_in = in_len;
	st->z.next_out = (Bytef *)out;
	st->z.avail_out = *cap;
	if (deflate(&st->z, Z_FINISH) != Z_STREAM_END) {
		http_gzip_give_back(st, out, *cap);
		return NULL;
	}
	*len = st->z.total_out;
	return out;
}

void http_gzip_give_back(struct http_gzip_state *st, char *p, size_t cap)
{
	/* The larger one stays: the next scrape's is most likely the size of the last. */
	if (st->spare && st->spare_cap >= cap) {
		free(p);
		return;
	}
	free(st->spare);
	st->spare = p;
	st->spare_cap = cap;
}

void http_gzip_state_free(struct http_gzip_state *st)
{
	if (st->ready)
		deflateEnd(&st->z);
	free(st->spare);
	memset(st, 0, sizeof(*st));
}
