// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "text_escape.h"
#include "tracing_info_print.h"

void hooks_json(const struct hooks_info *h, FILE *f)
{
	fprintf(f, "\"hooks\":{\"kvm_run\":\"%s\",\"kvm_userspace_exit\":\"%s\","
		   "\"kvm_exit\":\"%s\",\"kvm_entry\":\"%s\",\"fast_path_check\":",
		h->kvm_run, h->kvm_userspace_exit ? h->kvm_userspace_exit : "none", h->kvm_exit,
		h->kvm_entry);
	if (h->check)
		fprintf(f, "{\"window_s\":%.3f,\"matched\":%llu,\"mismatched\":%llu,"
			   "\"unpaired\":%llu,\"unreadable\":%llu,\"entries\":%llu,"
			   "\"classic_missed\":%llu}",
			h->check->window_s, (unsigned long long)h->check->matched,
			(unsigned long long)h->check->mismatched,
			(unsigned long long)h->check->unpaired,
			(unsigned long long)h->check->unreadable,
			(unsigned long long)h->check->entries,
			(unsigned long long)h->check->classic_missed);
	else
		fputs("null", f);
	fputs(",\"note\":", f);
	json_put_str(f, h->note);
	fputc('}', f);
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

void overhead_line(const struct bpf_cost *o, const struct row_table *rows, char *buf, size_t len)
{
	__u64 exits, exit_ns;

	exit_totals(rows, &exits, &exit_ns);
	snprintf(buf, len, "vmexit's own cost: %.0f ns per exit (%.1f ms in %llu BPF runs), "
		 "%.2f %% of the %.3f s spent in exits", exits ? (double)o->run_ns / exits : 0,
		 o->run_ns / 1e6, (unsigned long long)o->run_cnt,
		 exit_ns ? 100.0 * o->run_ns / exit_ns : 0, exit_ns / 1e9);
	if (o->wake_cnt) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, "; --wake's programs %.1f ms in %llu BPF runs",
			 o->wake_ns / 1e6, (unsigned long long)o->wake_cnt);
	}
}

void overhead_json(const struct bpf_cost *o, const struct row_table *rows, FILE *f)
{
	__u64 exits, exit_ns;

	exit_totals(rows, &exits, &exit_ns);
	fprintf(f, "\"overhead\":{\"bpf_ns\":%llu,\"bpf_runs\":%llu,\"ns_per_exit\":%.1f,"
		   "\"exit_time_pct\":%.4f}", (unsigned long long)o->run_ns,
		(unsigned long long)o->run_cnt, exits ? (double)o->run_ns / exits : 0,
		exit_ns ? 100.0 * o->run_ns / exit_ns : 0);
	if (o->wake_cnt)
		fprintf(f, ",\"wake_bpf_ns\":%llu,\"wake_bpf_runs\":%llu",
			(unsigned long long)o->wake_ns, (unsigned long long)o->wake_cnt);
}
