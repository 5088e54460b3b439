/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmarks that run vmexit ask of its process (bench_startup.c, bench_capture.c). */
#ifndef VMEXIT_BENCH_PROC_H
#define VMEXIT_BENCH_PROC_H

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Whether pid catches SIGTERM yet (SigCgt in /proc/PID/status): a vmexit stream or record is
 * tracing from then on (live_run() installs its handlers once the programs are attached, as
 * tests/host/lib.sh's wait_tracing knows). -1 when pid is gone.
 */
static inline int catches_sigterm(pid_t pid)
{
	char path[64], line[256];
	unsigned long long mask = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && sscanf(line, "SigCgt: %llx", &mask) != 1)
		;
	fclose(f);
	return !!(mask & (1ull << (SIGTERM - 1)));
}

#endif /* VMEXIT_BENCH_PROC_H */
