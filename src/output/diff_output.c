// SPDX-License-Identifier: GPL-2.0
/* `vmexit diff`'s table, CSV, JSON and folded stacks (diff_output.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "diff_output.h"
#include "durations.h"
#include "key_names.h"
#include "out_write.h"
#include "reasons.h"
#include "text_escape.h"

static const char *const level_names[] = {
	[PROF_REASON] = "reason", [PROF_KEY] = "key", [PROF_VCPU] = "vcpu", [PROF_RIP] = "rip",
};

/* What a key or vCPU row is about: "0xe9 out", "vcpu 1"; "" for a reason row. */
static const char *detail(const struct diff_row *r, char *buf, size_t len)
{
	switch (r->id.level) {
	case PROF_KEY:
		return key_str(&r->id.key, key_builtin_name(&r->id.key), buf, len);
	case PROF_VCPU:
		snprintf(buf, len, "vcpu %d", r->id.vcpu);
		return buf;
	default:
		return "";
	}
}

static const char *change_str(double c, char *buf, size_t len)
{
	if (isnan(c))
		snprintf(buf, len, "-");
	else if (isinf(c))
		snprintf(buf, len, "new");
	else
		snprintf(buf, len, "%+.1f%%", c * 100);
	return buf;
}

static const char *sig_str(const struct diff_row *r)
{
	if (r->sig_rate && r->sig_lat)
		return "rate+lat";
	return r->sig_rate ? "rate" : r->sig_lat ? "latency" : "-";
}

static const char *dur(__u64 ns, char *buf, size_t len)
{
	if (!ns)
		return "-";
	duration_str(buf, len, (double)ns);
	return buf;
}

static void print_header(const struct run_diff *d, const struct diff_source *b,
			 const struct diff_source *a, FILE *f)
{
	fprintf(f, "before: %s (%s, %.3f s)\nafter:  %s (%s, %.3f s)\n", b->path, b->p->kind,
		b->p->span_s, a->path, a->p->kind, a->p->span_s);
	fprintf(f, "rates: %s, per %s; latencies: %s%s; Holm over %u tests, family-wise "
		"false-positive level %g; --min-change %g%%\n", DIFF_RATE_TEST,
		d->o.per_run ? "run (--per-run)" : "second of guest time", DIFF_LAT_TEST,
		d->hist ? "" : " (not run: a side has no histograms)", d->nr_tests, d->o.alpha,
		d->o.min_change * 100);
	fprintf(f, "%u significant change%s.\n\n", d->nr_sig, d->nr_sig == 1 ? "" : "s");
}

static void print_table(const struct run_diff *d, const struct diff_source *b,
			const struct diff_source *a, FILE *f)
{
	char rb[48], db[48], nb[TEXT_NAME_MAX], c1[16], c2[16];
	char t[6][24];

	print_header(d, b, a, f);
	fprintf(f, "%-16s %-22s %9s %9s %8s %7s %7s %9s %9s %9s %9s %8s %10s %s\n", "GUEST",
		"REASON", d->o.per_run ? "BEFORE" : "BEFORE/s", d->o.per_run ? "AFTER" : "AFTER/s",
		"CHANGE", "TIME%B", "TIME%A", "P50 B", "P50 A", "P99 B", "P99 A", "LAT CHG",
		d->o.per_run ? "COST us" : "COST us/s", "SIGNIFICANT");
	if (!d->nr)
		fprintf(f, "(no exits of a guest of both runs)\n");
	for (__u32 i = 0; i < d->nr; i++) {
		const struct diff_row *r = &d->rows[i];
		char what[64];

		if (r->parent < 0)
			snprintf(what, sizeof(what), "%s",
				 reason_str(r->id.isa, r->id.reason, rb, sizeof(rb)));
		else
			snprintf(what, sizeof(what), "  %s", detail(r, db, sizeof(db)));
		fprintf(f, "%s %-22.22s %9.1f %9.1f %8s %7.2f %7.2f %9s %9s %9s %9s %8s %+10.1f %s\n",
			text_fit(nb, sizeof(nb), r->parent < 0 ? r->guest : "", 16, 16), what,
			r->rate[0], r->rate[1], change_str(r->rate_change, c1, sizeof(c1)),
			r->share[0] * 100, r->share[1] * 100, dur(r->p50[0], t[0], sizeof(t[0])),
			dur(r->p50[1], t[1], sizeof(t[1])), dur(r->p99[0], t[2], sizeof(t[2])),
			dur(r->p99[1], t[3], sizeof(t[3])),
			change_str(r->lat_change, c2, sizeof(c2)), (r->cost[1] - r->cost[0]) / 1e3,
			sig_str(r));
	}
	for (__u32 i = 0; i < d->nr_only; i++)
		fprintf(f, "note: a guest of one run only, not compared: %s\n", d->only[i]);
}

static void csv_num(FILE *f, double v)
{
	if (isnan(v))
		fputc(',', f);
	else if (isinf(v))
		fprintf(f, ",inf");
	else
		fprintf(f, ",%.6g", v);
}

static void print_csv(const struct run_diff *d, FILE *f)
{
	char rb[48], db[48];

	fprintf(f, "guest,level,reason,detail,count_before,count_after,rate_before,rate_after,"
		   "rate_change,time_pct_before,time_pct_after,p50_ns_before,p50_ns_after,"
		   "p99_ns_before,p99_ns_after,latency_change,p_rate,p_latency,"
		   "cost_change_ns_per_%s,significant_rate,significant_latency\n",
		d->o.per_run ? "run" : "s");
	for (__u32 i = 0; i < d->nr; i++) {
		const struct diff_row *r = &d->rows[i];

		csv_put_field(f, r->guest);
		fprintf(f, ",%s,", level_names[r->id.level]);
		csv_put_field(f, reason_str(r->id.isa, r->id.reason, rb, sizeof(rb)));
		fputc(',', f);
		csv_put_field(f, detail(r, db, sizeof(db)));
		fprintf(f, ",%llu,%llu", (unsigned long long)r->count[0],
			(unsigned long long)r->count[1]);
		csv_num(f, r->rate[0]);
		csv_num(f, r->rate[1]);
		csv_num(f, r->rate_change);
		csv_num(f, r->share[0] * 100);
		csv_num(f, r->share[1] * 100);
		fprintf(f, ",%llu,%llu,%llu,%llu", (unsigned long long)r->p50[0],
			(unsigned long long)r->p50[1], (unsigned long long)r->p99[0],
			(unsigned long long)r->p99[1]);
		csv_num(f, r->lat_change);
		csv_num(f, r->p_rate);
		csv_num(f, r->p_lat);
		csv_num(f, r->cost[1] - r->cost[0]);
		fprintf(f, ",%d,%d\n", r->sig_rate, r->sig_lat);
	}
}

static void json_num(FILE *f, const char *key, double v)
{
	if (isnan(v) || isinf(v))
		fprintf(f, ",\"%s\":null", key);
	else
		fprintf(f, ",\"%s\":%.6g", key, v);
}

static void json_side(FILE *f, const char *name, const struct diff_row *r, int s)
{
	fprintf(f, ",\"%s\":{\"count\":%llu,\"completed\":%llu", name,
		(unsigned long long)r->count[s], (unsigned long long)r->completed[s]);
	json_num(f, "rate", r->rate[s]);
	json_num(f, "time_pct", r->share[s] * 100);
	json_num(f, "mean_ns", r->mean_ns[s]);
	fprintf(f, ",\"p50_ns\":%llu,\"p99_ns\":%llu}", (unsigned long long)r->p50[s],
		(unsigned long long)r->p99[s]);
}

static void json_run(FILE *f, const char *name, const struct diff_source *s)
{
	fprintf(f, "\"%s\":{\"path\":", name);
	json_put_str(f, s->path);
	fprintf(f, ",\"kind\":\"%s\",\"span_s\":%.6f}", s->p->kind, s->p->span_s);
}

static void print_json(const struct run_diff *d, const struct diff_source *b,
		       const struct diff_source *a, FILE *f)
{
	char rb[48], db[48];

	fputc('{', f);
	json_run(f, "before", b);
	fputc(',', f);
	json_run(f, "after", a);
	fprintf(f, ",\"tests\":{\"rate\":\"%s\",\"latency\":\"%s\",\"correction\":\"holm\","
		   "\"alpha\":%g,\"min_change\":%g,\"count\":%u,\"latency_tested\":%s},"
		   "\"rates_per\":\"%s\",\"significant\":%u,\"rows\":[", DIFF_RATE_TEST,
		DIFF_LAT_TEST, d->o.alpha, d->o.min_change, d->nr_tests, d->hist ? "true" : "false",
		d->o.per_run ? "run" : "guest_second", d->nr_sig);
	for (__u32 i = 0; i < d->nr; i++) {
		const struct diff_row *r = &d->rows[i];

		fprintf(f, "%s{\"guest\":", i ? "," : "");
		json_put_str(f, r->guest);
		fprintf(f, ",\"level\":\"%s\",\"isa\":\"%s\",\"reason\":%u,\"reason_name\":",
			level_names[r->id.level], isa_name(r->id.isa), r->id.reason);
		json_put_str(f, reason_str(r->id.isa, r->id.reason, rb, sizeof(rb)));
		if (r->id.level == PROF_KEY) {
			fprintf(f, ",\"key_kind\":\"%s\",\"key\":%llu,\"key_dir\":\"%s\",\"key_name\":",
				key_kind_name(r->id.key.kind), (unsigned long long)r->id.key.key,
				key_dir_name(r->id.key.dir));
			json_put_str(f, detail(r, db, sizeof(db)));
		}
		if (r->id.level == PROF_VCPU)
			fprintf(f, ",\"vcpu\":%d", r->id.vcpu);
		json_side(f, "before", r, 0);
		json_side(f, "after", r, 1);
		json_num(f, "rate_change", r->rate_change);
		json_num(f, "latency_change", r->lat_change);
		json_num(f, "p_rate", r->p_rate);
		json_num(f, "p_latency", r->p_lat);
		json_num(f, "cost_change_ns_per_s", r->cost[1] - r->cost[0]);
		fprintf(f, ",\"significant_rate\":%s,\"significant_latency\":%s}",
			r->sig_rate ? "true" : "false", r->sig_lat ? "true" : "false");
	}
	fprintf(f, "],\"unmatched\":[");
	for (__u32 i = 0; i < d->nr_only; i++) {
		if (i)
			fputc(',', f);
		json_put_str(f, d->only[i]);
	}
	fprintf(f, "]}\n");
}

int diff_print(enum out_format fmt, const struct run_diff *d, const struct diff_source *before,
	       const struct diff_source *after, FILE *f)
{
	if (fmt == OUT_CSV)
		print_csv(d, f);
	else if (fmt == OUT_JSON)
		print_json(d, before, after, f);
	else
		print_table(d, before, after, f);
	return out_flush(f);
}

/* The stack's line prefix, "guest;reason;frames". */
static void stack_line(const struct run_profile *p, const struct prof_stack *s, FILE *f)
{
	char rb[48];

	fprintf(f, "%s;%s;%s", p->guests[s->guest].name,
		reason_str(s->isa, s->reason, rb, sizeof(rb)), s->folded);
}

static __u64 twin_ns(const struct run_profile *p, const struct run_profile *q,
		     const struct prof_stack *s)
{
	const char *name = p->guests[s->guest].name;

	for (__u32 i = 0; i < q->nr_stacks; i++) {
		const struct prof_stack *t = &q->stacks[i];

		if (t->isa == s->isa && t->reason == s->reason &&
		    !strcmp(q->guests[t->guest].name, name) && !strcmp(t->folded, s->folded))
			return t->ns;
	}
	return ~0ull;
}

int diff_print_folded(const struct run_profile *before, const struct run_profile *after, FILE *f)
{
	for (__u32 i = 0; i < before->nr_stacks; i++) {
		const struct prof_stack *s = &before->stacks[i];
		__u64 t = twin_ns(before, after, s);

		stack_line(before, s, f);
		fprintf(f, " %llu %llu\n", (unsigned long long)s->ns,
			(unsigned long long)(t == ~0ull ? 0 : t));
	}
	for (__u32 i = 0; i < after->nr_stacks; i++) {
		const struct prof_stack *s = &after->stacks[i];

		if (twin_ns(after, before, s) != ~0ull)
			continue;	/* printed with before's */
		stack_line(after, s, f);
		fprintf(f, " 0 %llu\n", (unsigned long long)s->ns);
	}
	return out_flush(f);
}
