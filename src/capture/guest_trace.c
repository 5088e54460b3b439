// SPDX-License-Identifier: GPL-2.0
/*
 * Chrome trace-event JSON of a guest (guest_trace.h): a small recursive-descent reader over
 * the file in memory, exact on the timestamps (a double loses TSC ticks past 2^53).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest_trace.h"
#include "tracedat_file.h"

#define NAME_MAX_LEN	512	/* longer event names are cut */
#define DEPTH_MAX	64

struct jp {
	const char *path;
	const char *s, *p, *end;
	const char *counted;	/* lines are counted up to here... */
	unsigned int line;	/* ...and this is its line: events come in file order */
	char *err;
	size_t errlen;
	bool failed;
};

static unsigned int line_of(struct jp *j, const char *at)
{
	if (at < j->counted) {
		j->counted = j->s;
		j->line = 1;
	}
	for (; j->counted < at; j->counted++)
		j->line += *j->counted == '\n';
	return j->line;
}

static int fail(struct jp *j, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	if (j->failed)
		return -EINVAL;
	j->failed = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (j->p >= j->end)
		snprintf(j->err, j->errlen, "%s: offset %zu: the file ends inside the trace (%s): "
			 "truncated", j->path, (size_t)(j->end - j->s), what);
	else
		snprintf(j->err, j->errlen, "%s:%u: %s", j->path, line_of(j, j->p), what);
	return -EINVAL;
}

static void ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static bool eat(struct jp *j, char c)
{
	ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

/* A string into buf (cut at len - 1; \u escapes outside ASCII become '?'), or skipped. */
static int string(struct jp *j, char *buf, size_t len)
{
	size_t n = 0;

	if (!eat(j, '"'))
		return fail(j, "a string was expected");
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++;

		if (c == '\\') {
			if (j->p >= j->end)
				break;
			c = *j->p++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned int u;

				if (j->end - j->p < 4 || sscanf(j->p, "%4x", &u) != 1)
					return fail(j, "a bad \\u escape");
				j->p += 4;
				c = u < 0x80 ? (char)u : '?';
				break;
			}
			default: break;	/* \" \\ \/ stand for themselves */
			}
		}
		if (buf && n + 1 < len)
			buf[n++] = c;
	}
	if (buf)
		buf[n] = '\0';
	if (j->p >= j->end)
		return fail(j, "a string");
	j->p++;
	return 0;
}

/*
 * A non-negative number as fixed point times 1000, exactly (digits past the third decimal
 * round); an exponent goes through strtod. *neg set for a negative one.
 */
static int number(struct jp *j, __u64 *v, bool *neg)
{
	const char *q = j->p;
	__u64 ip = 0, fp = 0;
	int digits = 0, fd = 0;
	bool round_up = false;

	ws(j);
	q = j->p;
	*neg = q < j->end && *q == '-';
	q += *neg;
	while (q < j->end && *q >= '0' && *q <= '9') {
		if (ip > (~0ull - 9) / 10 / 1000)
			return fail(j, "a number too large");
		ip = ip * 10 + (*q++ - '0');
		digits++;
	}
	if (q < j->end && *q == '.') {
		q++;
		while (q < j->end && *q >= '0' && *q <= '9') {
			if (fd < 3)
				fp = fp * 10 + (*q - '0');
			else if (fd == 3)
				round_up = *q >= '5';
			fd++;
			q++;
		}
	}
	if (!digits && !fd)
		return fail(j, "a number was expected");
	if (q < j->end && (*q == 'e' || *q == 'E')) {
		char tmp[64];
		double d;
		size_t l;

		while (q < j->end && q - j->p + 1 < (long)sizeof(tmp) &&
		       strchr("0123456789+-.eE", *q))
			q++;
		l = q - j->p;
		memcpy(tmp, j->p, l);
		tmp[l] = '\0';
		d = strtod(tmp, NULL);
		j->p = q;
		*neg = d < 0;
		*v = (__u64)((d < 0 ? -d : d) * 1000 + 0.5);
		return 0;
	}
	if (q >= j->end)
		return fail(j, "a number");
	for (; fd < 3; fd++)
		fp *= 10;
	j->p = q;
	*v = ip * 1000 + fp + round_up;
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
	__u64 v;
	bool neg;

	if (depth > DEPTH_MAX)
		return fail(j, "values nested too deep");
	ws(j);
	if (j->p >= j->end)
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

			if ((size_t)(j->end - j->p) >= l && !memcmp(j->p, words[i], l)) {
				j->p += l;
				return 0;
			}
		}
		return fail(j, "a value was expected");
	}
	default:
		return number(j, &v, &neg);
	}
}

/* An integer field (pid, tid, vcpu): a number, or a string of one (some writers quote). */
static int integer(struct jp *j, __s64 *out)
{
	__u64 v;
	bool neg;

	ws(j);
	if (j->p < j->end && *j->p == '"') {
		char buf[32];

		if (string(j, buf, sizeof(buf)))
			return -EINVAL;
		*out = strtoll(buf, NULL, 0);
		return 0;
	}
	if (number(j, &v, &neg))
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
	if (integer(j, &v))
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

	if (number(j, v, &neg))
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
		return integer(j, &r->e.pid);
	if (!strcmp(key, "tid"))
		return integer(j, &r->e.tid);
	if (!strcmp(key, "args")) {
		ws(j);
		if (j->p < j->end && *j->p == '{')
			return members(j, arg_member, &r->e);
	}
	return skip_value(j, 1);
}

static int event(struct jp *j, guest_trace_fn fn, void *ctx)
{
	struct event_read r = { .e = { .pid = -1, .tid = -1, .vcpu = -1 } };
	const char *at;

	ws(j);
	at = j->p;
	r.e.line = line_of(j, at);
	if (members(j, event_member, &r))
		return -EINVAL;
	r.e.ph = r.ph[0] == 'I' ? 'i' : r.ph[0];
	if (r.ph[1] || !strchr("BEXi", r.e.ph) || !r.e.ph)
		return 0;	/* metadata and the phases not drawn */
	if (!r.has_ts) {
		j->p = at;
		return fail(j, "an event of phase %s has no ts", r.ph);
	}
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
	if (strcmp(key, "version") || j->p >= j->end || *j->p != '"')
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
	if (!strcmp(key, "metadata") && j->p < j->end && *j->p == '{')
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
	if (j->p < j->end && *j->p == '[') {
		ret = events(j, fn, ctx);
	} else if (j->p < j->end && *j->p == '{') {
		ret = members(j, doc_member, &d);
		if (!ret && !d.found) {
			j->p = j->s;
			return fail(j, "no \"traceEvents\" array: not a Chrome trace");
		}
	} else {
		return fail(j, "not a Chrome trace: '{' or '[' was expected");
	}
	if (ret)
		return ret;
	ws(j);
	if (j->p < j->end)
		return fail(j, "data after the trace");
	*kind = d.kind;
	return 0;
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	int e;

	if (!f) {
		e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return NULL;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 1 << 16);

			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
				errno = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 16;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got)
			continue;
		if (ferror(f)) {
			e = EIO;
			snprintf(err, errlen, "%s: read failed", path);
			free(buf);
			fclose(f);
			errno = e;
			return NULL;
		}
		break;
	}
	fclose(f);
	*len = n;
	return buf;
}

int guest_trace_read_kind(const char *path, guest_trace_fn fn, void *ctx,
			  enum guest_trace_kind *kind, char *err, size_t errlen)
{
	struct jp j = { .path = path, .err = err, .errlen = errlen };
	enum guest_trace_kind k = GUEST_TRACE_JSON;
	size_t len = 0;
	char *buf = slurp(path, &len, err, errlen);
	int ret;

	if (!buf)
		return -errno;
	if (len >= TRACEDAT_MAGIC_LEN && !memcmp(buf, TRACEDAT_MAGIC, TRACEDAT_MAGIC_LEN)) {
		free(buf);
		if (kind)
			*kind = GUEST_TRACE_TRACEDAT;
		return guest_tracedat_read(path, fn, ctx, err, errlen);
	}
	j.s = j.p = j.counted = buf;
	j.line = 1;
	j.end = buf + len;
	ret = document(&j, fn, ctx, &k);
	free(buf);
	if (kind)
		*kind = k;
	return ret;
}

int guest_trace_read(const char *path, guest_trace_fn fn, void *ctx, char *err, size_t errlen)
{
	return guest_trace_read_kind(path, fn, ctx, NULL, err, errlen);
}
