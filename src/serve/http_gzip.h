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

#define HTTP_GZIP_LEVEL		1

/* Does an Accept-Encoding header (NULL: none) accept gzip: gzip, x-gzip or * with q > 0? */
bool http_gzip_accepted(const char *accept_encoding);

/* A gzip member of in[0, len) at level (1-9) in a new buffer: its length and capacity in *len,
 * *cap. NULL when out of memory. */
char *http_gzip(const char *in, size_t in_len, int level, size_t *len, size_t *cap);

#endif /* VMEXIT_HTTP_GZIP_H */
