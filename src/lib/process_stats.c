// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "process_stats.h"

__u64 boot_unix_ms(void)
{
	/* Read once; threads that race here read and store the same value. */
	static __u64 cached;
	__u64 ms = __atomic_load_n(&cached, __ATOMIC_RELAXED);
	char line[256];
	FILE *f;

	if (ms)
		return ms;
	f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long b;

		if (sscanf(line, "btime %llu", &b) == 1) {
			ms = b * 1000;
			break;
		}
	}
	fclose(f);
	__atomic_store_n(&cached, ms, __ATOMIC_RELAXED);
	return ms;
}

static int count_fds(__u64 *n)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return -errno;
	*n = 0;
	while ((de = readdir(d)))
		*n += de->d_name[0] != '.';
	closedir(d);
	/* Not the one reading the directory. */
	if (*n)
		(*n)--;
	return 0;
}

int process_stats_read(struct process_stats *ps)
{
	unsigned long long utime, stime, start, vsize, rss;
	long hz = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	char buf[1024], *p;
	struct rlimit rl;
	size_t n;
	FILE *f;
	int err;

	f = fopen("/proc/self/stat", "r");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* Fields resume after the name's last ')' (proc(5): utime is the 14th). */
	p = strrchr(buf, ')');
	if (!p || hz <= 0 || page <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d "
		   "%*d %*d %llu %llu %llu", &utime, &stime, &start, &vsize, &rss) != 5)
		return -EINVAL;
	ps->cpu_ns = (utime + stime) * (1000000000 / hz);
	ps->virtual_bytes = vsize;
	ps->resident_bytes = rss * page;
	/* As client libraries do: boot time (whole seconds) plus the start in ticks after it,
	 * the same at every scrape. */
	ps->start_ms = boot_unix_ms() + start * 1000 / hz;
	err = count_fds(&ps->open_fds);
	if (err)
		return err;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	ps->max_fds = rl.rlim_cur;
	return 0;
}
