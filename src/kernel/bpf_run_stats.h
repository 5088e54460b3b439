/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's accounting of vmexit's own BPF programs: run time and run count per program
 * (bpf_prog_info), which the kernel only keeps while run-time statistics are enabled.
 */
#ifndef VMEXIT_BPF_RUN_STATS_H
#define VMEXIT_BPF_RUN_STATS_H

#include <linux/types.h>

/* One of our programs as the kernel accounts it (the exporter shows each). */
struct expo_prog {
	char name[64];			/* libbpf's name: the kernel keeps only 15 bytes */
	__u64 run_ns;
	__u64 run_cnt;
};

struct bpf_program;
struct bpf_prog_info;

/* One program's bpf_prog_info (run time and count, recursion misses...); 0 or -errno. */
int bpf_prog_info_read(int fd, struct bpf_prog_info *info);

/*
 * Turns run-time statistics on for as long as the returned fd stays open (BPF_ENABLE_STATS,
 * Linux 5.8), or finds them on already (sysctl kernel.bpf_stats_enabled). The fd, 0 when the
 * sysctl has them on, or -errno (-EPERM without CAP_SYS_ADMIN).
 */
int bpf_run_stats_enable(void);

/* The names and fds of up to max of the nr programs in list, for bpf_run_stats_read(). */
int bpf_run_stats_progs(struct bpf_program *const *list, int nr, struct expo_prog *progs, int *fds,
			int max);
/* Refreshes run_ns/run_cnt of each program from the kernel; 0 or -errno. */
int bpf_run_stats_read(struct expo_prog *progs, const int *fds, int nr);

#endif /* VMEXIT_BPF_RUN_STATS_H */
