// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include "qmp_client.h"
#include "text_escape.h"

/* A reply larger than this is no `info` output vmexit asks for. */
#define QMP_MSG_MAX	(8u << 20)
/* JSON nesting skipped over in a reply (QMP's own replies nest a few levels). */
#define JSON_DEPTH_MAX	64

struct qmp_conn {
	int fd;
	long long deadline;	/* CLOCK_MONOTONIC, ms */
	int timeout_ms;
	char *buf;
	size_t start, len, cap;	/* buf[start, len): received, not yet taken */
	char *err;
	size_t errlen;
};

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int say(struct qmp_conn *c, int rc, const char *fmt, const char *arg)
{
	snprintf(c->err, c->errlen, fmt, arg);
	return rc;
}

static int timed_out(struct qmp_conn *c)
{
	snprintf(c->err, c->errlen, "no answer within %d ms", c->timeout_ms);
	return -ETIMEDOUT;
}

/* Until fd is ready for ev, or the deadline. 0 or -errno (said). */
static int wait_fd(struct qmp_conn *c, short ev)
{
	struct pollfd p = { .fd = c->fd, .events = ev };

	for (;;) {
		long long left = c->deadline - mono_ms();
		int r;

		if (left <= 0)
			return timed_out(c);
		r = poll(&p, 1, (int)left);
		if (r > 0)
			return 0;
		if (!r)
			return timed_out(c);
		if (errno != EINTR)
			return say(c, -errno, "poll: %s", strerror(errno));
	}
}

/* After a send or recv that failed: 0 to try again (interrupted, or the socket is ready). */
static int io_retry(struct qmp_conn *c, const char *what, short ev)
{
	if (errno == EINTR)
		return 0;
	if (errno == EAGAIN)
		return wait_fd(c, ev);
	snprintf(c->err, c->errlen, "cannot %s: %s", what, strerror(errno));
	return -errno;
}

static int send_all(struct qmp_conn *c, const char *msg)
{
	size_t n = strlen(msg), off = 0;

	while (off < n) {
		ssize_t w = send(c->fd, msg + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		int err;

		if (w >= 0) {
			off += w;
			continue;
		}
		err = io_retry(c, "send", POLLOUT);
		if (err)
			return err;
	}
	return 0;
}

/* The next message (QMP ends each with a newline, which no JSON string holds raw). */
static int read_msg(struct qmp_conn *c, char **msg)
{
	for (;;) {
		char *nl = c->len > c->start ? memchr(c->buf + c->start, '\n', c->len - c->start)
					     : NULL;
		ssize_t r;
		int err;

		if (nl) {
			*nl = '\0';
			*msg = c->buf + c->start;
			c->start = nl + 1 - c->buf;
			return 0;
		}
		if (c->start) {
			memmove(c->buf, c->buf + c->start, c->len - c->start);
			c->len -= c->start;
			c->start = 0;
		}
		if (c->len + 1 >= c->cap) {
			char *b;

			if (c->cap >= QMP_MSG_MAX)
				return say(c, -EMSGSIZE, "sent a message over %s", "8 MiB");
			b = realloc(c->buf, c->cap ? c->cap * 2 : 65536);
			if (!b)
				return say(c, -ENOMEM, "%s", strerror(ENOMEM));
			c->buf = b;
			c->cap = c->cap ? c->cap * 2 : 65536;
		}
		r = recv(c->fd, c->buf + c->len, c->cap - c->len - 1, MSG_DONTWAIT);
		if (r > 0) {
			c->len += r;
			continue;
		}
		if (!r)
			return say(c, -ECONNRESET, "%s", "closed the connection");
		err = io_retry(c, "read", POLLIN);
		if (err)
			return err;
	}
}

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int d = p[i] >= '0' && p[i] <= '9'   ? p[i] - '0'
			: p[i] >= 'a' && p[i] <= 'f' ? p[i] - 'a' + 10
			: p[i] >= 'A' && p[i] <= 'F' ? p[i] - 'A' + 10
						     : -1;

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = cp;
	} else if (cp < 0x800) {
		*o++ = 0xc0 | cp >> 6;
		*o++ = 0x80 | (cp & 0x3f);
	} else if (cp < 0x10000) {
		*o++ = 0xe0 | cp >> 12;
		*o++ = 0x80 | (cp >> 6 & 0x3f);
		*o++ = 0x80 | (cp & 0x3f);
	} else {
		*o++ = 0xf0 | cp >> 18;
		*o++ = 0x80 | (cp >> 12 & 0x3f);
		*o++ = 0x80 | (cp >> 6 & 0x3f);
		*o++ = 0x80 | (cp & 0x3f);
	}
	return o;
}

/*
 * The JSON string at *pp (at its opening quote), decoded into out when not NULL (never longer
 * than the literal, NUL-terminated); *pp moves past it. false if it is no string.
 */
static bool json_string(const char **pp, char *out)
{
	const char *p = *pp;

	if (*p++ != '"')
		return false;
	for (; *p != '"'; p++) {
		unsigned cp;
		int hi, lo;

		if (!*p)
			return false;
		if (*p != '\\') {
			if (out)
				*out++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': cp = '\n'; break;
		case 't': cp = '\t'; break;
		case 'r': cp = '\r'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case '"': case '\\': case '/': cp = *p; break;
		case 'u':
			hi = hex4(p + 1);
			if (hi < 0)
				return false;
			p += 4;
			cp = hi;
			/* A surrogate pair is one character; a lone surrogate none (U+FFFD). */
			if (hi >= 0xd800 && hi < 0xdc00 && p[1] == '\\' && p[2] == 'u' &&
			    (lo = hex4(p + 3)) >= 0xdc00 && lo < 0xe000) {
				cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if (hi >= 0xd800 && hi < 0xe000) {
				cp = 0xfffd;
			}
			break;
		default:
			return false;
		}
		if (out)
			out = put_utf8(out, cp);
	}
	if (out)
		*out = '\0';
	*pp = p + 1;
	return true;
}

/* Past the JSON value at p; NULL if it is none. */
static const char *json_skip(const char *p, int depth)
{
	char close;

	p = json_ws(p);
	if (*p == '"')
		return json_string(&p, NULL) ? p : NULL;
	if (*p != '{' && *p != '[') {
		const char *s = p;

		while (*p && strchr("0123456789+-.eEtruefalsn", *p))
			p++;
		return p > s ? p : NULL;
	}
	if (depth >= JSON_DEPTH_MAX)
		return NULL;
	close = *p == '{' ? '}' : ']';
	p = json_ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (close == '}') {
			if (!json_string(&p, NULL))
				return NULL;
			p = json_ws(p);
			if (*p++ != ':')
				return NULL;
		}
		p = json_skip(p, depth + 1);
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p == close)
			return p + 1;
		if (*p++ != ',')
			return NULL;
		p = json_ws(p);
	}
}

/* The value of member key of the JSON object at obj (whitespace skipped), or NULL. */
static const char *json_member(const char *obj, const char *key)
{
	const char *p = json_ws(obj), *k;
	size_t klen = strlen(key);

	if (*p++ != '{')
		return NULL;
	for (p = json_ws(p); *p == '"'; p = json_ws(p)) {
		k = p;
		if (!json_string(&p, NULL))
			return NULL;
		p = json_ws(p);
		if (*p++ != ':')
			return NULL;
		p = json_ws(p);
		if ((size_t)(p - k) >= klen + 3 && !memcmp(k + 1, key, klen) && k[klen + 1] == '"')
			return p;
		p = json_skip(p, 1);
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p != ',')
			return NULL;
		p++;
	}
	return NULL;
}

static int not_qmp(struct qmp_conn *c)
{
	return say(c, -EPROTO, "%s", "answered something that is not QMP");
}

/* The reply to the command just sent (events skipped): its "return" value, in buf. */
static int reply(struct qmp_conn *c, const char **ret)
{
	char desc[200], shown[4 * sizeof(desc)], *msg;
	const char *v;
	int err;

	for (;;) {
		err = read_msg(c, &msg);
		if (err)
			return err;
		if (json_member(msg, "event"))
			continue;
		*ret = json_member(msg, "return");
		if (*ret)
			return 0;
		v = json_member(msg, "error");
		if (!v)
			return not_qmp(c);
		v = json_member(v, "desc");
		/* A description longer than the note has room for is cut. */
		if (!v || *v != '"' || strlen(v) >= sizeof(desc) || !json_string(&v, desc))
			snprintf(desc, sizeof(desc), "(no description)");
		/* The server's text goes to a terminal: no escape sequence or line of its own. */
		snprintf(c->err, c->errlen, "refused the command: %s", text_esc(shown, desc));
		return -EPROTO;
	}
}

static int converse(struct qmp_conn *c, const char *command_line, char **text)
{
	size_t n = strlen(command_line);
	char *msg, *req = malloc(JSON_ESC_MAX(n) + 96), *p;
	const char *ret;
	int err;

	if (!req)
		return say(c, -ENOMEM, "%s", strerror(ENOMEM));
	err = read_msg(c, &msg);
	if (err)
		goto out;
	if (!json_member(msg, "QMP")) {
		err = not_qmp(c);
		goto out;
	}
	err = send_all(c, "{\"execute\":\"qmp_capabilities\"}\n");
	if (!err)
		err = reply(c, &ret);
	if (err)
		goto out;
	p = req + sprintf(req, "{\"execute\":\"human-monitor-command\",\"arguments\":"
			  "{\"command-line\":");
	p = json_esc(p, command_line);
	strcpy(p, "}}\n");
	err = send_all(c, req);
	if (!err)
		err = reply(c, &ret);
	if (err)
		goto out;
	*text = malloc(strlen(ret) + 1);
	if (!*text) {
		err = say(c, -ENOMEM, "%s", strerror(ENOMEM));
	} else if (*ret != '"' || !json_string(&ret, *text)) {
		free(*text);
		*text = NULL;
		err = not_qmp(c);
	}
out:
	free(req);
	return err;
}

int qmp_hmp_ask(const char *path, const char *command_line, int timeout_ms, char **text,
		int *server_pid, char *err, size_t errlen)
{
	struct qmp_conn c = { .fd = -1, .deadline = mono_ms() + timeout_ms,
			      .timeout_ms = timeout_ms, .err = err, .errlen = errlen };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct stat st;
	int rc;

	*text = NULL;
	if (stat(path, &st))
		return say(&c, -errno, "%s", errno == ENOENT ? "no such socket" : strerror(errno));
	if (!S_ISSOCK(st.st_mode))
		return say(&c, -ENOTSOCK, "%s", "is not a socket");
	if (strlen(path) >= sizeof(sa.sun_path))
		return say(&c, -ENAMETOOLONG, "%s", "path too long for a socket");
	strcpy(sa.sun_path, path);
	c.fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c.fd < 0)
		return say(&c, -errno, "socket: %s", strerror(errno));
	/* A unix socket's connect does not wait: EAGAIN is a full backlog (a server stuck). */
	if (connect(c.fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = errno == EAGAIN ? timed_out(&c)
				     : say(&c, -errno, "cannot connect: %s", strerror(errno));
		goto out;
	}
	if (getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		rc = say(&c, -errno, "SO_PEERCRED: %s", strerror(errno));
		goto out;
	}
	*server_pid = cred.pid;
	rc = converse(&c, command_line, text);
out:
	close(c.fd);
	free(c.buf);
	return rc;
}
