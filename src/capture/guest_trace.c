// SPDX-License-Identifier: GPL-2.0
/*
 * Chrome trace-event JSON of a guest (guest_trace.h): a small recursive-descent reader over
 * the file as it is read, exact on the timestamps (a double loses TSC ticks past 2^53).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest_trace.h"
#include "tracedat_file.h"

#define NAME_MAX_LEN	512	/* longer event names are cut */
#define DEPTH_MAX	64
/*
 * The file is parsed as it is read, through a window of this size: memory follows the events
 * kept, not the file (a 1 GB trace, /dev/zero or a pipe cost the window, no more). The parser
 * looks at most 5 bytes ahead ("false"), so the window never grows.
 */
#define WINDOW		(64u << 10)
/* The largest time a trace can hold: the number times 1000 (ticks or ns) in 64 bits. */
#define TIME_MAX_TEXT	"18446744073709551.615"

struct jp {
	const char *path;
	int fd;			/* -1: all of the input is in the window already */
	char *own;		/* the window, when reading fd */
	const char *s, *p, *end;	/* the window's start, the next byte, its end */
	unsigned long long base;	/* the file offset of s */
	const char *counted;	/* lines are counted up to here... */
	unsigned int line;	/* ...and this is its line: the parser only moves forward */
	bool eof;
	int read_errno;		/* a read that failed ends the input */
	char *err;
	size_t errlen;
	bool failed;
};

static unsigned int line_of(struct jp *j, const char *at)
{
	for (; j->counted < at; j->counted++)
		j->line += *j->counted == '\n';
	return j->line;
}

/* Slides the window to p and reads until n bytes are there or the input ends. */
static bool refill(struct jp *j, size_t n)
{
	size_t keep;

	if (j->eof)
		return false;
	line_of(j, j->p);
	keep = j->end - j->p;
	j->base += j->p - j->s;
	memmove(j->own, j->p, keep);
	j->s = j->p = j->counted = j->own;
	j->end = j->own + keep;
	while ((size_t)(j->end - j->p) < n && !j->eof) {
		ssize_t got = read(j->fd, j->own + keep, WINDOW - keep);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			j->read_errno = errno;
		if (got <= 0) {
			j->eof = true;
			break;
		}
		keep += got;
		j->end = j->own + keep;
	}
	return (size_t)(j->end - j->p) >= n;
}

/* Whether n more bytes (n <= 5) are there to read at j->p. */
static inline bool more(struct jp *j, size_t n)
{
	return (size_t)(j->end - j->p) >= n || refill(j, n);
}

/* The next byte, not taken; -1 at the end of the input. */
static inline int peek(struct jp *j)
{
	return more(j, 1) ? (unsigned char)*j->p : -1;
}

static int fail_at(struct jp *j, unsigned int line, const char *fmt, va_list ap)
{
	char what[256];

	if (j->failed)
		return -EINVAL;
	j->failed = true;
	vsnprintf(what, sizeof(what), fmt, ap);
	if (!line && !more(j, 1))
		snprintf(j->err, j->errlen, "%s: offset %llu: the file ends inside the trace (%s): "
			 "truncated", j->path, j->base + (j->end - j->s), what);
	else
		snprintf(j->err, j->errlen, "%s:%u: %s", j->path, line ? line : line_of(j, j->p),
			 what);
	return -EINVAL;
}

/* What is wrong at the next byte (or that the input ends). */
static int __attribute__((format(printf, 2, 3))) fail(struct jp *j, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fail_at(j, 0, fmt, ap);
	va_end(ap);
	return ret;
}

/* What is wrong with the value that starts on line. */
static int __attribute__((format(printf, 3, 4))) fail_line(struct jp *j, unsigned int line,
							     const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fail_at(j, line, fmt, ap);
	va_end(ap);
	return ret;
}

static void ws(struct jp *j)
{
	int c;

	while ((c = peek(j)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		j->p++;
}

static bool eat(struct jp *j, char c)
{
	ws(j);
	if (peek(j) == (unsigned char)c) {
		j->p++;
		return true;
	}
	return false;
}

/* The 4 hex digits at p, or -1: never more than those 4 bytes are read. */
static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

/*
 * A string into buf (cut at len - 1), or skipped. \u escapes outside ASCII become '?', and so
 * does a NUL (escaped or not), which would otherwise cut the name short where the trace has
 * more: the record format shows a NUL in a guest name the same way.
 */
static int string(struct jp *j, char *buf, size_t len)
{
	size_t n = 0;
	int c;

	if (!eat(j, '"'))
		return fail(j, "a string was expected");
	while ((c = peek(j)) >= 0 && c != '"') {
		j->p++;
		if (c == '\\') {
			if ((c = peek(j)) < 0)
				break;
			j->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u':
				if (!more(j, 4) || (c = hex4(j->p)) < 0)
					return fail(j, "a bad \\u escape");
				j->p += 4;
				if (c >= 0x80)
					c = '?';
				break;
			default: break;	/* \" \\ \/ stand for themselves */
			}
		}
		if (!c)
			c = '?';
		if (buf && n + 1 < len)
			buf[n++] = (char)c;
	}
	if (buf)
		buf[n] = '\0';
	if (c < 0)
		return fail(j, "a string");
	j->p++;
	return 0;
}

#define TXT_MAX		63

/* c appended to the text of a number (tl < TXT_MAX): past that, only counted. */
static void keep(char *txt, size_t *tl, int c)
{
	if (*tl < TXT_MAX)
		txt[*tl] = (char)c;
	(*tl)++;
}

static bool digit(int c)
{
	return c >= '0' && c <= '9';
}

/*
 * A number as fixed point times 1000 into *v, exactly (digits past the third decimal round);
 * one with an exponent goes through strtod. *neg set for a negative one. what names the value
 * for the error when it does not fit in 64 bits; v NULL: the number is only skipped.
 */
static int number(struct jp *j, __u64 *v, bool *neg, const char *what)
{
	char txt[TXT_MAX + 1];	/* the number's text for strtod; a longer one is refused */
	size_t tl = 0;
	__u64 ip = 0, fp = 0, t;
	int digits = 0, fd = 0, c;
	bool round_up = false, big = false;

	ws(j);
	*neg = peek(j) == '-';
	if (*neg) {
		keep(txt, &tl, '-');
		j->p++;
	}
	for (; digit(c = peek(j)); j->p++, digits++) {
		big |= __builtin_mul_overflow(ip, 10, &ip) ||
		       __builtin_add_overflow(ip, c - '0', &ip);
		keep(txt, &tl, c);
	}
	if (c == '.') {
		keep(txt, &tl, c);
		for (j->p++; digit(c = peek(j)); j->p++, fd++) {
			if (fd < 3)
				fp = fp * 10 + (c - '0');
			else if (fd == 3)
				round_up = c >= '5';
			keep(txt, &tl, c);
		}
	}
	if (!digits && !fd)
		return fail(j, "a number was expected");
	if (c == 'e' || c == 'E') {
		double d;

		keep(txt, &tl, c);
		j->p++;
		c = peek(j);
		if (c == '+' || c == '-') {
			keep(txt, &tl, c);
			j->p++;
		}
		if (!digit(peek(j)))
			return fail(j, "a bad exponent");
		for (; digit(c = peek(j)); j->p++)
			keep(txt, &tl, c);
		if (!v)
			return 0;
		if (tl >= TXT_MAX)
			return fail(j, "a %s of %d characters or more", what, TXT_MAX);
		txt[tl] = '\0';
		d = strtod(txt, NULL);
		*neg = d < 0;
		d = (d < 0 ? -d : d) * 1000 + 0.5;
		/* A double past 2^64 would convert to anything (undefined behaviour). */
		if (!(d < 0x1p64))
			return fail(j, "%s too large: past " TIME_MAX_TEXT, what);
		*v = (__u64)d;
		return 0;
	}
	if (c < 0)
		return fail(j, "a number");
	if (!v)
		return 0;
	for (; fd < 3; fd++)
		fp *= 10;
	if (big || __builtin_mul_overflow(ip, 1000, &t) || __builtin_add_overflow(t, fp, &t) ||
	    __builtin_add_overflow(t, round_up, &t))
		return fail(j, "%s too large: past " TIME_MAX_TEXT, what);
	*v = t;
	return 0;
}

typedef int (*member_fn)(struct jp *j, const char *key, void *ctx);

/* An object's members: fn reads each value, after its key (cut at 31 bytes) and ':'. */
static int members(struct jp *j, member_fn fn, void *ctx)
{
	char key[32];
	int ret;

	if (!eat(j, '{'))
		return fail(j, "an object was expected");
	if (eat(j, '}'))
		return 0;
	do {
		if (string(j, key, sizeof(key)))
			return -EINVAL;
		if (!eat(j, ':'))
			return fail(j, "':' was expected");
		ret = fn(j, key, ctx);
		if (ret)
			return ret;
	} while (eat(j, ','));
	if (!eat(j, '}'))
		return fail(j, "'}' or ',' was expected");
	return 0;
}

static int skip_value(struct jp *j, int depth);

static int skip_member(struct jp *j, const char *key, void *ctx)
{
	(void)key;
	return skip_value(j, *(int *)ctx + 1);
}

static int skip_array(struct jp *j, int depth)
{
	j->p++;
	if (eat(j, ']'))
		return 0;
	do {
		if (skip_value(j, depth + 1))
			return -EINVAL;
	} while (eat(j, ','));
	if (!eat(j, ']'))
		return fail(j, "']' or ',' was expected");
	return 0;
}

static int skip_value(struct jp *j, int depth)
{
	bool neg;

	if (depth > DEPTH_MAX)
		return fail(j, "values nested too deep");
	ws(j);
	if (peek(j) < 0)
		return fail(j, "a value");
	switch (*j->p) {
	case '"':
		return string(j, NULL, 0);
	case '{':
		return members(j, skip_member, &depth);
	case '[':
		return skip_array(j, depth);
	case 't':
	case 'f':
	case 'n': {
		static const char *const words[] = { "true", "false", "null" };

		for (int i = 0; i < 3; i++) {
			size_t l = strlen(words[i]);

			if (more(j, l) && !memcmp(j->p, words[i], l)) {
				j->p += l;
				return 0;
			}
		}
		return fail(j, "a value was expected");
	}
	default:
		return number(j, NULL, &neg, NULL);
	}
}

/* An integer field (pid, tid, vcpu): a number, or a string of one (some writers quote). */
static int integer(struct jp *j, __s64 *out, const char *what)
{
	__u64 v;
	bool neg;

	ws(j);
	if (peek(j) == '"') {
		char buf[32];

		if (string(j, buf, sizeof(buf)))
			return -EINVAL;
		*out = strtoll(buf, NULL, 0);
		return 0;
	}
	if (number(j, &v, &neg, what))
		return -EINVAL;
	*out = (neg ? -(__s64)(v / 1000) : (__s64)(v / 1000));
	return 0;
}

/* args: only vcpu is wanted. */
static int arg_member(struct jp *j, const char *key, void *ctx)
{
	struct guest_trace_event *e = ctx;
	__s64 v;

	if (strcmp(key, "vcpu"))
		return skip_value(j, 2);
	if (integer(j, &v, "vcpu"))
		return -EINVAL;
	e->vcpu = v >= 0 && v < (1 << 20) ? (__s32)v : -1;
	return 0;
}

struct event_read {
	struct guest_trace_event e;
	char ph[8];
	char name[NAME_MAX_LEN];
	bool has_ts;
};

static int non_negative(struct jp *j, __u64 *v, const char *what)
{
	bool neg;

	if (number(j, v, &neg, what))
		return -EINVAL;
	return neg ? fail(j, "a negative %s", what) : 0;
}

static int event_member(struct jp *j, const char *key, void *ctx)
{
	struct event_read *r = ctx;

	if (!strcmp(key, "ts")) {
		r->has_ts = true;
		return non_negative(j, &r->e.ts, "ts");
	}
	if (!strcmp(key, "dur"))
		return non_negative(j, &r->e.dur, "dur");
	if (!strcmp(key, "ph"))
		return string(j, r->ph, sizeof(r->ph));
	if (!strcmp(key, "name"))
		return string(j, r->name, sizeof(r->name));
	if (!strcmp(key, "pid"))
		return integer(j, &r->e.pid, "pid");
	if (!strcmp(key, "tid"))
		return integer(j, &r->e.tid, "tid");
	if (!strcmp(key, "args")) {
		ws(j);
		if (peek(j) == '{')
			return members(j, arg_member, &r->e);
	}
	return skip_value(j, 1);
}

static int event(struct jp *j, guest_trace_fn fn, void *ctx)
{
	struct event_read r = { .e = { .pid = -1, .tid = -1, .vcpu = -1 } };
	__u64 end;

	ws(j);
	r.e.line = line_of(j, j->p);
	if (members(j, event_member, &r))
		return -EINVAL;
	r.e.ph = r.ph[0] == 'I' ? 'i' : r.ph[0];
	if (r.ph[1] || !strchr("BEXi", r.e.ph) || !r.e.ph)
		return 0;	/* metadata and the phases not drawn */
	if (!r.has_ts)
		return fail_line(j, r.e.line, "an event of phase %s has no ts", r.ph);
	if (r.e.ph == 'X' && __builtin_add_overflow(r.e.ts, r.e.dur, &end))
		return fail_line(j, r.e.line, "ts + dur too large: past " TIME_MAX_TEXT);
	r.e.name = r.name;
	return fn(ctx, &r.e);
}

static int events(struct jp *j, guest_trace_fn fn, void *ctx)
{
	int ret;

	if (!eat(j, '['))
		return fail(j, "the event array was expected");
	if (eat(j, ']'))
		return 0;
	do {
		/* A trailing comma before ']' is common in hand-cut traces. */
		if (eat(j, ']'))
			return 0;
		ret = event(j, fn, ctx);
		if (ret)
			return ret;
	} while (eat(j, ','));
	if (!eat(j, ']'))
		return fail(j, "']' or ',' was expected");
	return 0;
}

struct doc_read {
	guest_trace_fn fn;
	void *ctx;
	bool found;
	enum guest_trace_kind kind;
};

/* uftrace dump --chrome says who wrote it: metadata.version "uftrace v0.13 ...". */
static int meta_member(struct jp *j, const char *key, void *ctx)
{
	struct doc_read *d = ctx;
	char v[16];

	ws(j);
	if (strcmp(key, "version") || peek(j) != '"')
		return skip_value(j, 2);
	if (string(j, v, sizeof(v)))
		return -EINVAL;
	if (!strncmp(v, "uftrace", 7))
		d->kind = GUEST_TRACE_UFTRACE;
	return 0;
}

static int doc_member(struct jp *j, const char *key, void *ctx)
{
	struct doc_read *d = ctx;

	ws(j);
	if (!strcmp(key, "metadata") && peek(j) == '{')
		return members(j, meta_member, d);
	if (strcmp(key, "traceEvents"))
		return skip_value(j, 1);
	d->found = true;
	return events(j, d->fn, d->ctx);
}

static int document(struct jp *j, guest_trace_fn fn, void *ctx, enum guest_trace_kind *kind)
{
	struct doc_read d = { .fn = fn, .ctx = ctx };
	int ret;

	ws(j);
	if (peek(j) == '[') {
		ret = events(j, fn, ctx);
	} else if (peek(j) == '{') {
		ret = members(j, doc_member, &d);
		if (!ret && !d.found)
			return fail_line(j, 1, "no \"traceEvents\" array: not a Chrome trace");
	} else {
		return fail(j, "not a Chrome trace: '{' or '[' was expected");
	}
	if (ret)
		return ret;
	ws(j);
	if (peek(j) >= 0)
		return fail(j, "data after the trace");
	if (kind)
		*kind = d.kind;
	return 0;
}

/* The document, and a read that failed under it said instead of what it cut short. */
static int parse(struct jp *j, guest_trace_fn fn, void *ctx, enum guest_trace_kind *kind)
{
	int ret;

	j->counted = j->p = j->s;
	j->line = 1;
	ret = document(j, fn, ctx, kind);
	if (j->read_errno) {
		snprintf(j->err, j->errlen, "%s: offset %llu: %s", j->path,
			 j->base + (j->end - j->s), strerror(j->read_errno));
		return -j->read_errno;
	}
	return ret;
}

int guest_trace_read_mem(const char *name, const void *data, size_t len, guest_trace_fn fn,
			 void *ctx, char *err, size_t errlen)
{
	struct jp j = { .path = name, .fd = -1, .s = data, .end = (const char *)data + len,
			.eof = true, .err = err, .errlen = errlen };

	if (len >= TRACEDAT_MAGIC_LEN && !memcmp(data, TRACEDAT_MAGIC, TRACEDAT_MAGIC_LEN)) {
		snprintf(err, errlen, "%s: a trace.dat is read from a file", name);
		return -EINVAL;
	}
	return parse(&j, fn, ctx, NULL);
}

int guest_trace_read_kind(const char *path, guest_trace_fn fn, void *ctx,
			  enum guest_trace_kind *kind, char *err, size_t errlen)
{
	struct jp j = { .path = path, .err = err, .errlen = errlen };
	enum guest_trace_kind k = GUEST_TRACE_JSON;
	int ret;

	j.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (j.fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	j.own = malloc(WINDOW);
	if (!j.own) {
		close(j.fd);
		snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	j.s = j.p = j.end = j.counted = j.own;
	/* A guest's trace.dat goes to libtracecmd, which reads the file itself. */
	if (more(&j, TRACEDAT_MAGIC_LEN) && !memcmp(j.p, TRACEDAT_MAGIC, TRACEDAT_MAGIC_LEN)) {
		free(j.own);
		close(j.fd);
		if (kind)
			*kind = GUEST_TRACE_TRACEDAT;
		return guest_tracedat_read(path, fn, ctx, err, errlen);
	}
	ret = parse(&j, fn, ctx, &k);
	free(j.own);
	close(j.fd);
	if (kind)
		*kind = k;
	return ret;
}

int guest_trace_read(const char *path, guest_trace_fn fn, void *ctx, char *err, size_t errlen)
{
	return guest_trace_read_kind(path, fn, ctx, NULL, err, errlen);
}
