/* SPDX-License-Identifier: GPL-2.0 */
/* Timing helpers the userspace benchmarks share (bench/bench_*.c). */
#ifndef VMEXIT_BENCH_TIME_H
#define VMEXIT_BENCH_TIME_H

#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/*
 * The calling thread's own CPU time: on a shared host, time spent preempted by other tasks
 * would otherwise swamp the few ns measured.
 */
static inline double thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * ns of thread CPU time per call of the raw syscall NR (no libc caching can skip the kernel),
 * over ITERS calls; NR must be cheap and harmless with a 0 argument (getpgid, getppid).
 */
static inline double syscall_loop_ns(long nr, int iters)
{
	double t0 = thread_cpu_ns();

	for (int i = 0; i < iters; i++)
		syscall(nr, 0);
	return (thread_cpu_ns() - t0) / iters;
}

#endif /* VMEXIT_BENCH_TIME_H */
