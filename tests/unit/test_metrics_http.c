// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's HTTP side on loopback, with a stand-in renderer: --listen parsing and its
 * errors, paths, methods, content negotiation, a huge header, many idle connections.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "check.h"
#include "metrics_http.h"

static int renders;

static int fake_render(void *ctx, enum expo_format fmt, struct expo_buf *out)
{
	const char *s = fmt == EXPO_OPENMETRICS ? "# TYPE x counter\nx_total 1\n# EOF\n"
						: "x_total 1\n";
	size_t n = strlen(s);

	(void)ctx;
	renders++;
	if (out->cap < n) {
		free(out->p);
		out->p = malloc(n);
		out->cap = n;
	}
	memcpy(out->p, s, n);
	out->len = n;
	return 0;
}

static int connect_to(int family, int port)
{
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET6 ? connect(fd, (void *)&a6, sizeof(a6))
			       : connect(fd, (void *)&a4, sizeof(a4))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Sends req (len bytes, 0: a string), reads the whole response (the server closes: Connection:
 * close); its length.
 */
static ssize_t request(int family, int port, const char *req, size_t len, char *resp,
		       size_t cap)
{
	int fd = connect_to(family, port);
	size_t got = 0, sent = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (!len)
		len = strlen(req);
	while (sent < len) {
		n = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
		if (n <= 0)
			break;	/* the server may answer and close before reading it all */
		sent += n;
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 5000) <= 0)
			break;
		n = recv(fd, resp + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	resp[got] = 0;
	close(fd);
	return got;
}

static ssize_t get(int port, const char *path, const char *extra, char *resp, size_t cap)
{
	char req[1024];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n%sConnection: close"
			 "\r\n\r\n", path, extra);

	return request(AF_INET, port, req, n, resp, cap);
}

/* Render k: a body of a size and bytes of its own, so a stale or cut body shows. */
static size_t sized_body(int k, char *out)
{
	static const size_t sizes[] = { 200000, 3000, 150000, 50, 60, 120000 };
	size_t n = sizes[k % 6];

	for (size_t i = 0; out && i < n; i++)
		out[i] = i % 64 == 63 ? '\n' : 'a' + (k + i / 64) % 26;
	return n;
}

struct sized {
	int renders;
	size_t cap_in[6];	/* the room each render was given */
};

static int sized_render(void *ctx, enum expo_format fmt, struct expo_buf *out)
{
	struct sized *z = ctx;
	int k = z->renders++;
	size_t n = sized_body(k, NULL);

	(void)fmt;
	CHECK_EQ_U64(out->len, 0);
	if (k < 6)
		z->cap_in[k] = out->cap;
	if (out->cap < n) {
		char *p = realloc(out->p, n);

		if (!p)
			return -ENOMEM;
		out->p = p;
		out->cap = n;
	}
	sized_body(k, out->p);
	out->len = n;
	return 0;
}

/*
 * The server keeps the last response's buffer for the next scrape (no fresh tens of MB to fault
 * in at each), but not one far larger than scrapes now need: every body is whole and its own.
 */
static void test_buffer_reuse(void)
{
	static char resp[256 * 1024], want[256 * 1024];
	struct sized z = {};
	char where[128], err[512];
	struct http_server *srv;
	int fd = http_listen("127.0.0.1:0", where, sizeof(where), err, sizeof(err)), port;

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	port = atoi(where + 10);
	srv = http_server_start(fd, &http_default_limits, sized_render, &z, false, err,
				sizeof(err));
	CHECK(srv);
	if (!srv)
		return;
	for (int k = 0; k < 6; k++) {
		ssize_t n = get(port, "/metrics", "", resp, sizeof(resp));
		size_t len = sized_body(k, want);
		char *body = n > 0 ? strstr(resp, "\r\n\r\n") : NULL;

		CHECK(body && (size_t)(resp + n - body - 4) == len && !memcmp(body + 4, want, len));
	}
	CHECK_EQ_U64(z.renders, 6);
	/*
	 * The 3 KB body goes into the 200 KB one's buffer as it was (a new one would be sized
	 * from the last body: 225,000 bytes), which is then freed, far too large for 3 KB; the
	 * 150 KB body's buffer is reused for 50 bytes and freed, the 60-byte body gets 56.
	 */
	CHECK_EQ_U64(z.cap_in[1], 200000);
	CHECK_EQ_U64(z.cap_in[2], 3000 + 3000 / 8);
	CHECK_EQ_U64(z.cap_in[3], 150000);
	CHECK_EQ_U64(z.cap_in[4], 50 + 50 / 8);
	http_server_stop(srv);
}

static void test_listen_errors(void)
{
	char where[128], err[512];

	CHECK(http_listen("garbage", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "'garbage'") && strstr(err, "[ADDR]:PORT"));
	CHECK(http_listen("::1:9477", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "brackets"));
	CHECK(http_listen("127.0.0.1:99999", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "0 to 65535"));
	CHECK(http_listen(":http", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(http_listen("127.0.0.1:-1", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(http_listen("[::1", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(http_listen("[::1]9477", where, sizeof(where), err, sizeof(err)) == -EINVAL);
	CHECK(http_listen("no-such-host.invalid:9477", where, sizeof(where), err, sizeof(err)) ==
	      -1);
	CHECK(strstr(err, "cannot resolve 'no-such-host.invalid'"));
	/* 192.0.2.1 (TEST-NET-1) is nobody's address. */
	CHECK(http_listen("192.0.2.1:9477", where, sizeof(where), err, sizeof(err)) == -1);
	CHECK(strstr(err, "not an address of this host"));
}

int main(void)
{
	static char resp[256 * 1024];
	char where[128], where2[128], err[512], *big;
	struct http_server *srv;
	int fd, fd2, port, idle[200], nidle = 0;
	ssize_t n;

	test_listen_errors();
	test_buffer_reuse();
	fd = http_listen("127.0.0.1:0", where, sizeof(where), err, sizeof(err));
	CHECK(fd >= 0);
	if (fd < 0) {
		fprintf(stderr, "%s\n", err);
		CHECK_DONE("test_metrics_http");
	}
	CHECK(!strncmp(where, "127.0.0.1:", 10));
	port = atoi(where + 10);
	CHECK(port > 0);
	/* The same port again: busy, and the message says so. */
	fd2 = http_listen(where, where2, sizeof(where2), err, sizeof(err));
	CHECK(fd2 == -1);
	CHECK(strstr(err, "Address already in use") && strstr(err, "--listen"));

	srv = http_server_start(fd, &http_default_limits, fake_render, NULL, false, err,
				sizeof(err));
	CHECK(srv);
	if (!srv)
		CHECK_DONE("test_metrics_http");

	n = get(port, "/metrics", "", resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12));
	CHECK(strcasestr(resp, "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	CHECK(strstr(resp, "\r\n\r\nx_total 1\n"));

	n = get(port, "/metrics", "Accept: application/openmetrics-text;version=1.0.0,text/plain;"
		"version=0.0.4;q=0.5,*/*;q=0.1\r\n", resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12));
	CHECK(strcasestr(resp, "Content-Type: application/openmetrics-text; version=1.0.0; "
			       "charset=utf-8\r\n"));
	CHECK(strstr(resp, "# EOF\n"));

	n = get(port, "/", "", resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12));
	CHECK(strcasestr(resp, "Content-Type: text/html"));
	CHECK(strstr(resp, "href=\"/metrics\""));

	n = get(port, "/metric", "", resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 404", 12));

	n = request(AF_INET, port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
		    "Connection: close\r\n\r\nhello", 0, resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 405", 12));
	CHECK(strcasestr(resp, "Allow: GET, HEAD\r\n"));

	n = request(AF_INET, port, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		    0, resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12) && !strstr(resp, "x_total"));

	/* A 100 KB header does not fit the connection's memory: refused, nothing else hurt. */
	big = malloc(110 * 1024);
	if (big) {
		int len = snprintf(big, 64, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");

		memset(big + len, 'a', 100 * 1024);
		len += 100 * 1024;
		len += snprintf(big + len, 64, "\r\nConnection: close\r\n\r\n");
		n = request(AF_INET, port, big, len, resp, sizeof(resp));
		CHECK(n <= 0 || !strncmp(resp, "HTTP/1.1 431", 12) ||
		      !strncmp(resp, "HTTP/1.1 413", 12));
		if (n > 0)
			printf("100 KB header: %.*s\n", (int)strcspn(resp, "\r"), resp);
		free(big);
	}

	/* 200 clients that connect and say nothing: a scrape still gets its answer. */
	for (int i = 0; i < 200; i++) {
		idle[i] = connect_to(AF_INET, port);
		nidle += idle[i] >= 0;
	}
	CHECK_EQ_U64(nidle, 200);
	renders = 0;
	n = get(port, "/metrics", "", resp, sizeof(resp));
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12));
	CHECK_EQ_U64(renders, 1);
	for (int i = 0; i < 200; i++)
		if (idle[i] >= 0)
			close(idle[i]);

	http_server_stop(srv);
	/* Stopped: the port is free again at once (SO_REUSEADDR), and no one answers. */
	CHECK(connect_to(AF_INET, port) < 0);
	fd = http_listen(where, where2, sizeof(where2), err, sizeof(err));
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	/* A name: IPv4 first, so localhost is 127.0.0.1 whatever /etc/hosts lists first. */
	fd = http_listen("localhost:0", where, sizeof(where), err, sizeof(err));
	CHECK(fd >= 0 && !strncmp(where, "127.0.0.1:", 10));
	if (fd >= 0)
		close(fd);
	/* Every address: one socket for IPv6 and IPv4 where IPv6 exists. */
	fd = http_listen(":0", where, sizeof(where), err, sizeof(err));
	CHECK(fd >= 0 && (!strncmp(where, "[::]:", 5) || !strncmp(where, "0.0.0.0:", 8)));
	if (fd >= 0) {
		int c = connect_to(AF_INET, atoi(strrchr(where, ':') + 1));

		CHECK(c >= 0);	/* IPv4 reaches the wildcard */
		if (c >= 0)
			close(c);
		close(fd);
	}

	/* IPv6, where the host has it. */
	fd = http_listen("[::1]:0", where, sizeof(where), err, sizeof(err));
	if (fd >= 0) {
		CHECK(!strncmp(where, "[::1]:", 6));
		port = atoi(where + 6);
		srv = http_server_start(fd, &http_default_limits, fake_render, NULL, false, err,
					sizeof(err));
		CHECK(srv);
		n = request(AF_INET6, port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close"
			    "\r\n\r\n", 0, resp, sizeof(resp));
		CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12));
		http_server_stop(srv);
	} else {
		printf("no IPv6 loopback here (%s): [::1] not tested\n", err);
	}
	CHECK_DONE("test_metrics_http");
}
