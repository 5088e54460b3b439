// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit's start-up and tear-down, as a user sees them: `vmexit stat 1000` is started, the time
 * until it prints "Tracing KVM exits" (after every program is loaded, verified and attached) is
 * the start-up; then SIGINT, and the time until it exited is the tear-down (detaching, the
 * final table). The same for `vmexit stream` (to /dev/null), whose tracing has begun once it
 * catches SIGTERM (bench_proc.h) and whose tear-down also drains the ring and flushes the
 * exits in flight. Medians and extremes of ROUNDS runs; figures are printed, not asserted. Runs
 * $VMEXIT_BIN (bench/run.sh sets it), default .output/vmexit; with $VMEXIT_BASE_BIN (another
 * build, e.g. main's) both, run by run in turn so that both see the same host load, and the
 * ratio of their medians. VMEXIT_DEBUG_TIMING=1 on a vmexit run shows where the time goes.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_proc.h"
#include "bench_args.h"

#define ROUNDS	7

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* One run of `vmexit CMD`: start-up and tear-down seconds; -1 when vmexit did not get as far
 * as tracing. */
static int one_run(const char *bin, const char *cmd, double *up, double *down)
{
	bool stat = !strcmp(cmd, "stat");
	char buf[4096];
	size_t len = 0;
	int fd[2], st, c = 0;
	double t0, t1;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	fflush(stdout);		/* the child's freopen() would write our buffer out again */
	t0 = now_s();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], STDERR_FILENO);
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		close(fd[0]);
		if (stat)
			execl(bin, bin, "stat", "1000", (char *)NULL);
		else
			execl(bin, bin, cmd, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	buf[0] = '\0';
	while (stat) {
		ssize_t n = read(fd[0], buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			break;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "Tracing KVM exits") || len >= sizeof(buf) - 1)
			break;
	}
	/* 0.5 ms steps: a fraction of a start-up, and little CPU taken from it. */
	while (!stat && (c = catches_sigterm(pid)) == 0)
		usleep(500);
	t1 = now_s();
	kill(pid, SIGINT);
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*up = t1 - t0;
	*down = now_s() - t1;
	if (stat ? !strstr(buf, "Tracing KVM exits") : c < 0) {
		fprintf(stderr, "bench_startup: %s %s did not start tracing: %.300s\n", bin, cmd,
			buf);
		return -1;
	}
	return 0;
}

/* The sorted figures of one binary's runs; the start-up median. */
static double report(const char *what, const char *cmd, double *up, double *down)
{
	qsort(up, ROUNDS, sizeof(up[0]), cmp);
	qsort(down, ROUNDS, sizeof(down[0]), cmp);
	printf("bench_startup: %s%d runs of `vmexit %s`: exec to tracing (load, verify, attach) "
	       "median %.0f ms [%.0f-%.0f], SIGINT to exit median %.0f ms [%.0f-%.0f]\n", what,
	       ROUNDS, cmd, up[ROUNDS / 2] * 1e3, up[0] * 1e3, up[ROUNDS - 1] * 1e3,
	       down[ROUNDS / 2] * 1e3, down[0] * 1e3, down[ROUNDS - 1] * 1e3);
	return up[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	static const char *const cmds[] = { "stat", "stream" };
	const char *bin = getenv("VMEXIT_BIN") ? getenv("VMEXIT_BIN") : ".output/vmexit";
	const char *base = getenv("VMEXIT_BASE_BIN");
	double up[ROUNDS], down[ROUNDS], bup[ROUNDS], bdown[ROUNDS], med, bmed;

	bench_args(argc, argv, "bench/bench_startup.c");

	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		for (int i = 0; i < ROUNDS; i++) {
			if (base && one_run(base, cmds[k], &bup[i], &bdown[i]))
				return 1;
			if (one_run(bin, cmds[k], &up[i], &down[i]))
				return 1;
		}
		if (!base) {
			report("", cmds[k], up, down);
			continue;
		}
		bmed = report("base ($VMEXIT_BASE_BIN): ", cmds[k], bup, bdown);
		med = report("this build: ", cmds[k], up, down);
		printf("bench_startup: `vmexit %s` start-up median, this build / base: %.2f\n",
		       cmds[k], med / bmed);
	}
	return 0;
}
