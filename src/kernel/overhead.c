// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "overhead.h"

int overhead_start(struct overhead *o, struct bpf_program *const *list, int nr)
{
	int err;

	memset(o, 0, sizeof(*o));
	o->stats_fd = bpf_run_stats_enable();
	if (o->stats_fd < 0) {
		fprintf(stderr, "vmexit: --overhead: cannot enable BPF run-time statistics: %s "
			"(needs CAP_SYS_ADMIN and Linux 5.8, or sysctl kernel.bpf_stats_enabled=1)\n",
			strerror(-o->stats_fd));
		return o->stats_fd;
	}
	o->nr = bpf_run_stats_progs(list, nr, o->progs, o->fds, OVERHEAD_MAX_PROGS);
	o->nr_exit = o->nr;
	err = overhead_sample(o);
	if (err) {
		fprintf(stderr, "vmexit: --overhead: cannot read the programs' statistics: %s\n",
			strerror(-err));
		overhead_stop(o);
		return err;
	}
	o->base_ns = o->cost.run_ns;
	o->base_cnt = o->cost.run_cnt;
	o->cost.run_ns = o->cost.run_cnt = 0;
	return 0;
}

int overhead_add_wake(struct overhead *o, struct bpf_program *const *list, int nr)
{
	int n = bpf_run_stats_progs(list, nr, o->progs + o->nr, o->fds + o->nr,
				    OVERHEAD_MAX_PROGS - o->nr), err;

	o->nr += n;
	err = overhead_sample(o);
	if (err) {
		fprintf(stderr, "vmexit: --overhead: cannot read --wake's programs' statistics: "
			"%s\n", strerror(-err));
		return err;
	}
	o->base_wake_ns = o->cost.wake_ns;
	o->base_wake_cnt = o->cost.wake_cnt;
	o->cost.wake_ns = o->cost.wake_cnt = 0;
	return 0;
}

int overhead_sample(struct overhead *o)
{
	__u64 ns = 0, cnt = 0, wns = 0, wcnt = 0;
	int err = bpf_run_stats_read(o->progs, o->fds, o->nr);

	if (err)
		return err;
	for (int i = 0; i < o->nr; i++) {
		*(i < o->nr_exit ? &ns : &wns) += o->progs[i].run_ns;
		*(i < o->nr_exit ? &cnt : &wcnt) += o->progs[i].run_cnt;
	}
	o->cost.run_ns = ns - o->base_ns;
	o->cost.run_cnt = cnt - o->base_cnt;
	o->cost.wake_ns = wns - o->base_wake_ns;
	o->cost.wake_cnt = wcnt - o->base_wake_cnt;
	return 0;
}

void overhead_stop(struct overhead *o)
{
	if (o->stats_fd > 0)
		close(o->stats_fd);
	o->stats_fd = -1;
}
