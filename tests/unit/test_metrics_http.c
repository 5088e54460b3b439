// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's HTTP side on loopback, with a stand-in renderer: --listen parsing and its
 * errors, paths, methods, content negotiation, keep-alive and pipelining, a 1 MB header, 1,000
 * idle connections, clients trickling their requests (slowloris) and clients that do not read
 * a large answer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
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

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

static void send_all(int fd, const char *req, size_t len)
{
	size_t sent = 0;
	ssize_t n;

	while (sent < len) {
		n = send(fd, req + sent, len - sent, MSG_NOSIGNAL);
		if (n <= 0)
			break;	/* the server may answer and close before reading it all */
		sent += n;
	}
}

/* Reads into resp until the server closes or is silent for timeout_ms; the length read. */
static size_t read_until_close(int fd, char *resp, size_t cap, int timeout_ms)
{
	size_t got = 0;
	ssize_t n;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (got + 1 >= cap || poll(&p, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, resp + got, cap - 1 - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	resp[got] = 0;
	return got;
}

/* Reads one answer with a Content-Length (the connection stays open); its length, or 0. */
static size_t read_answer(int fd, char *resp, size_t cap, int timeout_ms)
{
	size_t got = 0;
	ssize_t n;

	for (;;) {
		const char *end, *cl;
		struct pollfd p = { .fd = fd, .events = POLLIN };

		resp[got] = 0;
		end = strstr(resp, "\r\n\r\n");
		cl = strcasestr(resp, "Content-Length:");
		if (end && cl && cl < end && resp + got >= end + 4 + atol(cl + 15))
			return got;
		if (got + 1 >= cap || poll(&p, 1, timeout_ms) <= 0)
			return 0;
		n = recv(fd, resp + got, cap - 1 - got, 0);
		if (n <= 0)
			return 0;
		got += n;
	}
}

/*
 * Sends req (len bytes, 0: a string), reads the whole response (the server closes: Connection:
 * close), waiting at most timeout_ms for each part; its length.
 */
static ssize_t request_within(int family, int port, const char *req, size_t len, char *resp,
			      size_t cap, int timeout_ms)
{
	int fd = connect_to(family, port);
	size_t got;

	if (fd < 0)
		return -1;
	send_all(fd, req, len ? len : strlen(req));
	got = read_until_close(fd, resp, cap, timeout_ms);
	close(fd);
	return got;
}

static ssize_t request(int family, int port, const char *req, size_t len, char *resp,
		       size_t cap)
{
	return request_within(family, port, req, len, resp, cap, 5000);
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

/* A server on a free loopback port with limits lim; its port in *port. */
static struct http_server *start(const struct http_limits *lim, http_render_fn fn, void *ctx,
				 int *port)
{
	char where[128], err[512];
	int fd = http_listen("127.0.0.1:0", where, sizeof(where), err, sizeof(err));
	struct http_server *srv;

	CHECK(fd >= 0);
	if (fd < 0)
		return NULL;
	*port = atoi(where + 10);
	srv = http_server_start(fd, lim, fn, ctx, false, err, sizeof(err));
	CHECK(srv);
	return srv;
}

/* A server with fake_render and limits lim, and a client connected to it (*fd, < 0: none). */
static struct http_server *start_connected(const struct http_limits *lim, int *port, int *fd)
{
	struct http_server *srv = start(lim, fake_render, NULL, port);

	*fd = srv ? connect_to(AF_INET, *port) : -1;
	CHECK(*fd >= 0);
	return srv;
}

static const char get_keep[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
static const char get_close[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

/* How many times needle occurs in s. */
static int occurrences(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

/*
 * HTTP/1.1 connections stay open for the next request (Prometheus reuses its connection), and
 * pipelined requests all get their answers, in order.
 */
static void test_keepalive(void)
{
	static char resp[64 * 1024];
	struct http_limits lim = http_default_limits;
	char req[4096];
	struct http_server *srv;
	int port, fd, len = 0;
	size_t n;
	char *end;

	lim.keepalive_s = 1;
	srv = start_connected(&lim, &port, &fd);
	if (!srv)
		return;
	for (int i = 0; fd >= 0 && i < 3; i++) {
		send_all(fd, get_keep, strlen(get_keep));
		/* The answer, whole (its length known), and the connection still open. */
		n = read_answer(fd, resp, sizeof(resp), 2000);
		end = strstr(resp, "\r\n\r\n");
		CHECK(!strncmp(resp, "HTTP/1.1 200", 12) && !strcasestr(resp, "Connection: close"));
		CHECK(strcasestr(resp, "Content-Length: 10\r\n") && end &&
		      end + 4 + 10 == resp + n);
	}
	/* Silent for keepalive_s: closed (read_until_close() sees the end, not its timeout). */
	if (fd >= 0) {
		double t = now_s();

		CHECK_EQ_U64(read_until_close(fd, resp, sizeof(resp), 5000), 0);
		printf("kept connection closed after %.2f s silent (keepalive_s 1)\n", now_s() - t);
		CHECK(now_s() - t < 3);
		close(fd);
	}

	/* 20 requests in one write. */
	for (int i = 0; i < 20; i++)
		len += snprintf(req + len, sizeof(req) - len,
				"GET %s HTTP/1.1\r\nHost: x\r\n%s\r\n", i % 2 ? "/" : "/metrics",
				i == 19 ? "Connection: close\r\n" : "");
	n = request(AF_INET, port, req, len, resp, sizeof(resp));
	CHECK_EQ_U64(occurrences(resp, "HTTP/1.1 200 OK\r\n"), 20);
	CHECK_EQ_U64(occurrences(resp, "\r\n\r\nx_total 1\n"), 10);
	CHECK_EQ_U64(occurrences(resp, "href=\"/metrics\""), 10);
	printf("20 pipelined GETs: %d answers, %zu bytes\n", occurrences(resp, "HTTP/1.1 200"), n);
	http_server_stop(srv);
}

/* A connection trickling its request is closed request_timeout_s after it connected. */
static void test_request_deadline(void)
{
	struct http_limits lim = http_default_limits;
	struct http_server *srv;
	const char *head = "GET /metrics HTTP/1.1\r\nX-Slow: ";
	int port, fd;
	double t;
	char c;

	lim.request_timeout_s = 1;
	srv = start_connected(&lim, &port, &fd);
	if (!srv)
		return;
	if (fd < 0)
		goto out;
	t = now_s();
	send_all(fd, head, strlen(head));
	/* A byte every 0.1 s (each restarts libmicrohttpd's idle timeout) for up to 5 s. */
	while (now_s() - t < 5) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 100) > 0 && recv(fd, &c, 1, 0) <= 0)
			break;
		if (send(fd, "a", 1, MSG_NOSIGNAL) != 1)
			break;
	}
	printf("trickling client closed after %.2f s (request_timeout_s 1)\n", now_s() - t);
	CHECK(now_s() - t >= 0.9 && now_s() - t < 2.5);
	close(fd);
out:
	http_server_stop(srv);
}

/*
 * Slowloris: twice as many clients as there are connections, each trickling a header byte
 * every 0.2 s and reconnecting when cut, while a scraper asks every 0.4 s with a 2 s timeout:
 * each scrape is answered.
 */
static void test_slowloris(void)
{
	static char resp[64 * 1024];
	struct http_limits lim = http_default_limits;
	const char *head = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ";
	enum { ATTACKERS = 64 };
	int att[ATTACKERS], port, scrapes = 0, answered = 0, reconnects = 0;
	struct http_server *srv;
	double t0, next_scrape;

	lim.connections = 32;
	srv = start(&lim, fake_render, NULL, &port);
	if (!srv)
		return;
	for (int i = 0; i < ATTACKERS; i++) {
		att[i] = connect_to(AF_INET, port);
		if (att[i] >= 0) {
			fcntl(att[i], F_SETFL, O_NONBLOCK);
			send_all(att[i], head, strlen(head));
		}
	}
	t0 = now_s();
	next_scrape = t0 + 0.4;
	while (now_s() - t0 < 4) {
		for (int i = 0; i < ATTACKERS; i++) {
			char c;

			/* Cut: a determined attacker comes back at once. */
			if (att[i] < 0 || recv(att[i], &c, 1, 0) == 0 ||
			    send(att[i], "a", 1, MSG_NOSIGNAL) < 0) {
				if (att[i] >= 0)
					close(att[i]);
				att[i] = connect_to(AF_INET, port);
				reconnects++;
				if (att[i] >= 0) {
					fcntl(att[i], F_SETFL, O_NONBLOCK);
					send_all(att[i], head, strlen(head));
				}
			}
		}
		if (now_s() >= next_scrape) {
			ssize_t n = request_within(AF_INET, port, get_close, 0, resp, sizeof(resp),
						   2000);

			scrapes++;
			answered += n > 0 && !strncmp(resp, "HTTP/1.1 200", 12) &&
				    strstr(resp, "x_total 1\n");
			next_scrape = now_s() + 0.4;
		}
		sleep_s(0.2);
	}
	printf("slowloris: %d clients trickling on %u connections, %d reconnects: %d of %d "
	       "scrapes answered\n", ATTACKERS, lim.connections, reconnects, answered, scrapes);
	CHECK(scrapes >= 5);
	CHECK_EQ_U64(answered, scrapes);
	for (int i = 0; i < ATTACKERS; i++)
		if (att[i] >= 0)
			close(att[i]);
	http_server_stop(srv);
}

/* 1,000 clients connect and say nothing: a scrape is answered at once all the same. */
static void test_idle_thousand(void)
{
	static char resp[64 * 1024];
	struct rlimit rl;
	struct http_server *srv;
	int idle[1000], port, opened = 0;
	double t;
	ssize_t n;

	/* 1,000 clients and the server's connections in one process. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 4096) {
		rl.rlim_cur = rl.rlim_max < 4096 ? rl.rlim_max : 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	srv = start(&http_default_limits, fake_render, NULL, &port);
	if (!srv)
		return;
	for (int i = 0; i < 1000; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

		/* Not waiting for each: the server accepts as fast as it can. */
		idle[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (idle[i] >= 0 && connect(idle[i], (void *)&a, sizeof(a)) &&
		    errno != EINPROGRESS) {
			close(idle[i]);
			idle[i] = -1;
		}
		opened += idle[i] >= 0;
	}
	CHECK_EQ_U64(opened, 1000);
	sleep_s(0.5);
	t = now_s();
	n = request_within(AF_INET, port, get_close, 0, resp, sizeof(resp), 3000);
	printf("scrape with 1,000 idle connections: %s in %.3f s\n",
	       n > 0 ? "answered" : "no answer", now_s() - t);
	CHECK(n > 0 && !strncmp(resp, "HTTP/1.1 200", 12) && now_s() - t < 2);
	for (int i = 0; i < 1000; i++)
		if (idle[i] >= 0)
			close(idle[i]);
	http_server_stop(srv);
}

static int big_render(void *ctx, enum expo_format fmt, struct expo_buf *out)
{
	size_t n = *(size_t *)ctx;

	(void)fmt;
	if (out->cap < n) {
		free(out->p);
		out->p = malloc(n);
		out->cap = out->p ? n : 0;
		if (!out->p)
			return -ENOMEM;
	}
	memset(out->p, 'a', n);
	out->len = n;
	return 0;
}

/*
 * Five clients ask for a 16 MB answer and do not read it: past the bytes-in-flight budget
 * (40 MB) they get a 503; once the silent ones are cut (idle_timeout_s), their answers are
 * freed and a scrape gets the whole answer again.
 */
static void test_non_readers(void)
{
	static char resp[256];
	struct http_limits lim = http_default_limits;
	size_t body = 16 << 20, got = 0;
	int port, fd[5], ok = 0, busy = 0;
	struct http_server *srv;
	char *all;

	lim.inflight_bytes = 40 << 20;
	lim.idle_timeout_s = 1;
	srv = start(&lim, big_render, &body, &port);
	if (!srv)
		return;
	for (int i = 0; i < 5; i++) {
		int small = 64 * 1024;

		fd[i] = connect_to(AF_INET, port);
		if (fd[i] < 0)
			continue;
		/* The kernel's buffers must not take the whole answer off the server's hands. */
		setsockopt(fd[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
		send_all(fd[i], get_keep, strlen(get_keep));
		/* The status line only. */
		if (poll(&(struct pollfd){ .fd = fd[i], .events = POLLIN }, 1, 3000) > 0 &&
		    recv(fd[i], resp, 12, 0) == 12) {
			ok += !strncmp(resp, "HTTP/1.1 200", 12);
			busy += !strncmp(resp, "HTTP/1.1 503", 12);
		}
	}
	printf("5 non-reading clients of a 16 MB answer: %d answered, %d got 503\n", ok, busy);
	CHECK_EQ_U64(ok, 3);
	CHECK_EQ_U64(busy, 2);
	sleep_s(2);
	all = malloc(body + 4096);
	if (fd[0] >= 0)
		close(fd[0]);
	fd[0] = connect_to(AF_INET, port);
	if (all && fd[0] >= 0) {
		send_all(fd[0], get_close, strlen(get_close));
		got = read_until_close(fd[0], all, body + 4096, 3000);
	}
	CHECK(got > body && !strncmp(all, "HTTP/1.1 200", 12));
	free(all);
	for (int i = 0; i < 5; i++)
		if (fd[i] >= 0)
			close(fd[i]);
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
	int fd, fd2, port;
	ssize_t n;

	test_listen_errors();
	test_buffer_reuse();
	test_keepalive();
	test_request_deadline();
	test_slowloris();
	test_idle_thousand();
	test_non_readers();
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

	/* A 1 MB header does not fit the connection's memory: refused, nothing else hurt. */
	big = malloc(1100 * 1024);
	if (big) {
		int len = snprintf(big, 64, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ");

		memset(big + len, 'a', 1024 * 1024);
		len += 1024 * 1024;
		len += snprintf(big + len, 64, "\r\nConnection: close\r\n\r\n");
		n = request(AF_INET, port, big, len, resp, sizeof(resp));
		CHECK(n <= 0 || !strncmp(resp, "HTTP/1.1 431", 12) ||
		      !strncmp(resp, "HTTP/1.1 413", 12));
		if (n > 0)
			printf("1 MB header: %.*s\n", (int)strcspn(resp, "\r"), resp);
		free(big);
	}

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
