// SPDX-License-Identifier: GPL-2.0
/*
 * report --guest-trace's reader on the legitimate large case: a guest trace of 10^6 events
 * (~100 MB, the bundled guest's shape: B/E/X with args.vcpu), read by guest_trace_read() in a
 * child: wall and CPU seconds, events/s (per CPU second) and peak RSS (wait4's ru_maxrss),
 * against python3's json.load of the same file (a reader that holds the document). Then names
 * of 30,000 and 300,000 \u escapes: the time must grow with the escapes, not with their
 * square. Figures are printed, not asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "guest_trace.h"
#include "bench_args.h"

#define EVENTS		1000000

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int write_trace(const char *path, size_t *bytes)
{
	FILE *f = fopen(path, "w");
	unsigned long long t = 1125899906842624ull;

	if (!f)
		return -errno;
	fputs("{\"traceEvents\":[", f);
	for (int k = 0; k < EVENTS; k++, t += 30000) {
		fprintf(f, "%s\n{\"name\":\"guest after io exit %d\",\"ph\":\"%s\",\"pid\":77,"
			"\"tid\":%d,\"ts\":%llu.%03llu", k ? "," : "", k / 2,
			k % 3 == 2 ? "X" : k % 3 ? "E" : "B", k % 2, t / 1000, t % 1000);
		if (k % 3 == 2)
			fputs(",\"dur\":9.000", f);
		fprintf(f, ",\"args\":{\"vcpu\":%d}}", k % 2);
	}
	fputs("\n],\"displayTimeUnit\":\"ns\"}\n", f);
	*bytes = ftell(f);
	return fclose(f) ? -errno : 0;
}

static int count(void *ctx, const struct guest_trace_event *e)
{
	(void)e;
	(*(unsigned long *)ctx)++;
	return 0;
}

/* The CPU seconds of a child, user and system: on a busy host wall time is mostly waiting. */
static double cpu_of(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_stime.tv_sec +
	       (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/*
 * Reads path in a child: its events (by exit status: 0 when all EVENTS), wall and CPU
 * seconds, peak kB.
 */
static int read_child(const char *path, unsigned long want, double *sec, double *cpu, long *kb)
{
	struct rusage ru;
	double t0 = now();
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		unsigned long n = 0;
		char err[512];

		if (guest_trace_read(path, count, &n, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			_exit(1);
		}
		_exit(n == want ? 0 : 2);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*sec = now() - t0;
	*cpu = cpu_of(&ru);
	*kb = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* python3's json.load of path in a child, the events counted: wall and CPU seconds, peak kB. */
static int python_child(const char *path, double *sec, double *cpu, long *kb)
{
	struct rusage ru;
	double t0 = now();
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0)
			dup2(fd, 1);
		execlp("python3", "python3", "-c",
		       "import json,sys; print(len(json.load(open(sys.argv[1]))['traceEvents']))",
		       path, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid)
		return -1;
	*sec = now() - t0;
	*cpu = cpu_of(&ru);
	*kb = ru.ru_maxrss;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* One event whose name is n \u escapes. */
static int escapes(const char *path, int n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fputs("[{\"ph\":\"i\",\"ts\":1,\"name\":\"", f);
	for (int i = 0; i < n; i++)
		fputs("\\u0041", f);
	fputs("\"}]", f);
	return fclose(f) ? -errno : 0;
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/vmexit-bench-gtXXXXXX";
	size_t bytes = 0;
	double sec, cpu;
	long kb;
	int fd, rc;

	bench_args(argc, argv, "bench/bench_guest_trace.c");
	fd = mkstemp(path);
	if (fd < 0 || (close(fd), write_trace(path, &bytes))) {
		perror(path);
		return 1;
	}
	printf("guest trace: %d events, %.1f MB\n", EVENTS, bytes / 1e6);
	for (int round = 0; round < 2; round++) {
		rc = read_child(path, EVENTS, &sec, &cpu, &kb);
		if (rc) {
			printf("  guest_trace_read failed (status %d)\n", rc);
			unlink(path);
			return 1;
		}
		printf("  guest_trace_read  %6.2f s wall %6.2f s CPU  %5.2f M events/s  %6.1f MB/s"
		       "  peak RSS %6.1f MB\n", sec, cpu, EVENTS / cpu / 1e6, bytes / cpu / 1e6,
		       kb / 1024.0);
	}
	rc = python_child(path, &sec, &cpu, &kb);
	if (rc)
		printf("  python3 json.load: not run (status %d)\n", rc);
	else
		printf("  python3 json.load %6.2f s wall %6.2f s CPU  %5.2f M events/s  %6.1f MB/s"
		       "  peak RSS %6.1f MB\n", sec, cpu, EVENTS / cpu / 1e6, bytes / cpu / 1e6,
		       kb / 1024.0);
	for (int n = 30000; n <= 300000; n *= 10) {
		if (escapes(path, n) || read_child(path, 1, &sec, &cpu, &kb)) {
			printf("  %d escapes: failed\n", n);
			unlink(path);
			return 1;
		}
		printf("  a name of %6d \\u escapes: %.3f s wall, %.3f s CPU\n", n, sec, cpu);
	}
	unlink(path);
	return 0;
}
