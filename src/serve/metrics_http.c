// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP for the exporter, on libmicrohttpd: it parses requests, bounds connections and their
 * memory, and times out idle clients. We own the listening socket so that a bad --listen or a
 * busy port gets an error naming it, and the thread that serves (our loop around MHD_run_wait())
 * so that renders never overlap and so that the loop can enforce what libmicrohttpd does not:
 * a deadline for a whole request (its idle timeout restarts at every byte: a client trickling a
 * header held its slot for ever) and, when the connections are all taken, room for a new one
 * made by closing the one that has waited longest for its request.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "http_gzip.h"
#include "expo_accept.h"
#include "metrics_http.h"

const struct http_limits http_default_limits = {
	/* Room for a few hundred clients (Prometheus keeps one connection per server). */
	.connections = 512,
	/* Request line and headers live in this pool: larger requests get a 431. */
	.conn_memory = 32 * 1024,
	.idle_timeout_s = 10,
	.request_timeout_s = 10,
	/* Longer than Prometheus's default scrape interval (1m): its connection is reused. */
	.keepalive_s = 120,
	.inflight_bytes = 64 << 20,
};

/* How often the loop looks for connections past their deadline. */
#define SWEEP_MS	250

/* A connection from accept to close: waiting for a whole request, or answering one. */
struct http_conn {
	struct http_conn *prev, *next;	/* in the server's waiting list, while waiting */
	int fd;
	double since;			/* waiting since: accepted, or its last answer sent */
	unsigned int limit_s;		/* for at most this long */
	bool waiting;
};

struct http_server {
	struct MHD_Daemon *d;
	http_render_fn fn;
	void *ctx;
	struct http_limits lim;
	/* The connections waiting for a request, longest waiting first, and all of them. */
	struct http_conn *wait_head, *wait_tail;
	unsigned int nr_conns;
	pthread_t thread;
	bool stopping;			/* __atomic: http_server_stop() to the loop */
	size_t inflight;		/* bytes of /metrics responses not yet sent */
	size_t size_hint;		/* the last rendering's size */
	/*
	 * The buffer of the last response sent, kept for the next scrape: a fresh one of tens of
	 * MB would be faulted in page by page at every scrape (10,000 series: 37 MB, ~9,000
	 * faults, a quarter of the GET's time). It is the memory a scrape needs anyway.
	 */
	char *spare;
	size_t spare_cap;
	struct http_gzip_state gz;	/* its stream and last gzipped body, kept likewise */
	bool verbose;
};

static void addr_str(const struct sockaddr *sa, char *out, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)sa;

		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		snprintf(out, len, "[%s]:%u", host, ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const void *)sa;

		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		snprintf(out, len, "%s:%u", host, ntohs(a->sin_port));
	}
}

/* A listening TCP socket on sa, or -errno. dual: an IPv6 wildcard that takes IPv4 as well. */
static int bind_listen(const struct sockaddr *sa, socklen_t len, bool dual)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1, v6only = !dual;
	int err;

	if (fd < 0)
		return -errno;
	/* A restart right after a stop must not wait for TIME_WAIT; two listeners still clash. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
	if (bind(fd, sa, len) || listen(fd, 128)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

static const char *bind_hint(int err)
{
	switch (err) {
	case EADDRINUSE:
		return " (is another exporter on that port? choose one with --listen)";
	case EADDRNOTAVAIL:
		return " (not an address of this host)";
	case EACCES:
		return " (ports below 1024 need CAP_NET_BIND_SERVICE)";
	default:
		return "";
	}
}

static int parse_port(const char *s, char *err, size_t errlen, const char *spec)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > 65535 || *s == '-' || *s == '+') {
		snprintf(err, errlen, "--listen '%s': the port must be a number from 0 to 65535 "
			 "(e.g. --listen localhost:9477, --listen :9477, --listen [::1]:9477)",
			 spec);
		return -1;
	}
	return (int)v;
}

int http_listen(const char *spec, char *where, size_t wherelen, char *err, size_t errlen)
{
	char host[256];
	const char *colon, *port_s;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res = NULL, *ai;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	int fd = -1, first_err = 0, rc;

	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host)) {
			snprintf(err, errlen,
				 "--listen '%s': expected [IPV6]:PORT, e.g. [::1]:9477", spec);
			return -EINVAL;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(close - spec - 1), spec + 1);
		port_s = close + 2;
		hints.ai_family = AF_INET6;
		hints.ai_flags |= AI_NUMERICHOST;
	} else {
		colon = strrchr(spec, ':');
		if (!colon) {
			snprintf(err, errlen, "--listen '%s': expected [ADDR]:PORT, e.g. "
				 "localhost:9477 or :9477 for every address", spec);
			return -EINVAL;
		}
		if (memchr(spec, ':', colon - spec)) {
			snprintf(err, errlen, "--listen '%s': an IPv6 address goes in brackets, "
				 "e.g. [::1]:9477", spec);
			return -EINVAL;
		}
		if ((size_t)(colon - spec) >= sizeof(host)) {
			snprintf(err, errlen, "--listen '%s': host name too long", spec);
			return -EINVAL;
		}
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
		port_s = colon + 1;
	}
	rc = parse_port(port_s, err, errlen, spec);
	if (rc < 0)
		return -EINVAL;

	if (!host[0]) {
		/* Every address: IPv6 and IPv4 on one socket, or IPv4 where IPv6 is off. */
		struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(rc),
					   .sin6_addr = IN6ADDR_ANY_INIT };
		struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(rc),
					  .sin_addr.s_addr = htonl(INADDR_ANY) };

		fd = bind_listen((struct sockaddr *)&a6, sizeof(a6), true);
		if (fd == -EAFNOSUPPORT)
			fd = bind_listen((struct sockaddr *)&a4, sizeof(a4), false);
		first_err = fd < 0 ? -fd : 0;
	} else {
		rc = getaddrinfo(host, port_s, &hints, &res);
		if (rc) {
			snprintf(err, errlen, "--listen '%s': cannot resolve '%s': %s", spec, host,
				 gai_strerror(rc));
			return -1;
		}
		/*
		 * The name's addresses until one binds, IPv4 first as Go's listeners do:
		 * "localhost" is then 127.0.0.1 on every host, whatever /etc/hosts lists first.
		 */
		for (int pass = 0; pass < 2; pass++) {
			for (ai = res; ai && fd < 0; ai = ai->ai_next) {
				if ((ai->ai_family == AF_INET) != (pass == 0))
					continue;
				fd = bind_listen(ai->ai_addr, ai->ai_addrlen, false);
				if (fd < 0 && !first_err)
					first_err = -fd;
			}
		}
		freeaddrinfo(res);
	}
	if (fd < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s%s", spec, strerror(first_err),
			 bind_hint(first_err));
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sslen) == 0)
		addr_str((struct sockaddr *)&ss, where, wherelen);
	else
		snprintf(where, wherelen, "%s", spec);
	return fd;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void wait_remove(struct http_server *srv, struct http_conn *c)
{
	if (!c->waiting)
		return;
	*(c->prev ? &c->prev->next : &srv->wait_head) = c->next;
	*(c->next ? &c->next->prev : &srv->wait_tail) = c->prev;
	c->prev = c->next = NULL;
	c->waiting = false;
}

/* c waits for a request from now on, for at most limit_s. */
static void wait_start(struct http_server *srv, struct http_conn *c, unsigned int limit_s)
{
	wait_remove(srv, c);
	c->since = now_s();
	c->limit_s = limit_s;
	c->prev = srv->wait_tail;
	*(srv->wait_tail ? &srv->wait_tail->next : &srv->wait_head) = c;
	srv->wait_tail = c;
	c->waiting = true;
}

/*
 * Closes a waiting connection: libmicrohttpd sees its end at once and closes it (it tells
 * on_connection() first, before the fd can be reused, and both run in our loop's thread).
 */
static void cut(struct http_server *srv, struct http_conn *c)
{
	wait_remove(srv, c);
	shutdown(c->fd, SHUT_RDWR);
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct http_server *srv = cls;
	struct http_conn *c = *socket_ctx;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);

		c = calloc(1, sizeof(*c));
		if (!c) {
			/* Out of memory: no deadline could be kept, so no connection. */
			if (fd)
				shutdown(fd->connect_fd, SHUT_RDWR);
			return;
		}
		c->fd = fd ? fd->connect_fd : -1;
		wait_start(srv, c, srv->lim.request_timeout_s);
		srv->nr_conns++;
		*socket_ctx = c;
	} else if (c) {
		wait_remove(srv, c);
		srv->nr_conns--;
		free(c);
		*socket_ctx = NULL;
	}
}

/* A new client while every connection is taken: the one that has waited longest makes room. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct http_server *srv = cls;

	(void)addr;
	(void)len;
	if (srv->nr_conns >= srv->lim.connections && srv->wait_head)
		cut(srv, srv->wait_head);
	return MHD_YES;
}

static struct http_conn *conn_of(struct MHD_Connection *mc)
{
	const union MHD_ConnectionInfo *i =
		MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return i ? i->socket_context : NULL;
}

/* The request is whole: answering it. A client that does not read is cut after idle_timeout_s. */
static void answering(struct http_server *srv, struct MHD_Connection *mc)
{
	struct http_conn *c = conn_of(mc);

	if (c)
		wait_remove(srv, c);
	MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, srv->lim.idle_timeout_s);
}

/* Answered: the connection stays open (keep-alive) for the next request, keepalive_s at most. */
static void on_completed(void *cls, struct MHD_Connection *mc, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct http_conn *c = conn_of(mc);

	(void)req;
	if (!c || toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		return;
	wait_start(srv, c, srv->lim.keepalive_s);
	MHD_set_connection_option(mc, MHD_CONNECTION_OPTION_TIMEOUT, srv->lim.keepalive_s);
}

/* Closes the connections that have waited past their deadline for a whole request. */
static void sweep(struct http_server *srv)
{
	double now = now_s();

	for (struct http_conn *c = srv->wait_head, *next; c; c = next) {
		next = c->next;
		if (now - c->since >= c->limit_s)
			cut(srv, c);
	}
}

static void *serve_loop(void *arg)
{
	struct http_server *srv = arg;
	double next_sweep = 0;

	while (!__atomic_load_n(&srv->stopping, __ATOMIC_ACQUIRE)) {
		if (MHD_run_wait(srv->d, SWEEP_MS) == MHD_NO) {
			/* Cannot happen with our options; never spin if it does. */
			struct timespec t = { 0, SWEEP_MS * 1000000L };

			nanosleep(&t, NULL);
		}
		if (now_s() >= next_sweep) {
			sweep(srv);
			next_sweep = now_s() + SWEEP_MS / 1000.0;
		}
	}
	return NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *type,
			     const char *body)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

struct body {
	struct http_server *srv;
	char *p;
	size_t len;
	size_t cap;
	bool gzip;		/* p is compressed: no buffer to render into */
};

/*
 * Called by the server thread once the response is sent or its connection gone: the buffer
 * becomes the spare unless there is one (concurrent scrapes), or it is much larger than what
 * scrapes need now (series that have gone).
 */
static void body_free(void *cls)
{
	struct body *b = cls;
	struct http_server *srv = b->srv;

	srv->inflight -= b->len;
	if (b->gzip && b->cap <= 2 * srv->size_hint + 64 * 1024) {
		http_gzip_give_back(&srv->gz, b->p, b->cap);
	} else if (!b->gzip && !srv->spare && b->cap <= 2 * srv->size_hint + 64 * 1024) {
		srv->spare = b->p;
		srv->spare_cap = b->cap;
	} else {
		free(b->p);
	}
	free(b);
}

/* The body compressed (http_gzip.h); the rendered buffer is the next scrape's. Out of
 * memory: it stays plain, which the client accepts as well. */
static void gzip_body(struct body *b)
{
	struct http_server *srv = b->srv;
	size_t len, cap;
	char *z = http_gzip_kept(&srv->gz, b->p, b->len, HTTP_GZIP_LEVEL, &len, &cap);

	if (!z)
		return;
	if (!srv->spare) {
		srv->spare = b->p;
		srv->spare_cap = b->cap;
	} else {
		free(b->p);
	}
	*b = (struct body){ srv, z, len, cap, true };
}

static enum MHD_Result metrics(struct http_server *srv, struct MHD_Connection *c)
{
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 MHD_HTTP_HEADER_ACCEPT);
	enum expo_format fmt = expo_negotiate(accept);
	struct expo_buf out = {};
	struct MHD_Response *r;
	struct body *b;
	enum MHD_Result ret;
	int err;

	/* Slow readers hold their responses: past the budget, new scrapes wait their turn. */
	if (srv->inflight > srv->lim.inflight_bytes)
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
			     "503 too many scrapes in progress, retry\n");
	/* The last response's buffer, or one pre-sized from the last scrape: no doubling
	 * copies of a large exposition. */
	if (srv->spare) {
		out.p = srv->spare;
		out.cap = srv->spare_cap;
		srv->spare = NULL;
	} else if (srv->size_hint) {
		out.cap = srv->size_hint + srv->size_hint / 8;
		out.p = malloc(out.cap);
		if (!out.p)
			out.cap = 0;
	}
	err = srv->fn(srv->ctx, fmt, &out);
	b = err ? NULL : malloc(sizeof(*b));
	if (!b) {
		expo_buf_free(&out);
		fprintf(stderr, "vmexit serve: cannot render the metrics: %s\n",
			strerror(err ? -err : ENOMEM));
		return reply(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
			     "500 cannot render the metrics (see vmexit's log)\n");
	}
	srv->size_hint = out.len;
	*b = (struct body){ srv, out.p, out.len, out.cap, false };
	if (http_gzip_accepted(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							   MHD_HTTP_HEADER_ACCEPT_ENCODING)))
		gzip_body(b);
	r = MHD_create_response_from_buffer_with_free_callback_cls(b->len, b->p, body_free, b);
	if (!r) {
		free(b->p);
		free(b);
		return MHD_NO;
	}
	srv->inflight += b->len;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, expo_content_type(fmt));
	if (b->gzip)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding");
	ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static const char index_page[] =
	"<!DOCTYPE html>\n<html><head><title>vmexit</title></head><body>\n"
	"<h1>vmexit</h1>\n<p>Why and for how long KVM guests leave guest mode.</p>\n"
	"<p><a href=\"/metrics\">Metrics</a></p>\n</body></html>\n";

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	static char request_seen;

	(void)version;
	(void)upload;
	/* Other methods are answered on the first call, before any body: libmicrohttpd then
	 * closes the connection rather than read one. */
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		answering(cls, c);
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			     "405 method not allowed: GET /metrics\n");
	}
	/*
	 * A GET is answered once it is whole: a response queued on the first call (the headers)
	 * closes the connection, as if a body were refused. A GET's body, if any, is dropped as
	 * it comes (the request deadline bounds it).
	 */
	if (!*req) {
		*req = &request_seen;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	answering(cls, c);
	if (!strcmp(url, "/metrics"))
		return metrics(cls, c);
	if (!strcmp(url, "/"))
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", index_page);
	return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
		     "404 not found: the metrics are at /metrics\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	fputs("vmexit serve: http: ", stderr);
	vfprintf(stderr, fmt, ap);
}

struct http_server *http_server_start(int fd, const struct http_limits *lim, http_render_fn fn,
				      void *ctx, bool verbose, char *err, size_t errlen)
{
	struct http_server *srv = calloc(1, sizeof(*srv));
	sigset_t block, old;

	if (!srv) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	srv->fn = fn;
	srv->ctx = ctx;
	srv->lim = *lim;
	srv->verbose = verbose;
	/* The server thread inherits this mask: signals go to the main thread, which acts. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	/*
	 * Past lim->connections the longest waiting connection is cut for each new one
	 * (on_accept()); the cuts take effect at the loop's next turn, so libmicrohttpd's own
	 * limit, at which it stops accepting, leaves room for the connections accepted until then.
	 * The logger goes first: libmicrohttpd warns about options parsed before it.
	 */
	srv->d = MHD_start_daemon(
		MHD_USE_EPOLL | (verbose ? MHD_USE_ERROR_LOG : 0), 0, on_accept, srv, on_request,
		srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_LISTEN_SOCKET, fd,
		MHD_OPTION_CONNECTION_LIMIT,
		lim->connections + lim->connections / 8 + 1, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		lim->conn_memory, MHD_OPTION_CONNECTION_TIMEOUT, lim->idle_timeout_s,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, srv, MHD_OPTION_NOTIFY_COMPLETED,
		on_completed, srv, MHD_OPTION_END);
	if (srv->d && pthread_create(&srv->thread, NULL, serve_loop, srv)) {
		MHD_stop_daemon(srv->d);
		srv->d = NULL;
		fd = -1;	/* closed with the daemon */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!srv->d) {
		if (fd >= 0)
			close(fd);
		free(srv);
		snprintf(err, errlen, "cannot start the HTTP server (libmicrohttpd)");
		return NULL;
	}
	return srv;
}

void http_server_stop(struct http_server *srv)
{
	if (!srv)
		return;
	__atomic_store_n(&srv->stopping, true, __ATOMIC_RELEASE);
	pthread_join(srv->thread, NULL);
	MHD_stop_daemon(srv->d);	/* closes the connections and the listening socket */
	free(srv->spare);
	http_gzip_state_free(&srv->gz);
	free(srv);
}
