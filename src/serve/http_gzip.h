/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gzip for the exporter's responses: Prometheus asks for it (Accept-Encoding: gzip), and an
 * exposition, label sets repeated on every line, shrinks about tenfold. Level 1: most of the
 * saving at a fraction of the time (bench_serve prints both).
 */
#ifndef VMEXIT_HTTP_GZIP_H
#define VMEXIT_HTTP_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <zlib.h>

#define HTTP_GZIP_LEVEL		1

/* Does an Accept-Encoding header (NULL: none) accept gzip: gzip, x-gzip or * with q > 0? */
bool http_gzip_accepted(const char *accept_encoding);

/* A gzip member of in[0, len) at level (1-9) in a new buffer: its length and capacity in *len,
 * *cap. NULL when out of memory. */
char *http_gzip(const char *in, size_t in_len, int level, size_t *len, size_t *cap);

/*
 * A server's compressor kept across responses (one at a time): its deflate state reset, not
 * allocated and faulted in again (about 270 KB at level 1), and the last response's buffer
 * reused once it is sent. Zeroed before the first use.
 */
struct http_gzip_state {
	z_stream z;
	bool ready;
	int level;
	char *spare;
	size_t spare_cap;
};

/* As http_gzip(), with st's stream and its spare buffer if that is large enough. */
char *http_gzip_kept(struct http_gzip_state *st, const char *in, size_t in_len, int level,
		     size_t *len, size_t *cap);
/* A buffer of http_gzip_kept() whose response is sent: the spare, unless that is larger. */
void http_gzip_give_back(struct http_gzip_state *st, char *p, size_t cap);
void http_gzip_state_free(struct http_gzip_state *st);

#endif /* VMEXIT_HTTP_GZIP_H */
