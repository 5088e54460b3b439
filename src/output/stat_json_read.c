// SPDX-License-Identifier: GPL-2.0
/* stat --json read back into rows (stat_json_read.h): a small parser for what stat writes. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "key_names.h"
#include "reasons.h"
#include "run_profile.h"
#include "stat_json_read.h"

struct sj {
	const char *p, *end, *start;
	const char *path;
	char *err;
	size_t errlen;
	bool failed;
};

static int fail(struct sj *j, const char *what)
{
	if (!j->failed)
		snprintf(j->err, j->errlen, "%s: byte %zu: %s (is it vmexit stat --json output?)",
			 j->path, (size_t)(j->p - j->start), what);
	j->failed = true;
	return -1;
}

static void ws(struct sj *j)
{
	while (j->p < j->end && isspace((unsigned char)*j->p))
		j->p++;
}

static bool eat(struct sj *j, char c)
{
	ws(j);
	if (j->p < j->end && *j->p == c) {
		j->p++;
		return true;
	}
	return false;
}

/* A string into buf (escapes kept simple: \uXXXX becomes '?'). */
static int str(struct sj *j, char *buf, size_t len)
{
	size_t n = 0;

	if (!eat(j, '"'))
		return fail(j, "a string expected");
	while (j->p < j->end && *j->p != '"') {
		char c = *j->p++;

		if (c == '\\' && j->p < j->end) {
			c = *j->p++;
			if (c == 'u') {
				j->p += j->end - j->p >= 4 ? 4 : j->end - j->p;
				c = '?';
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			}
		}
		if (n + 1 < len)
			buf[n++] = c;
	}
	if (len)
		buf[n] = 0;
	if (!eat(j, '"'))
		return fail(j, "unterminated string");
	return 0;
}

static int num(struct sj *j, double *v)
{
	char *e;

	ws(j);
	*v = strtod(j->p, &e);
	if (e == j->p || e > j->end)
		return fail(j, "a number expected");
	j->p = e;
	return 0;
}

#define U64_MAX_D	18446744073709551615.0
#define U32_MAX_D	4294967295.0

/*
 * A whole number from lo to hi (within -2^63 .. 2^64 - 1), as stat writes its counts, times and
 * ids: anything else (1e400, -3 for a count, 2.5) is refused here, where converting it to an
 * integer would be undefined.
 */
static int whole_d(struct sj *j, double lo, double hi, const char *what, double *v)
{
	char msg[96];

	if (num(j, v))
		return -1;
	/* 2^64 itself is a double; the __u64 range ends just below it. */
	if (!(*v >= lo && *v <= hi && *v < 18446744073709551616.0) || *v != floor(*v)) {
		snprintf(msg, sizeof(msg), "%s: a whole number from %.0f to %s expected", what, lo,
			 hi >= U64_MAX_D ? "2^64-1" : hi >= U32_MAX_D ? "2^32-1" : "2^31-1");
		return fail(j, msg);
	}
	return 0;
}

/* whole_d() of lo >= 0, as a __u64. */
static int whole(struct sj *j, double lo, double hi, const char *what, __u64 *out)
{
	double v;

	if (whole_d(j, lo, hi, what, &v))
		return -1;
	*out = (__u64)v;
	return 0;
}

static int skip(struct sj *j, int depth)
{
	char buf[8];
	double v;

	if (depth > 64)
		return fail(j, "nested too deep");
	ws(j);
	if (j->p >= j->end)
		return fail(j, "unexpected end");
	switch (*j->p) {
	case '"':
		return str(j, buf, sizeof(buf));
	case '{':
	case '[': {
		char close = *j->p == '{' ? '}' : ']';

		j->p++;
		if (eat(j, close))
			return 0;
		do {
			if (close == '}' && (str(j, buf, sizeof(buf)) || !eat(j, ':')))
				return fail(j, "a member expected");
			if (skip(j, depth + 1))
				return -1;
		} while (eat(j, ','));
		return eat(j, close) ? 0 : fail(j, "',' or a closing bracket expected");
	}
	default:
		if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
			j->p += 4;
			return 0;
		}
		if (!strncmp(j->p, "false", 5)) {
			j->p += 5;
			return 0;
		}
		return num(j, &v);
	}
}

static int kind_of(const char *s, __u16 *kind)
{
	for (__u32 i = 0; i < NR_KEY_KINDS; i++) {
		if (!strcmp(key_kind_name(i), s)) {
			*kind = (__u16)i;
			return 0;
		}
	}
	return -1;
}

static int dir_of(const char *s, __u16 *dir)
{
	for (__u32 i = 0; i < NR_KEY_DIRS; i++) {
		if (!strcmp(key_dir_name(i), s)) {
			*dir = (__u16)i;
			return 0;
		}
	}
	return -1;
}

static int hist(struct sj *j, struct row *r)
{
	if (!eat(j, '['))
		return fail(j, "hist: an array expected");
	if (eat(j, ']'))
		return 0;
	do {
		__u64 lo, hi, n;

		if (!eat(j, '['))
			return fail(j, "hist: [low,high,count] expected");
		/* A figure's own complaint comes first: fail() keeps the first. */
		if (whole(j, 0, U64_MAX_D, "hist: low", &lo) || !eat(j, ',') ||
		    whole(j, 0, U64_MAX_D, "hist: high", &hi) || !eat(j, ',') ||
		    whole(j, 0, U64_MAX_D, "hist: count", &n))
			return fail(j, "hist: [low,high,count] expected");
		if (!eat(j, ']') || hi < lo)
			return fail(j, "hist: [low,high,count] expected, low <= high");
		r->hist[hist_bucket(lo)] += n;
	} while (eat(j, ','));
	return eat(j, ']') ? 0 : fail(j, "hist: ']' expected");
}

/* The row's __u64 fields stat prints by these names. */
struct u64_field {
	const char *name;
	size_t off;
};

static const struct u64_field *u64_field(const char *name)
{
	static const struct u64_field fields[] = {
		{ "count", offsetof(struct row, count) },
		{ "completed", offsetof(struct row, completed) },
		{ "total_ns", offsetof(struct row, total_ns) },
		{ "min_ns", offsetof(struct row, min_ns) },
		{ "max_ns", offsetof(struct row, max_ns) },
		{ "oncpu_ns", offsetof(struct row, oncpu_ns) },
		{ "blocked_ns", offsetof(struct row, blocked_ns) },
		{ "runq_ns", offsetof(struct row, runq_ns) },
		{ "key", offsetof(struct row, key.key.key) },
	};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	}
	return NULL;
}

static int row(struct sj *j, struct row_table *rt, struct name_cache *names)
{
	struct row r = {};
	char key[32], s[256], guest[256] = "";
	double v, pid = -1;
	bool has_key = false;

	r.key.vcpu = -1;
	r.min_ns = ~0ull;
	if (!eat(j, '{'))
		return fail(j, "a row object expected");
	if (eat(j, '}'))
		return 0;
	do {
		if (str(j, key, sizeof(key)) || !eat(j, ':'))
			return fail(j, "a member expected");
		ws(j);
		if (!strcmp(key, "guest")) {
			if (str(j, guest, sizeof(guest)))
				return -1;
		} else if (!strcmp(key, "isa")) {
			if (str(j, s, sizeof(s)))
				return -1;
			if (isa_parse(s, &r.key.isa))
				return fail(j, "unknown isa");
		} else if (!strcmp(key, "key_kind") || !strcmp(key, "key_dir")) {
			if (str(j, s, sizeof(s)))
				return -1;
			if (key[4] == 'k' ? kind_of(s, &r.key.key.kind) : dir_of(s, &r.key.key.dir))
				return fail(j, "unknown key kind or direction");
			has_key = true;
		} else if (!strcmp(key, "hist")) {
			if (hist(j, &r))
				return -1;
		} else if (j->p < j->end && (isdigit((unsigned char)*j->p) || *j->p == '-')) {
			const struct u64_field *f = u64_field(key);
			__u64 u;

			if (!strcmp(key, "pid")) {
				if (whole(j, 0, U32_MAX_D, "pid", &u))
					return -1;
				pid = (double)u;
			} else if (!strcmp(key, "vcpu")) {
				if (whole_d(j, -1, 2147483647.0, "vcpu", &v))
					return -1;
				r.key.vcpu = (__s32)v;
			} else if (!strcmp(key, "reason")) {
				if (whole(j, 0, U32_MAX_D, "reason", &u))
					return -1;
				r.key.reason = (__u32)u;
			} else if (f) {
				if (whole(j, 0, U64_MAX_D, key, (__u64 *)((char *)&r + f->off)))
					return -1;
			} else if (num(j, &v)) {	/* rate, time_pct, ...: derived, not read */
				return -1;
			}
		} else if (skip(j, 1)) {
			return -1;
		}
	} while (eat(j, ','));
	if (!eat(j, '}'))
		return fail(j, "'}' expected after a row");
	if (!has_key)
		r.key.key = (struct key_note){};
	r.key.tgid = pid < 0 ? 0 : (__u32)pid;
	if (name_cache_set_at(names, r.key.tgid, 0, *guest ? guest : PROF_ALL))
		return fail(j, strerror(ENOMEM));
	{
		struct row *t = row_table_get(rt, &r.key);

		if (!t)
			return fail(j, strerror(ENOMEM));
		row_add(t, &r);
	}
	return 0;
}

/* One top-level object: its rows replace those of an earlier one. */
static int object(struct sj *j, struct row_table *rt, struct name_cache *names, double *interval_s)
{
	char key[32];
	bool rows = false;

	if (!eat(j, '{'))
		return fail(j, "'{' expected");
	do {
		if (str(j, key, sizeof(key)) || !eat(j, ':'))
			return fail(j, "a member expected");
		if (!strcmp(key, "interval_s")) {
			if (num(j, interval_s))
				return -1;
			/* The rates' denominator: a time, finite and not negative. */
			if (!(*interval_s >= 0 && *interval_s <= 1e12))
				return fail(j, "interval_s: seconds from 0 to 1e12 expected");
		} else if (!strcmp(key, "rows")) {
			row_table_reset(rt);
			rows = true;
			if (!eat(j, '['))
				return fail(j, "rows: an array expected");
			if (eat(j, ']'))
				continue;
			do {
				if (row(j, rt, names))
					return -1;
			} while (eat(j, ','));
			if (!eat(j, ']'))
				return fail(j, "rows: ']' expected");
		} else if (skip(j, 1)) {
			return -1;
		}
	} while (eat(j, ','));
	if (!eat(j, '}'))
		return fail(j, "'}' expected");
	return rows ? 0 : fail(j, "no \"rows\"");
}

bool stat_json_looks(const char *path)
{
	FILE *f = fopen(path, "re");
	int c;

	if (!f)
		return false;
	do
		c = fgetc(f);
	while (c != EOF && isspace(c));
	fclose(f);
	return c == '{';
}

int stat_json_read(const char *path, struct row_table *rt, struct name_cache *names,
		   double *interval_s, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct sj j = { .path = path, .err = err, .errlen = errlen };
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	int rc = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	do {
		if (n == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 1 << 16);

			if (!nb) {
				snprintf(err, errlen, "%s: %s", path, strerror(ENOMEM));
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 16;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read failed", path);
		rc = -1;
	}
	fclose(f);
	j.p = j.start = buf;
	j.end = buf + n;
	*interval_s = 0;
	/* stat -i prints an object per interval and the summary last: the last one counts. */
	while (!rc) {
		ws(&j);
		if (j.p >= j.end)
			break;
		rc = object(&j, rt, names, interval_s);
	}
	free(buf);
	return rc;
}
