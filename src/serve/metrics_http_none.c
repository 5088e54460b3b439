// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's HTTP side in a build without libmicrohttpd (make HTTP=0, the default of the
 * static arm64 build: Debian has no static p11-kit for the GnuTLS that its libmicrohttpd
 * needs). Same interface as metrics_http.c; it refuses to listen, saying why, so `serve` fails
 * with one clear line before it loads anything.
 */
#include <stdio.h>
#include <unistd.h>
#include "metrics_http.h"

const struct http_limits http_default_limits;

int http_listen(const char *spec, char *where, size_t wherelen, char *err, size_t errlen)
{
	(void)spec;
	(void)where;
	(void)wherelen;
	snprintf(err, errlen, "this vmexit was built without the HTTP exporter (make HTTP=0, as "
		 "static arm64 builds are): build it with libmicrohttpd (make HTTP=1) to serve");
	return -1;
}

struct http_server *http_server_start(int fd, const struct http_limits *lim, http_render_fn fn,
				      void *ctx, bool verbose, char *err, size_t errlen)
{
	if (fd >= 0)
		close(fd);	/* taken over, as metrics_http.c does */
	(void)lim;
	(void)fn;
	(void)ctx;
	(void)verbose;
	snprintf(err, errlen, "this vmexit was built without the HTTP exporter (make HTTP=0)");
	return NULL;
}

void http_server_stop(struct http_server *srv)
{
	(void)srv;
}
