// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "stat_output.h"
#include "stack_output.h"
#include "out_write.h"
#include "durations.h"
#include "inflight.h"
#include "hist.h"
#include "lost_causes.h"
#include "reasons.h"
#include "text_escape.h"
#include "tracing_info_print.h"
#include "key_groups.h"
#include "key_names.h"
#include "qmp_names.h"
#include "rip_rows.h"

static const struct stat_view *sort_view;

static __u64 sort_value(const struct row *r)
{
	switch (sort_view->sort) {
	case SORT_TIME:
		return r->total_ns;
	case SORT_MAX:
		return r->completed ? r->max_ns : 0;
	case SORT_P99:
		return row_percentile(r, 99);
	default:
		return r->count;
	}
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	__u64 vx = sort_value(x), vy = sort_value(y);

	if (vx != vy)
		return vx < vy ? 1 : -1;
	return row_key_cmp(&x->key, &y->key);
}

static void rows_sort(const struct stat_view *v, struct row_table *rt)
{
	sort_view = v;
	/* An empty table has no array yet, and qsort(NULL, 0) is undefined (UBSan says so). */
	if (rt->nr)
		qsort(rt->rows, rt->nr, sizeof(*rt->rows), row_cmp);
	row_table_reindex(rt);
}

static const char *row_reason(const struct row *r, char *buf, size_t len)
{
	return reason_label(r->key.isa, r->key.reason, buf, len);
}

static const char *row_vm(const struct stat_view *v, const struct row *r)
{
	return v->by == BY_REASON ? "*"
				  : name_cache_get_at(v->names, r->key.tgid, r->key.start);
}

/* --stacks: guests named as the rows are. */
static const char *stack_guest(void *ctx, __u32 tgid, __u64 start)
{
	return name_cache_get_at(ctx, tgid, start);
}

#define STAT_STACK_VIEW(v)	{ .guest = stack_guest, .ctx = (v)->names, .unit_ns = (v)->unit_ns }

/* The key's name: QEMU's (--qmp), else the built-in one, else "". */
static const char *row_key_name(const struct stat_view *v, const struct row *r, char *buf,
				size_t len)
{
	return qmp_key_name(v->qmp, r->key.tgid, r->key.start, &r->key.key, buf, len);
}

/* The KEY column: "0x3f8 out serial", "0xa0000-0xbffff write vga-lowmem". */
static const char *row_key_str(const struct stat_view *v, const struct row *r, char *buf,
			       size_t len)
{
	char nb[64], eb[TEXT_NAME_MAX];

	return key_span_str(&r->key.key, r->key.key_end, text_esc(eb, row_key_name(v, r, nb, sizeof(nb))),
			    buf, len);
}

#define KEY_COL_MIN	26
#define KEY_COL_MAX	48

/* The KEY column's width: its longest key (a device's span and name), within bounds. */
static int key_col_width(const struct stat_view *v, const struct row_table *rt)
{
	int w = KEY_COL_MIN;

	for (__u32 i = 0; v->key_mode && i < rt->nr; i++) {
		char kb[96];
		int n = (int)strlen(row_key_str(v, &rt->rows[i], kb, sizeof(kb)));

		if (n > w)
			w = n < KEY_COL_MAX ? n : KEY_COL_MAX;
	}
	return w;
}

/* --by rip: a RIP row's symbol+offset from its guest's --guest-symbols table, else NULL. */
static const char *row_symbol(const struct stat_view *v, const struct row *r, char *buf,
			      size_t len)
{
	if (r->key.key.kind != KEY_RIP || v->by == BY_REASON ||
	    !guest_symbols_lookup(&v->syms, row_vm(v, r), r->key.key.key, buf, len))
		return NULL;
	return buf;
}

/* The SYMBOL column: with --by rip and --guest-symbols. */
static bool symbol_column(const struct stat_view *v)
{
	return v->key_mode == KEY_MODE_RIP && v->syms.nr;
}

static double pct(__u64 ns, double secs)
{
	return secs > 0 ? (double)ns / (secs * 1e9) * 100.0 : 0;
}

/* TIME%: the share of the period spent in the row's exits, counting only the part of each that
 * fell inside it (rows.h, row_time_in_ns). */
static double time_pct(const struct row *r, double secs)
{
	return pct(row_time_in_ns(r), secs);
}

static void print_hist(const struct stat_view *v, const struct row *r, FILE *f)
{
	__u64 peak = 0, lo_b = NR_BUCKETS, hi_b = 0;
	char rb[64], nb[TEXT_NAME_MAX];

	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (!r->hist[b])
			continue;
		if (lo_b == NR_BUCKETS)
			lo_b = b;
		hi_b = b;
		if (r->hist[b] > peak)
			peak = r->hist[b];
	}
	fprintf(f, "\n%s", text_esc(nb, row_vm(v, r)));
	if (r->key.vcpu >= 0)
		fprintf(f, " vCPU %d", r->key.vcpu);
	fprintf(f, " %s\n", row_reason(r, rb, sizeof(rb)));
	if (!peak) {
		fprintf(f, "    (no completed exits)\n");
		return;
	}
	fprintf(f, "%24s : %-10s distribution\n", "ns", "count");
	for (__u64 b = lo_b; b <= hi_b; b++) {
		int stars = (int)((r->hist[b] * 40 + peak - 1) / peak);
		char range[40];

		if (b == NR_BUCKETS - 1)
			snprintf(range, sizeof(range), "%llu -> ...",
				 (unsigned long long)hist_bucket_low(b));
		else
			snprintf(range, sizeof(range), "%llu -> %llu",
				 (unsigned long long)hist_bucket_low(b),
				 (unsigned long long)hist_bucket_high(b) - 1);
		fprintf(f, "%24s : %-10llu |%-40.*s|\n", range, (unsigned long long)r->hist[b],
			r->hist[b] ? (stars ? stars : 1) : 0,
			"****************************************");
	}
}

static void print_table_row(const struct stat_view *v, const struct stat_report *rep,
			    const struct row *r, const char *vm, const char *reason, bool total,
			    FILE *f)
{
	char tot[24], avg[24], p50[24], p99[24], max[24], blk[24], rq[24], nb[TEXT_NAME_MAX];
	__u64 a = r->completed ? r->total_ns / r->completed : 0;

	fprintf(f, "%s ", text_fit(nb, sizeof(nb), vm, 16, 16));
	if (v->by == BY_VCPU) {
		if (r->key.vcpu >= 0)
			fprintf(f, "%4d ", r->key.vcpu);
		else
			fprintf(f, "%4s ", total ? "" : "?");
	}
	if (v->key_mode) {
		char kb[96];

		fprintf(f, "%-*.*s ", v->key_w, v->key_w, total ? "" : row_key_str(v, r, kb, sizeof(kb)));
	}
	if (symbol_column(v)) {
		char sb[128];
		const char *sym = total ? "" : row_symbol(v, r, sb, sizeof(sb));

		fprintf(f, "%-30.30s ", sym ? sym : "-");
	}
	fprintf(f, "%-22.22s %10llu %10.1f %6.2f%%", reason,
		(unsigned long long)r->count, rep->interval_s > 0 ? r->count / rep->interval_s : 0,
		time_pct(r, rep->interval_s));
	/*
	 * No exit of the row completed in its period (all still in flight): it has no latency
	 * yet, which a 0ns would hide (its TIME% and the STUCK section say how long so far). CSV
	 * and JSON keep their numbers: their Completed / completed field says 0.
	 */
	if (!r->completed) {
		fprintf(f, " %9s %9s %9s %9s %9s", "-", "-", "-", "-", "-");
		if (v->tsc_mhz > 0)
			fprintf(f, " %14s %10s", "-", "-");
		if (v->split)
			fprintf(f, " %7s %9s %9s", "-", "-", "-");
		fputc('\n', f);
		return;
	}
	fprintf(f, " %9s %9s %9s %9s %9s",
		fmt_duration(v->unit_ns, r->total_ns, tot, sizeof(tot)),
		fmt_duration(v->unit_ns, a, avg, sizeof(avg)),
		fmt_duration(v->unit_ns, row_percentile(r, 50), p50, sizeof(p50)),
		fmt_duration(v->unit_ns, row_percentile(r, 99), p99, sizeof(p99)),
		fmt_duration(v->unit_ns, r->max_ns, max, sizeof(max)));
	if (v->tsc_mhz > 0)
		fprintf(f, " %14.0f %10.0f", r->total_ns * v->tsc_mhz / 1e3, a * v->tsc_mhz / 1e3);
	if (v->split)
		fprintf(f, " %6.1f%% %9s %9s",
			r->total_ns ? 100.0 * r->oncpu_ns / r->total_ns : 0.0,
			fmt_duration(v->unit_ns, r->blocked_ns, blk, sizeof(blk)),
			fmt_duration(v->unit_ns, r->runq_ns, rq, sizeof(rq)));
	fputc('\n', f);
}

struct split_sum {
	__u32 tgid;
	__u64 start;		/* with tgid: the process (row_key.start) */
	struct row kernel, user;
};

static void print_split_line(const char *vm, const char *what, const struct row *r, FILE *f)
{
	double t = r->total_ns ? (double)r->total_ns : 1;
	char nb[TEXT_NAME_MAX];

	if (!r->count)
		return;
	fprintf(f, "%s %-17s %5.1f%% on CPU (handled), %5.1f%% blocked (halted or "
		"sleeping), %5.1f%% waiting for a CPU\n", text_fit(nb, sizeof(nb), vm, 16, 16), what,
		100.0 * r->oncpu_ns / t,
		100.0 * r->blocked_ns / t, 100.0 * r->runq_ns / t);
}

/*
 * --split in the summary: per VM, where its exit time went. Guest exits and exits to the VMM
 * stay apart: on hardware a guest exit's time includes the VMM's time that it was handed over.
 */
static void print_split_summary(const struct stat_view *v, const struct row_table *rt, FILE *f)
{
	struct split_sum *sums = calloc(rt->nr ? rt->nr : 1, sizeof(*sums));
	__u32 n = 0;

	if (!sums)
		return;
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row *r = &rt->rows[i];
		__u32 j = 0;

		while (j < n && (sums[j].tgid != r->key.tgid || sums[j].start != r->key.start))
			j++;
		if (j == n) {
			sums[n].tgid = r->key.tgid;
			sums[n++].start = r->key.start;
		}
		row_add(r->key.isa == VMEXIT_ISA_USER ? &sums[j].user : &sums[j].kernel, r);
	}
	if (n)
		fprintf(f, "Exit time per VM:\n");
	for (__u32 j = 0; j < n; j++) {
		const struct split_sum *x = &sums[j];
		const char *vm = v->by == BY_REASON ? "*"
				 : name_cache_get_at(v->names, x->tgid, x->start);

		print_split_line(vm, "guest exits", &x->kernel, f);
		print_split_line(vm, "exits to the VMM", &x->user, f);
	}
	free(sums);
}

/* --by rip: why some exits have no RIP, rather than leave (none) to be guessed. */
static void print_rip_none(const struct stat_view *v, const struct row_table *rt, FILE *f)
{
	__u64 none = 0;

	for (__u32 i = 0; v->key_mode == KEY_MODE_RIP && i < rt->nr; i++) {
		if (rt->rows[i].key.key.kind == KEY_NONE)
			none += rt->rows[i].count;
	}
	if (none)
		fprintf(f, "note: %llu exit(s) to the VMM with no RIP, (none): no guest exit was in "
			"flight when they began (kvm_exit does not fire on this host, or missed them)\n",
			(unsigned long long)none);
}

/* The --overhead line, for the summary of the whole run only (the statistics are cumulative). */
static void print_overhead(const struct stat_report *rep, FILE *f)
{
	char line[256];

	if (!rep->overhead || !rep->final)
		return;
	overhead_line(rep->overhead, rep->rows, line, sizeof(line));
	fprintf(f, "%s\n", line);
}

/*
 * The next exit the STUCK section lists from *i on, NULL after the last: in flight for stuck_ns
 * or more (still, or until its thread exited), or completed after as long. *age: its age, or
 * its latency. Only exits that were stuck: an alert on a non-empty list has no false positive.
 */
static const struct inflight_exit *stuck_next(const struct stat_report *rep, __u32 *i,
					      __u64 *age)
{
	while (*i < rep->nr_inflight + rep->nr_stuck) {
		__u32 k = (*i)++;
		const struct inflight_exit *e;

		if (k >= rep->nr_inflight) {
			e = &rep->stuck[k - rep->nr_inflight];
			*age = inflight_age(e, rep->now_ns);
			return e;
		}
		e = &rep->inflight[k];
		*age = inflight_age(e, rep->now_ns);
		if (*age >= rep->stuck_ns && !(rep->final && e->end_ns))
			return e;
	}
	return NULL;
}

/* How an exit of the STUCK section ended, if it did. */
static const char *stuck_state(const struct inflight_exit *e, char *buf, size_t len)
{
	if (e->completed && e->nr > 1)
		snprintf(buf, len, "  (completed; %llu such exits)", (unsigned long long)e->nr);
	else
		snprintf(buf, len, "%s", e->completed ? "  (completed)" :
			 e->end_ns ? "  (ended with its thread)" : "");
	return buf;
}

static void print_stuck(const struct stat_view *v, const struct stat_report *rep, FILE *f)
{
	char rb[64], age_s[24], lim[24], nb[TEXT_NAME_MAX], st[48];
	const struct inflight_exit *e;
	bool head = false;
	__u32 i = 0;
	__u64 age;

	while ((e = stuck_next(rep, &i, &age))) {
		struct row r = { .key = { .isa = e->isa, .reason = e->reason } };

		if (!head) {
			/* Scaled with its unit whatever -u says: the threshold as it was given. */
			fprintf(f, "STUCK: exits in flight for %s or more%s\n",
				fmt_duration(0, rep->stuck_ns, lim, sizeof(lim)),
				rep->final ? " during the run" : "");
			fprintf(f, "%-16s %4s %8s %-22s %10s", "GUEST", "vCPU", "TID", "REASON",
				"FOR");
			if (v->split)
				fprintf(f, " %9s %9s %9s", "ONCPU", "BLOCKED", "RUNQ");
			fputc('\n', f);
			head = true;
		}
		fprintf(f, "%s %4d %8u %-22.22s %10s",
			text_fit(nb, sizeof(nb), name_cache_get_at(v->names, e->tgid, e->proc_start),
				 16, 16),
			e->vcpu, e->tid, row_reason(&r, rb, sizeof(rb)),
			fmt_duration(v->unit_ns, age, age_s, sizeof(age_s)));
		/* Where its time went so far: asleep, on CPU, or starved of a CPU. */
		if (v->split) {
			char on_s[24], blk_s[24], rq_s[24];
			__u64 on, blk, rq;

			inflight_split(e, rep->now_ns, &on, &blk, &rq);
			fprintf(f, " %9s %9s %9s", fmt_duration(v->unit_ns, on, on_s, sizeof(on_s)),
				fmt_duration(v->unit_ns, blk, blk_s, sizeof(blk_s)),
				fmt_duration(v->unit_ns, rq, rq_s, sizeof(rq_s)));
		}
		fprintf(f, "%s\n", stuck_state(e, st, sizeof(st)));
	}
}

static void print_json_inflight(const struct stat_view *v, const struct stat_report *rep,
				FILE *f)
{
	const struct inflight_exit *e;
	bool first = true;
	__u32 i = 0;
	char rb[48];
	__u64 age;

	fprintf(f, ",\"in_flight\":[");
	while ((e = stuck_next(rep, &i, &age))) {
		bool user = e->isa == VMEXIT_ISA_USER;

		fprintf(f, "%s{\"pid\":%u,\"guest\":", first ? "" : ",", e->tgid);
		json_put_str(f, name_cache_get_at(v->names, e->tgid, e->proc_start));
		fprintf(f, ",\"tid\":%u,\"vcpu\":%d,\"kind\":\"%s\",\"isa\":\"%s\",\"reason\":%u,"
			   "\"reason_name\":", e->tid, e->vcpu, user ? "user" : "kernel",
			isa_name(e->isa), e->reason);
		json_put_str(f, reason_str(e->isa, e->reason, rb, sizeof(rb)));
		fprintf(f, ",\"age_ns\":%llu,\"ended\":%s,\"completed\":%s,\"count\":%llu",
			(unsigned long long)age, e->end_ns && !e->completed ? "true" : "false",
			e->completed ? "true" : "false", (unsigned long long)e->nr);
		if (v->split) {
			__u64 on, blk, rq;

			inflight_split(e, rep->now_ns, &on, &blk, &rq);
			fprintf(f, ",\"oncpu_ns\":%llu,\"blocked_ns\":%llu,\"runq_ns\":%llu",
				(unsigned long long)on, (unsigned long long)blk,
				(unsigned long long)rq);
		}
		fputc('}', f);
		first = false;
	}
	fputc(']', f);
}

/*
 * The summary's exits counted with no latency: those their thread exited in (a vCPU's last
 * exit as its VMM quits: no alarm) and those still in flight at the end.
 */
static void print_no_latency(const struct stat_report *rep, __u64 in_flight, FILE *f)
{
	__u64 ended = rep->ended < in_flight ? rep->ended : in_flight;

	fprintf(f, "note: %llu exit(s) counted with no latency:", (unsigned long long)in_flight);
	if (ended)
		fprintf(f, " %llu ended with their thread%s", (unsigned long long)ended,
			ended < in_flight ? "," : "");
	if (ended < in_flight)
		fprintf(f, " %llu still in flight at the end", (unsigned long long)(in_flight - ended));
	fputc('\n', f);
}

static void print_table(struct stat_view *v, const struct stat_report *rep, FILE *f)
{
	struct row_table *rt = rep->rows;
	struct row ktot = { .min_ns = ~0ULL }, utot = { .min_ns = ~0ULL };
	__u64 in_flight = 0;
	const char *unit = v->unit_ns == 1 ? "(ns)" : v->unit_ns == 1000 ? "(us)" :
			   v->unit_ns ? "(ms)" : "";
	char rb[64];

	if (rep->final)
		fprintf(f, "\nSummary: %.2f s", rep->elapsed_s);
	else
		fprintf(f, "\nInterval %.2f s (at %.1f s)", rep->interval_s, rep->elapsed_s);
	/* As the ACRN report does: the period in TSC cycles too. */
	if (v->tsc_mhz > 0)
		fprintf(f, ", %.0f cycles at %g MHz", rep->interval_s * v->tsc_mhz * 1e6, v->tsc_mhz);
	fputc('\n', f);
	fprintf(f, "%-16s ", "VM");
	if (v->by == BY_VCPU)
		fprintf(f, "%4s ", "vCPU");
	v->key_w = key_col_width(v, rt);
	if (v->key_mode)
		fprintf(f, "%-*s ", v->key_w, v->key_mode == KEY_MODE_RIP ? "RIP" : "KEY");
	if (symbol_column(v))
		fprintf(f, "%-30s ", "SYMBOL");
	fprintf(f, "%-22s %10s %10s %7s %9s %9s %9s %9s %9s", "REASON", "COUNT", "RATE/s",
		"TIME%", "TOTAL", "AVG", "P50", "P99", "MAX");
	if (v->tsc_mhz > 0)
		fprintf(f, " %14s %10s", "TOTAL(cycles)", "AVG(cyc)");
	if (v->split)
		fprintf(f, " %7s %9s %9s", "ONCPU%", "BLOCKED", "RUNQ");
	fprintf(f, " %s\n", unit);
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row *r = &rt->rows[i];

		print_table_row(v, rep, r, row_vm(v, r), row_reason(r, rb, sizeof(rb)), false, f);
		row_add(r->key.isa == VMEXIT_ISA_USER ? &utot : &ktot, r);
		/* An interval's row may complete more than it began (begun in an earlier one). */
		if (r->count > r->completed)
			in_flight += r->count - r->completed;
	}
	if (!rt->nr)
		fprintf(f, "(no exits)\n");
	ktot.key.vcpu = utot.key.vcpu = -1;
	if (ktot.count)
		print_table_row(v, rep, &ktot, "TOTAL", "guest exits", true, f);
	if (utot.count)
		print_table_row(v, rep, &utot, "TOTAL", "exits to the VMM", true, f);
	/*
	 * Exits to the VMM and not one guest exit: kvm_exit never fired (a host whose KVM does
	 * not trace it, such as kvm_pvm): what KVM handles in the kernel (PIC, PIT and coalesced
	 * RTC port writes, CPUID, MSRs, HLT...) is absent, not zero.
	 */
	if (rep->final && !ktot.count && utot.count)
		fprintf(f, "note: no guest exit seen (kvm:kvm_exit did not fire): exits KVM handles "
			"in the kernel are not in this table; vmexit top --kvm-events pio,cpuid (or "
			"record --kvm-events) counts them\n");
	if (v->split && rep->final)
		print_split_summary(v, rt, f);
	if (in_flight && rep->final)
		print_no_latency(rep, in_flight, f);
	print_rip_none(v, rt, f);
	if (rep->stuck_ns)
		print_stuck(v, rep, f);
	for (int i = 0; i < NR_LOST; i++) {
		if (rep->lost[i])
			fprintf(f, "%s: %llu %s\n", lost_cause_effect(i) == LOST_EFFECT_NONE ? "note" : "LOST",
				(unsigned long long)rep->lost[i], lost_cause_help(i, rep->lost_source));
	}
	print_overhead(rep, f);
	if (v->hist) {
		for (__u32 i = 0; i < rt->nr; i++)
			print_hist(v, &rt->rows[i], f);
	}
	if (rep->stacks)
		stacks_print_table(&(struct stack_view)STAT_STACK_VIEW(v), rep->stacks, f);
}

/*
 * The exits of the STUCK section as rows of their own: In_Flight 1 (still in flight), 2 (left by
 * its exiting thread) or 3 (completed), NR_Exit 0 (each is counted in its reason's row
 * already), its age so far (or its latency) in Total_ns and, with --split, its split so far.
 */
static void print_csv_inflight(const struct stat_view *v, const struct stat_report *rep, FILE *f)
{
	const struct inflight_exit *e;
	__u32 i = 0;
	char rb[64];
	__u64 age;

	while ((e = stuck_next(rep, &i, &age))) {
		struct row r = { .key = { .isa = e->isa, .reason = e->reason } };

		fprintf(f, "%.3f,%d,%.3f,", rep->elapsed_s, rep->final, rep->interval_s);
		csv_put_field(f, name_cache_get_at(v->names, e->tgid, e->proc_start));
		fprintf(f, ",%u,%d,%s,", e->tgid, e->vcpu, isa_name(e->isa));
		csv_put_field(f, row_reason(&r, rb, sizeof(rb)));
		fprintf(f, ",%u,0,0.000,", e->reason);
		if (v->tsc_mhz > 0)
			fprintf(f, "%.0f,", age * v->tsc_mhz / 1e3);
		fprintf(f, "0.0000,%llu,0,0,0,0,0,0", (unsigned long long)age);
		if (v->split) {
			__u64 on, blk, rq;

			inflight_split(e, rep->now_ns, &on, &blk, &rq);
			fprintf(f, ",%llu,%llu,%llu", (unsigned long long)on,
				(unsigned long long)blk, (unsigned long long)rq);
		}
		fprintf(f, ",%d\n", e->completed ? 3 : e->end_ns ? 2 : 1);
	}
}

static void print_csv(struct stat_view *v, const struct stat_report *rep, FILE *f)
{
	struct row_table *rt = rep->rows;
	char rb[64], nb[64];

	if (!v->csv_header_done) {
		fprintf(f, "Time,Final,Interval_s,VM,PID,vCPU,ISA,Exit_Reason,Reason_Code,NR_Exit,"
			   "NR_Exit/Sec,");
		if (v->tsc_mhz > 0)
			fprintf(f, "Time Consumed(cycles),");
		fprintf(f, "Time Percentage,Total_ns,Completed,Avg_ns,Min_ns,P50_ns,P99_ns,"
			   "Max_ns%s,In_Flight%s%s\n", v->split ? ",Oncpu_ns,Blocked_ns,Runq_ns" : "",
			v->key_mode ? ",Key_Kind,Key,Key_Dir,Key_Name" : "",
			v->key_mode == KEY_MODE_RIP ? ",Symbol,Guest_Mode" :
			v->key_mode ? ",Key_End" : "");
		v->csv_header_done = true;
	}
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row *r = &rt->rows[i];

		fprintf(f, "%.3f,%d,%.3f,", rep->elapsed_s, rep->final, rep->interval_s);
		csv_put_field(f, row_vm(v, r));
		fprintf(f, ",%d,%d,%s,", v->by == BY_REASON ? -1 : (int)r->key.tgid, r->key.vcpu,
			isa_name(r->key.isa));
		csv_put_field(f, row_reason(r, rb, sizeof(rb)));
		fprintf(f, ",%u,%llu,%.3f,", r->key.reason, (unsigned long long)r->count,
			rep->interval_s > 0 ? r->count / rep->interval_s : 0);
		if (v->tsc_mhz > 0)
			fprintf(f, "%.0f,", r->total_ns * v->tsc_mhz / 1e3);
		fprintf(f, "%.4f,%llu,%llu,%llu,%llu,%llu,%llu,%llu",
			time_pct(r, rep->interval_s), (unsigned long long)r->total_ns,
			(unsigned long long)r->completed,
			(unsigned long long)(r->completed ? r->total_ns / r->completed : 0),
			(unsigned long long)(r->completed ? r->min_ns : 0),
			(unsigned long long)row_percentile(r, 50),
			(unsigned long long)row_percentile(r, 99),
			(unsigned long long)(r->completed ? r->max_ns : 0));
		if (v->split)
			fprintf(f, ",%llu,%llu,%llu", (unsigned long long)r->oncpu_ns,
				(unsigned long long)r->blocked_ns, (unsigned long long)r->runq_ns);
		fprintf(f, ",0");
		if (v->key_mode) {
			fprintf(f, ",%s,%llu,%s,", key_kind_name(r->key.key.kind),
				(unsigned long long)r->key.key.key, key_dir_name(r->key.key.dir));
			csv_put_field(f, row_key_name(v, r, nb, sizeof(nb)));
		}
		if (v->key_mode == KEY_MODE_DEVICE)
			fprintf(f, ",%llu", (unsigned long long)(r->key.key_end ? r->key.key_end
								    : r->key.key.key));
		if (v->key_mode == KEY_MODE_RIP) {
			char sb[128];
			const char *sym = row_symbol(v, r, sb, sizeof(sb));
			bool rip = r->key.key.kind == KEY_RIP;

			fputc(',', f);
			csv_put_field(f, sym ? sym : "");
			fprintf(f, ",%s", rip ? rip_guest_mode(r->key.key.key) : "");
		}
		fputc('\n', f);
	}
	if (rep->stuck_ns)	/* live: stat, not report */
		print_csv_inflight(v, rep, f);
	print_overhead(rep, stderr);
}

/* A --by rip row: its RIP (hex: JSON numbers lose bits past 2^53), symbol and guest mode. */
static void print_json_rip(const struct stat_view *v, const struct row *r, FILE *f)
{
	bool rip = r->key.key.kind == KEY_RIP;
	char sb[128];
	const char *sym = row_symbol(v, r, sb, sizeof(sb));

	if (rip)
		fprintf(f, ",\"rip\":\"%#llx\"", (unsigned long long)r->key.key.key);
	else
		fprintf(f, ",\"rip\":null");
	fprintf(f, ",\"symbol\":");
	if (sym)
		json_put_str(f, sym);
	else
		fprintf(f, "null");
	if (rip)
		fprintf(f, ",\"guest_mode\":\"%s\"", rip_guest_mode(r->key.key.key));
	else
		fprintf(f, ",\"guest_mode\":null");
}

static void print_json(struct stat_view *v, const struct stat_report *rep, FILE *f)
{
	struct row_table *rt = rep->rows;
	char rb[48], nb[64];

	fprintf(f, "{\"interval_s\":%.6f,\"elapsed_s\":%.6f,\"final\":%s,\"rows\":[",
		rep->interval_s, rep->elapsed_s, rep->final ? "true" : "false");
	for (__u32 i = 0; i < rt->nr; i++) {
		const struct row *r = &rt->rows[i];
		bool user = r->key.isa == VMEXIT_ISA_USER;

		fprintf(f, "%s{\"pid\":%d,\"guest\":", i ? "," : "",
			v->by == BY_REASON ? -1 : (int)r->key.tgid);
		json_put_str(f, v->by == BY_REASON ? "" : row_vm(v, r));
		fprintf(f, ",\"vcpu\":%d,\"kind\":\"%s\",\"isa\":\"%s\",\"reason\":%u,"
			   "\"reason_name\":", r->key.vcpu, user ? "user" : "kernel",
			isa_name(r->key.isa), r->key.reason);
		json_put_str(f, reason_str(r->key.isa, r->key.reason, rb, sizeof(rb)));
		fprintf(f, ",\"count\":%llu,\"completed\":%llu,\"rate\":%.3f,\"time_pct\":%.4f,"
			   "\"total_ns\":%llu,\"avg_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,"
			   "\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,\"hist_total\":%llu",
			(unsigned long long)r->count, (unsigned long long)r->completed,
			rep->interval_s > 0 ? r->count / rep->interval_s : 0,
			time_pct(r, rep->interval_s), (unsigned long long)r->total_ns,
			(unsigned long long)(r->completed ? r->total_ns / r->completed : 0),
			(unsigned long long)(r->completed ? r->min_ns : 0),
			(unsigned long long)(r->completed ? r->max_ns : 0),
			(unsigned long long)row_percentile(r, 50),
			(unsigned long long)row_percentile(r, 90),
			(unsigned long long)row_percentile(r, 99),
			(unsigned long long)row_hist_total(r));
		if (v->tsc_mhz > 0)
			fprintf(f, ",\"cycles\":%.0f", r->total_ns * v->tsc_mhz / 1e3);
		if (v->key_mode) {
			fprintf(f, ",\"key_kind\":\"%s\",\"key\":%llu,\"key_dir\":\"%s\",\"key_name\":",
				key_kind_name(r->key.key.kind), (unsigned long long)r->key.key.key,
				key_dir_name(r->key.key.dir));
			json_put_str(f, row_key_name(v, r, nb, sizeof(nb)));
			if (r->key.key_end)
				fprintf(f, ",\"key_end\":%llu", (unsigned long long)r->key.key_end);
		}
		if (v->key_mode == KEY_MODE_RIP)
			print_json_rip(v, r, f);
		if (v->split)
			fprintf(f, ",\"oncpu_ns\":%llu,\"blocked_ns\":%llu,\"runq_ns\":%llu",
				(unsigned long long)r->oncpu_ns, (unsigned long long)r->blocked_ns,
				(unsigned long long)r->runq_ns);
		if (v->hist) {
			bool first = true;

			fprintf(f, ",\"hist\":[");
			for (__u32 b = 0; b < NR_BUCKETS; b++) {
				if (!r->hist[b])
					continue;
				fprintf(f, "%s[%llu,%llu,%llu]", first ? "" : ",",
					(unsigned long long)hist_bucket_low(b),
					(unsigned long long)(b == NR_BUCKETS - 1 ? 0 :
							     hist_bucket_high(b)),
					(unsigned long long)r->hist[b]);
				first = false;
			}
			fputc(']', f);
		}
		fputc('}', f);
	}
	fputc(']', f);
	if (rep->stuck_ns)	/* live: stat, not report */
		print_json_inflight(v, rep, f);
	fprintf(f, ",\"lost\":{");
	for (int i = 0; i < NR_LOST; i++)
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", lost_cause_key(i),
			(unsigned long long)rep->lost[i]);
	fputc('}', f);
	if (rep->hooks) {
		fputc(',', f);
		hooks_json(rep->hooks, f);
	}
	if (rep->overhead && rep->final) {
		fputc(',', f);
		overhead_json(rep->overhead, rt, f);
	}
	if (rep->stacks)
		stacks_print_json(&(struct stack_view)STAT_STACK_VIEW(v), rep->stacks, f);
	fprintf(f, "}\n");
}

void stat_view_names_of(struct stat_view *v, const struct sample *s)
{
	v->names = s->names;
	v->qmp = s->qmp;
}

struct stat_report stat_report_of(struct stat_view *v, const struct sample *s, bool final)
{
	struct stat_report r = {
		.rows = final ? (v->key_mode ? s->key_cum : s->cum) :
			(v->key_mode ? s->key_rows : s->rows),
		.interval_s = final ? s->elapsed_s : s->interval_s, .elapsed_s = s->elapsed_s,
		.final = final, .lost_source = s->lost_source, .hooks = s->hooks,
		.overhead = s->overhead, .inflight = s->inflight, .nr_inflight = s->nr_inflight,
		.stuck = final ? s->cum_stuck : s->stuck,
		.nr_stuck = final ? s->nr_cum_stuck : s->nr_stuck,
		.ended = final ? s->cum_ended : 0, .now_ns = s->now_ns, .stuck_ns = s->stuck_ns,
		.stacks = final ? s->stacks : NULL,
	};

	memcpy(r.lost, s->lost, sizeof(r.lost));
	stat_view_names_of(v, s);
	return r;
}

int stat_print(struct stat_view *v, const struct stat_report *r, FILE *f)
{
	struct stat_report top = *r;
	struct row_table shown;
	int err;

	rows_sort(v, r->rows);
	row_table_init(&shown);
	/* --by rip: the top RIPs per guest x reason, picked by the sort; the rest as (other). */
	if (v->key_mode == KEY_MODE_RIP && v->top) {
		if (rip_rows_top(r->rows, v->top, &shown)) {
			row_table_free(&shown);
			return -ENOMEM;
		}
		rows_sort(v, &shown);
		top.rows = &shown;
	}
	/* --by key: ports and addresses per device, unless --per-address. */
	if (v->key_mode == KEY_MODE_DEVICE && !v->per_address) {
		if (key_groups_build(r->rows, v->qmp, &shown)) {
			row_table_free(&shown);
			return -ENOMEM;
		}
		rows_sort(v, &shown);
		top.rows = &shown;
	}
	switch (v->fmt) {
	case OUT_CSV:
		print_csv(v, &top, f);
		break;
	case OUT_JSON:
		print_json(v, &top, f);
		break;
	default:
		print_table(v, &top, f);
	}
	row_table_free(&shown);
	err = out_flush(f);
	return err;
}

int stat_print_folded(const struct stat_view *v, const struct stack_table *t, FILE *f)
{
	stacks_print_folded(&(struct stack_view)STAT_STACK_VIEW(v), t, f);
	return out_flush(f);
}
