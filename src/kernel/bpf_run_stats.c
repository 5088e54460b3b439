// SPDX-License-Identifier: GPL-2.0
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "bpf_run_stats.h"

static bool sysctl_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 1;
}

int bpf_run_stats_enable(void)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

	if (fd >= 0)
		return fd;
	fd = -errno;
	return sysctl_on() ? 0 : fd;
}

int bpf_run_stats_progs(struct bpf_program *const *list, int nr, struct expo_prog *progs, int *fds,
			int max)
{
	int n = 0;

	for (int i = 0; i < nr && n < max; i++) {
		int fd = bpf_program__fd(list[i]);

		if (fd < 0)
			continue;
		memset(&progs[n], 0, sizeof(progs[n]));
		snprintf(progs[n].name, sizeof(progs[n].name), "%s", bpf_program__name(list[i]));
		fds[n++] = fd;
	}
	return n;
}

int bpf_prog_info_read(int fd, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	/* bpf_prog_get_info_by_fd() arrived in libbpf 1.2; Debian 12 ships 1.1. */
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

int bpf_run_stats_read(struct expo_prog *progs, const int *fds, int nr)
{
	for (int i = 0; i < nr; i++) {
		struct bpf_prog_info info;
		int err = bpf_prog_info_read(fds[i], &info);

		if (err)
			return err;
		progs[i].run_ns = info.run_time_ns;
		progs[i].run_cnt = info.run_cnt;
	}
	return 0;
}
