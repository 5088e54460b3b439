// SPDX-License-Identifier: GPL-2.0
/* perf stat -I -x, output as counter values; perf_counters.h shows the shape. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <math.h>
#include "perf_counters.h"

#define MAX_FIELDS	16
#define MAX_COUNTERS	256	/* distinct names: each remembers when its last interval ended */

#define NAME_MAX_LEN	160

struct counter_seen {
	char name[NAME_MAX_LEN];
	__u64 last_ns;
};

/* The whole of s as a finite number. */
static bool number(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return *s && !*end && !errno && isfinite(*v);
}

/* "# started on Thu Nov 26 15:11:31 2026" (perf prints it with ctime(), local time). */
static __s64 started_on(const char *line)
{
	const char *p = strstr(line, "started on ");
	struct tm tm = {};

	if (!p || !strptime(p + strlen("started on "), "%a %b %d %H:%M:%S %Y", &tm))
		return 0;
	tm.tm_isdst = -1;
	return mktime(&tm);
}

/* -A / --per-socket ... columns: CPU3, S0, S0-D0, S0-D0-C1, N0. */
static bool is_aggr_column(const char *s)
{
	return (!strncmp(s, "CPU", 3) && s[3] >= '0' && s[3] <= '9') ||
	       ((s[0] == 'S' || s[0] == 'N') && s[1] >= '0' && s[1] <= '9');
}

static int bad_line(char *err, size_t errlen, const char *path, unsigned long line,
		    const char *what)
{
	snprintf(err, errlen, "%s:%lu: %s: give `perf stat -I MS -x, ...` output", path, line,
		 what);
	return -EINVAL;
}

int perf_counters_read(const char *path, perf_count_fn fn, void *ctx, __s64 *started_s,
		       char *err, size_t errlen)
{
	struct counter_seen *seen = NULL;
	unsigned long lineno = 0;
	size_t cap = 0, nseen = 0;
	char *line = NULL, *f[MAX_FIELDS];
	bool any = false;
	int ret = 0;
	FILE *in;

	*started_s = 0;
	in = fopen(path, "re");
	if (!in) {
		ret = -errno;
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	seen = calloc(MAX_COUNTERS, sizeof(*seen));
	if (!seen) {
		fclose(in);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while (!ret && getline(&line, &cap, in) > 0) {
		struct perf_count c = {};
		char *p = line, name[NAME_MAX_LEN];
		int n = 0, k;
		double t;
		size_t i;

		lineno++;
		line[strcspn(line, "\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			continue;
		if (*p == '#') {
			if (!*started_s)
				*started_s = started_on(p);
			continue;
		}
		while (n < MAX_FIELDS && (f[n] = strsep(&p, ",")))
			n++;
		if (!number(f[0], &t) || t < 0 || t > 1e9) {
			ret = bad_line(err, errlen, path, lineno, "no interval time first");
			break;
		}
		k = n > 1 && is_aggr_column(f[1]) ? 2 : 1;	/* where the value is */
		if (n < k + 3) {
			ret = bad_line(err, errlen, path, lineno,
				       "fewer than TIME,VALUE,UNIT,EVENT fields");
			break;
		}
		if (f[k][0] == '<')	/* <not counted>, <not supported> */
			continue;
		if (!number(f[k], &c.value)) {
			ret = bad_line(err, errlen, path, lineno, "the count is not a number");
			break;
		}
		if (!*f[k + 2]) {
			ret = bad_line(err, errlen, path, lineno, "no event name");
			break;
		}
		/* "cycles:G", "task-clock (msec)", "cycles CPU3" */
		snprintf(name, sizeof(name), "%s%s%s%s%s%s", f[k + 2], *f[k + 1] ? " (" : "",
			 f[k + 1], *f[k + 1] ? ")" : "", k == 2 ? " " : "", k == 2 ? f[1] : "");
		for (i = 0; i < nseen && strcmp(seen[i].name, name); i++)
			;
		if (i == nseen) {
			if (nseen == MAX_COUNTERS) {
				ret = bad_line(err, errlen, path, lineno, "more than 256 counters");
				break;
			}
			snprintf(seen[nseen++].name, sizeof(seen[0].name), "%s", name);
		}
		c.to_ns = (__u64)(t * 1e9 + 0.5);
		c.from_ns = seen[i].last_ns < c.to_ns ? seen[i].last_ns : c.to_ns;
		seen[i].last_ns = c.to_ns;
		c.name = name;
		any = true;
		ret = fn(ctx, &c);
	}
	if (!ret && ferror(in)) {
		ret = -EIO;
		snprintf(err, errlen, "reading %s: %s", path, strerror(EIO));
	}
	if (!ret && !any)
		ret = bad_line(err, errlen, path, lineno, "no counter values in it");
	free(line);
	free(seen);
	fclose(in);
	return ret;
}
