// SPDX-License-Identifier: GPL-2.0
/*
 * vmexit's start-up and tear-down, as a user sees them: `vmexit stat 1000` is started, the time
 * until it prints "Tracing KVM exits" (after every program is loaded, verified and attached) is
 * the start-up; then SIGINT, and the time until it exited is the tear-down (detaching, the
 * final table). Medians and extremes of ROUNDS runs; figures are printed, not asserted. Runs
 * $VMEXIT_BIN (bench/run.sh sets it), default .output/vmexit; with $VMEXIT_BASE_BIN (another
 * build, e.g. main's) both, run by run in turn so that both see the same host load, and the
 * ratio of their medians. VMEXIT_DEBUG_TIMING=1 on a vmexit run shows where the time goes.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* One run: start-up and tear-down seconds; -1 when vmexit did not get as far as tracing. */
static int one_run(const char *bin, double *up, double *down)
{
	char buf[4096];
	size_t len = 0;
	int fd[2], st;
	double t0, t1;
	pid_t pid;

	if (pipe(fd) < 0)
		return -1;
	t0 = now_s();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], STDERR_FILENO);
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		close(fd[0]);
		execl(bin, bin, "stat", "1000", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		ssize_t n = read(fd[0], buf + len, sizeof(buf) - 1 - len);

		if (n <= 0)
			break;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "Tracing KVM exits") || len >= sizeof(buf) - 1)
			break;
	}
	t1 = now_s();
	kill(pid, SIGINT);
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*up = t1 - t0;
	*down = now_s() - t1;
	if (!strstr(buf, "Tracing KVM exits")) {
		fprintf(stderr, "bench_startup: %s did not start tracing: %.300s\n", bin, buf);
		return -1;
	}
	return 0;
}

/* The sorted figures of one binary's runs; the start-up median. */
static double report(const char *what, double *up, double *down)
{
	qsort(up, ROUNDS, sizeof(up[0]), cmp);
	qsort(down, ROUNDS, sizeof(down[0]), cmp);
	printf("bench_startup: %s%d runs of `vmexit stat`: exec to tracing (load, verify, attach) "
	       "median %.0f ms [%.0f-%.0f], SIGINT to exit median %.0f ms [%.0f-%.0f]\n", what,
	       ROUNDS, up[ROUNDS / 2] * 1e3, up[0] * 1e3, up[ROUNDS - 1] * 1e3,
	       down[ROUNDS / 2] * 1e3, down[0] * 1e3, down[ROUNDS - 1] * 1e3);
	return up[ROUNDS / 2];
}

int main(void)
{
	const char *bin = getenv("VMEXIT_BIN") ? getenv("VMEXIT_BIN") : ".output/vmexit";
	const char *base = getenv("VMEXIT_BASE_BIN");
	double up[ROUNDS], down[ROUNDS], bup[ROUNDS], bdown[ROUNDS], med, bmed;

	for (int i = 0; i < ROUNDS; i++) {
		if (base && one_run(base, &bup[i], &bdown[i]))
			return 1;
		if (one_run(bin, &up[i], &down[i]))
			return 1;
	}
	if (!base) {
		report("", up, down);
		return 0;
	}
	bmed = report("base ($VMEXIT_BASE_BIN): ", bup, bdown);
	med = report("this build: ", up, down);
	printf("bench_startup: start-up median, this build / base: %.2f\n", med / bmed);
	return 0;
}
