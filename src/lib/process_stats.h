/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's own process, as every Prometheus client library exports it (process_*): CPU
 * time, memory, file descriptors and start time, from /proc/self.
 */
#ifndef VMEXIT_PROCESS_STATS_H
#define VMEXIT_PROCESS_STATS_H

#include <linux/types.h>

struct process_stats {
	__u64 cpu_ns;			/* user + system */
	__u64 resident_bytes;
	__u64 virtual_bytes;
	__u64 open_fds;
	__u64 max_fds;			/* RLIMIT_NOFILE, soft */
	__u64 start_ms;			/* Unix time */
};

/* The system's boot time in Unix ms (/proc/stat btime: whole seconds), 0 if unknown. */
__u64 boot_unix_ms(void);
/* This process's; 0 or -errno. */
int process_stats_read(struct process_stats *ps);

#endif /* VMEXIT_PROCESS_STATS_H */
