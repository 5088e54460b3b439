// SPDX-License-Identifier: GPL-2.0
/*
 * perf stat -I -x, output as counter values (perf_counters.c): the plain shape and -A's CPU
 * column, intervals per counter, "<not counted>" skipped, the "# started on" time; files of
 * another shape fail with the file and the line.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "perf_counters.h"

static char got[4096];

static int collect(void *ctx, const struct perf_count *c)
{
	size_t n = strlen(got);

	(void)ctx;
	snprintf(got + n, sizeof(got) - n, "%llu-%llu %s=%g\n", (unsigned long long)c->from_ns,
		 (unsigned long long)c->to_ns, c->name, c->value);
	return 0;
}

/* Writes text to a file and reads it: the return value, got and err. */
static int read_text(const char *text, char *path, __s64 *started, char *err, size_t len)
{
	int fd;

	strcpy(path, "/tmp/vmexit-test-perfstatXXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -EIO;
	close(fd);
	got[0] = '\0';
	err[0] = '\0';
	return perf_counters_read(path, collect, NULL, started, err, len);
}

static void check_bad(const char *text, int line, const char *what)
{
	char path[64], err[512], want[256];
	__s64 started;

	CHECK_EQ_U64(read_text(text, path, &started, err, sizeof(err)), (__u64)-EINVAL);
	snprintf(want, sizeof(want), "%s:%d: %s", path, line, what);
	if (strncmp(err, want, strlen(want))) {
		fprintf(stderr, "error '%s', expected it to start with '%s'\n", err, want);
		check_failures++;
	}
	CHECK(strstr(err, "perf stat -I MS -x,") != NULL);
	unlink(path);
}

int main(void)
{
	char path[64], err[512];
	struct tm tm = { .tm_year = 126, .tm_mon = 10, .tm_mday = 26, .tm_hour = 15,
			 .tm_min = 11, .tm_sec = 31, .tm_isdst = -1 };
	__s64 started;

	CHECK_EQ_U64(read_text(
		"# started on Thu Nov 26 15:11:31 2026\n"
		"\n"
		"     0.103815157,1.27,msec,task-clock,1274148,100.00,0.013,CPUs utilized\n"
		"     0.103815157,2,,context-switches,1274148,100.00,1.570,K/sec\n"
		"     0.227817308,<not counted>,msec,task-clock,0,100.00,,\n"
		"     0.227817308,5,,context-switches,0,100.00,,\n"
		"     0.331806972,0.5,msec,task-clock,55594,100.00,0.001,CPUs utilized\n",
		path, &started, err, sizeof(err)), 0);
	CHECK_STR(got, "0-103815157 task-clock (msec)=1.27\n"
		       "0-103815157 context-switches=2\n"
		       "103815157-227817308 context-switches=5\n"
		       "103815157-331806972 task-clock (msec)=0.5\n");
	CHECK_EQ_U64(started, mktime(&tm));
	unlink(path);

	/* perf stat -A: a CPU column, one counter per CPU; no started line. */
	CHECK_EQ_U64(read_text(
		"1.000100000,CPU0,120,,cycles:G,1000,100.00,,\n"
		"1.000100000,CPU1,80,,cycles:G,1000,100.00,,\n"
		"2.000200000,CPU0,60,,cycles:G,1000,50.00,,\n",
		path, &started, err, sizeof(err)), 0);
	CHECK_STR(got, "0-1000100000 cycles:G CPU0=120\n"
		       "0-1000100000 cycles:G CPU1=80\n"
		       "1000100000-2000200000 cycles:G CPU0=60\n");
	CHECK_EQ_U64(started, 0);
	unlink(path);

	/* Another shape: perf stat without -I (value first), -x; output, a truncated line. */
	check_bad("# started on Thu Nov 26 15:11:31 2026\n\n1.27,msec,task-clock,1274148,100.00\n",
		  3, "the count is not a number");
	check_bad("     0.1;1.27;msec;task-clock;1274148;100.00\n", 1, "no interval time first");
	check_bad("0.1,1,,cycles,1,100.00,,\n0.2,1\n", 2, "fewer than TIME,VALUE,UNIT,EVENT");
	check_bad("0.1,abc,,cycles,1,100.00,,\n", 1, "the count is not a number");
	check_bad("0.1,1,,,1,100.00,,\n", 1, "no event name");
	check_bad("# started on Thu Nov 26 15:11:31 2026\n\n", 2, "no counter values in it");

	CHECK_EQ_U64(perf_counters_read("/nonexistent/ps.csv", collect, NULL, &started, err,
					sizeof(err)), (__u64)-ENOENT);
	CHECK_STR(err, "cannot open /nonexistent/ps.csv: No such file or directory");
	CHECK_DONE("perf_counters");
}
