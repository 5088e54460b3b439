// SPDX-License-Identifier: GPL-2.0
/*
 * What `vmexit stat` costs the processes that are not VMs: a getppid() loop alone, then with
 * vmexit attached, alternating, medians of several rounds. A syscall tracepoint would show
 * here (syscall tracing turns on for every task); the KVM hooks must not. Figures are printed,
 * not asserted. Runs $VMEXIT_BIN (bench/run.sh sets it), default .output/vmexit.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_time.h"
#include "bench_args.h"

#define ITERS		1000000
#define ROUNDS		11
#define TARGET_PCT	2.0

/* ns per getppid(). */
static double loop_ns(void)
{
	return syscall_loop_ns(SYS_getppid, ITERS);
}

/* Starts `vmexit stat -v 3600` and returns once its programs are attached. */
static pid_t vmexit_start(const char *bin, char *hooks, size_t hooks_len)
{
	char line[512];
	int fds[2];
	FILE *f;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		close(fds[1]);
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(bin, bin, "stat", "-v", "3600", (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	/* stat prints this line once attached; -v says which hooks before it. */
	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vmexit: hooks: KVM_RUN", 22) && hooks) {
			snprintf(hooks, hooks_len, "%.200s", line + 15);
			hooks[strcspn(hooks, "\n")] = 0;
		}
		if (strstr(line, "Hit Ctrl-C")) {
			/* Nothing more comes on stderr until it ends: the pipe can close. */
			fclose(f);
			return pid;
		}
	}
	if (f)
		fclose(f);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

static int vmexit_stop(pid_t pid)
{
	int st;

	kill(pid, SIGINT);
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *bin = getenv("VMEXIT_BIN") ? getenv("VMEXIT_BIN") : ".output/vmexit";
	double off[ROUNDS], on[ROUNDS], ratio[ROUNDS], moff, mon, tax;
	char hooks[256] = "?";
	cpu_set_t set;
	int cpu;

	bench_args(argc, argv, "bench/bench_host_tax.c");

	if (geteuid() != 0) {
		fprintf(stderr, "bench_host_tax: needs root to run vmexit\n");
		return 77;
	}
	/* The loop on one CPU; vmexit itself may run on the other one. */
	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	loop_ns();	/* warm-up */
	for (int r = 0; r < ROUNDS; r++) {
		pid_t pid;

		off[r] = loop_ns();
		pid = vmexit_start(bin, hooks, sizeof(hooks));
		if (pid < 0) {
			fprintf(stderr, "bench_host_tax: %s stat did not start\n", bin);
			return 1;
		}
		on[r] = loop_ns();
		ratio[r] = on[r] / off[r];
		if (vmexit_stop(pid)) {
			fprintf(stderr, "bench_host_tax: %s stat failed\n", bin);
			return 1;
		}
	}
	qsort(off, ROUNDS, sizeof(off[0]), cmp_double);
	qsort(on, ROUNDS, sizeof(on[0]), cmp_double);
	qsort(ratio, ROUNDS, sizeof(ratio[0]), cmp_double);
	moff = off[ROUNDS / 2];
	mon = on[ROUNDS / 2];
	/* Of each round's pair, measured back to back: a busy host drifts less within a round. */
	tax = (ratio[ROUNDS / 2] - 1) * 100;
	printf("host-wide tax: getppid() x %d, %d rounds of alone then attached, CPU %d\n", ITERS,
	       ROUNDS, cpu);
	printf("  vmexit %s\n", hooks);
	printf("  %-34s %8.1f ns/syscall (min %.1f, max %.1f)\n", "alone", moff, off[0],
	       off[ROUNDS - 1]);
	printf("  %-34s %8.1f ns/syscall (min %.1f, max %.1f)\n", "with `vmexit stat` attached",
	       mon, on[0], on[ROUNDS - 1]);
	printf("  tax: %+.1f %%, median of the rounds' ratios (target <= %.0f %%) -> %s\n", tax,
	       TARGET_PCT, tax <= TARGET_PCT ? "met" : "NOT met");
	return 0;
}
