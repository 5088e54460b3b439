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
	err = overhead_sample(o);
	if (err) {
		fprintf(stderr, "vmexit: --overhead: cannot read the programs' statistics: %s\n",
			strerror(-err));
		overhead_stop(o);
		return err;
	}
	o->base_ns = o->run_ns;
	o->base_cnt = o->run_cnt;
	o->run_ns = o->run_cnt = 0;
	return 0;
}

int overhead_sample(struct overhead *o)
{
	__u64 ns = 0, cnt = 0;
	int err = bpf_run_stats_read(o->progs, o->fds, o->nr);

	if (err)
		return err;
	for (int i = 0; i < o->nr; i++) {
		ns += o->progs[i].run_ns;
		cnt += o->progs[i].run_cnt;
	}
	o->run_ns = ns - o->base_ns;
	o->run_cnt = cnt - o->base_cnt;
	return 0;
}

void overhead_stop(struct overhead *o)
{
	if (o->stats_fd > 0)
		close(o->stats_fd);
	o->stats_fd = -1;
}

/* All exits of the rows (kernel and VMM) and the time they took. */
static void exit_totals(const struct row_table *rt, __u64 *exits, __u64 *ns)
{
	*exits = *ns = 0;
	for (__u32 i = 0; i < rt->nr; i++) {
		*exits += rt->rows[i].count;
		*ns += rt->rows[i].total_ns;
	}
}

void overhead_line(const struct overhead *o, const struct row_table *rows, char *buf, size_t len)
{
	__u64 exits, exit_ns;

	exit_totals(rows, &exits, &exit_ns);
	snprintf(buf, len, "vmexit's own cost: %.0f ns per exit (%.1f ms in %llu BPF runs), "
		 "%.2f %% of the %.3f s spent in exits", exits ? (double)o->run_ns / exits : 0,
		 o->run_ns / 1e6, (unsigned long long)o->run_cnt,
		 exit_ns ? 100.0 * o->run_ns / exit_ns : 0, exit_ns / 1e9);
}

void overhead_json(const struct overhead *o, const struct row_table *rows, FILE *f)
{
	__u64 exits, exit_ns;

	exit_totals(rows, &exits, &exit_ns);
	fprintf(f, "\"overhead\":{\"bpf_ns\":%llu,\"bpf_runs\":%llu,\"ns_per_exit\":%.1f,"
		   "\"exit_time_pct\":%.4f}", (unsigned long long)o->run_ns,
		(unsigned long long)o->run_cnt, exits ? (double)o->run_ns / exits : 0,
		exit_ns ? 100.0 * o->run_ns / exit_ns : 0);
}
