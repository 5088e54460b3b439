/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's HTTP side (libmicrohttpd): GET /metrics in the format the client's Accept
 * header asks for, GET / a page linking it, 404 and 405 otherwise, HTTP/1.1 keep-alive and
 * pipelining. One server thread; bounded connections (a new one takes the place of the one that
 * has waited longest for its request), per-connection memory (which also caps the request
 * header size), time to send a whole request, idle time and bytes of responses in flight.
 */
#ifndef VMEXIT_METRICS_HTTP_H
#define VMEXIT_METRICS_HTTP_H

#include <stddef.h>
#include <sys/socket.h>
#include "prom_exposition.h"

#define HTTP_DEFAULT_LISTEN	"localhost:9477"

/*
 * Opens the listening socket for "[ADDR]:PORT": "HOST:PORT", "[IPV6]:PORT", ":PORT" (every
 * address, IPv6 and IPv4), PORT 0 for any free port. The address actually bound goes to
 * where ("127.0.0.1:9477", "[::1]:9477"). The socket, or < 0 with err saying what was wrong
 * and how to fix it: -EINVAL when spec is malformed, -1 when it cannot be bound.
 */
int http_listen(const char *spec, char *where, size_t wherelen, char *err, size_t errlen);

/* Renders the metrics into out (empty); 0, or -errno (the scrape then gets a 500). */
typedef int (*http_render_fn)(void *ctx, enum expo_format fmt, struct expo_buf *out);

struct http_limits {
	/* Open at once; past it each new one closes the one that has waited longest for a
	 * request (accepted, or answered, and not sent a whole request since). */
	unsigned int connections;
	size_t conn_memory;		/* per connection: request line and headers must fit */
	unsigned int idle_timeout_s;	/* a client that reads no answer this long is cut */
	unsigned int request_timeout_s;	/* a whole request within this of connecting */
	unsigned int keepalive_s;	/* ...or of the last answer, on a kept connection */
	size_t inflight_bytes;		/* responses being sent; past it scrapes get a 503 */
};

extern const struct http_limits http_default_limits;

struct http_server;

/* Serves on the listening socket fd (taken over). NULL with err on failure. */
struct http_server *http_server_start(int fd, const struct http_limits *lim, http_render_fn fn,
				      void *ctx, bool verbose, char *err, size_t errlen);
/* Closes every connection and the socket, waits for the server thread. */
void http_server_stop(struct http_server *srv);

#endif /* VMEXIT_METRICS_HTTP_H */
