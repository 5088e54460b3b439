// SPDX-License-Identifier: GPL-2.0
/* explain's answer in words and as JSON (explain_output.h). */
#include <stdio.h>
#include <string.h>
#include "durations.h"
#include "explain_output.h"
#include "key_names.h"
#include "out_write.h"
#include "reasons.h"
#include "text_escape.h"

static const char *const part_words[] = {
	[PART_ONCPU] = "on CPU", [PART_BLOCKED] = "blocked", [PART_RUNQ] = "waiting for a CPU",
};
static const char *const part_keys[] = {
	[PART_ONCPU] = "oncpu", [PART_BLOCKED] = "blocked", [PART_RUNQ] = "runq",
};

/* Frames of the scheduler itself: every blocked stack has them, they say nothing. */
static bool sched_frame(const char *f, size_t n)
{
	static const char *const sched[] = { "schedule", "__schedule", "preempt_schedule",
					     "io_schedule", "finish_task_switch", "__traceiter",
					     "schedule_timeout", "schedule_hrtimeout",
					     "schedule_preempt_disabled", "__cond_resched",
					     "preempt_schedule_common" };

	for (size_t i = 0; i < sizeof(sched) / sizeof(sched[0]); i++) {
		size_t l = strlen(sched[i]);

		if (n >= l && !strncmp(f, sched[i], l))
			return true;
	}
	return false;
}

const char *explain_wait_frame(const char *folded, char *buf, size_t len)
{
	const char *end = folded + strlen(folded);

	/* folded is outermost first: walk from its end. */
	while (end > folded) {
		const char *start = end;
		size_t n;

		while (start > folded && start[-1] != ';')
			start--;
		n = (size_t)(end - start);
		{
			const char *plus = memchr(start, '+', n);

			if (plus)
				n = (size_t)(plus - start);
		}
		if (n && !sched_frame(start, n)) {
			snprintf(buf, len, "%.*s", (int)n, start);
			return buf;
		}
		end = start > folded ? start - 1 : folded;
	}
	snprintf(buf, len, "?");
	return buf;
}

static const char *row_reason(const struct prof_row *r, char *buf, size_t len)
{
	return reason_str(r->id.isa, r->id.reason, buf, len);
}

static const char *row_key(const struct prof_row *r, char *buf, size_t len)
{
	return key_str(&r->id.key, key_builtin_name(&r->id.key), buf, len);
}

static const char *dur(__u64 ns, char *buf, size_t len)
{
	duration_str(buf, len, (double)ns);
	return buf;
}

/* A guest RIP as "0xADDR (symbol+0xoff)", or "0xADDR" without a symbol for it. */
static const char *rip_str(const struct explain *e, const struct explain_source *src, __u64 rip,
			   char *buf, size_t len)
{
	char sym[128];
	const char *guest = e->p->guests[e->guest].name;

	if (src->syms && guest_symbols_lookup(src->syms, guest, rip, sym, sizeof(sym)))
		snprintf(buf, len, "%#llx (%s)", (unsigned long long)rip, sym);
	else
		snprintf(buf, len, "%#llx", (unsigned long long)rip);
	return buf;
}

/* The one-paragraph answer. */
static void answer(const struct explain *e, const struct explain_source *src, FILE *f)
{
	const char *name = e->p->guests[e->guest].name;
	char rb[48], kb[96], d1[24], d2[24], wb[128];
	const struct prof_row *t = e->top;
	/* The part that names the cause: waiting for a CPU need not be the largest. */
	enum explain_part shown = e->cause == EXPLAIN_STARVED ? PART_RUNQ :
				  e->cause == EXPLAIN_SLOW_HANDLER || e->cause == EXPLAIN_USERFAULTFD ?
				  PART_BLOCKED : e->main_part;

	if (!e->nr_reasons) {
		fprintf(f, "%s made no exits that could be seen: %s.\n", name,
			explain_cause_words(e->cause));
		return;
	}
	fprintf(f, "%s spent %.1f %% of its vCPU time in exits", name, e->exit_share * 100);
	if (e->cause == EXPLAIN_NOTHING || e->cause == EXPLAIN_IDLE) {
		if (e->idle_share > 0)
			fprintf(f, " (%.1f %% in HLT)", e->idle_share * 100);
		fprintf(f, ": %s.\n", explain_cause_words(e->cause));
		return;
	}
	fprintf(f, "; %.1f %% of that is %s, %.0f exits/s", t->total_ns * 100.0 /
		(e->exit_share * e->guest_s * 1e9), row_reason(t, rb, sizeof(rb)),
		t->count / e->guest_s);
	if (e->p->hist)
		fprintf(f, " (p50 %s, p99 %s)", dur(prof_row_percentile(t, 50), d1, sizeof(d1)),
			dur(prof_row_percentile(t, 99), d2, sizeof(d2)));
	if (e->nr_keys)
		fprintf(f, "; %.1f %% of its time is %s", e->keys[0].share * 100,
			row_key(e->keys[0].row, kb, sizeof(kb)));
	if (t->id.isa == VMEXIT_ISA_USER)
		fprintf(f, ", handled by the VMM");
	if (e->part[shown] > 0)
		fprintf(f, "; %.1f %% of those exits' time was %s", e->part[shown] * 100,
			part_words[shown]);
	if (shown == PART_BLOCKED && e->nr_stacks)
		fprintf(f, ", %.1f %% of it in %s", e->stacks[0].share * 100,
			explain_wait_frame(e->stacks[0].stack->folded, wb, sizeof(wb)));
	if (e->nr_rips)
		fprintf(f, "; %.1f %% of them leave the guest at %s", e->rips[0].share * 100,
			rip_str(e, src, e->rips[0].row->id.key.key, wb, sizeof(wb)));
	fprintf(f, ": %s.\n", explain_cause_words(e->cause));
}

static void evidence(const struct explain *e, const struct explain_source *src, FILE *f)
{
	char rb[48], kb[96], d1[24], d2[24], sb[192];
	const struct prof_row *t = e->top;

	fprintf(f, "  reasons (share of exit time):");
	for (__u32 i = 0; i < e->nr_reasons; i++) {
		const struct prof_row *r = e->reasons[i].row;

		fprintf(f, "%s %s %.1f %% (%.0f/s", i ? "," : "", row_reason(r, rb, sizeof(rb)),
			e->reasons[i].share * 100, r->count / e->guest_s);
		if (e->p->hist)
			fprintf(f, ", p50 %s", dur(prof_row_percentile(r, 50), d1, sizeof(d1)));
		fputc(')', f);
	}
	fprintf(f, "%s\n", e->nr_reasons ? "" : " (no exits)");
	if (!t)
		return;
	if (e->nr_keys) {
		fprintf(f, "  keys of %s:", row_reason(t, rb, sizeof(rb)));
		for (__u32 i = 0; i < e->nr_keys; i++)
			fprintf(f, "%s %s %.1f %% (%llu exits)", i ? "," : "",
				row_key(e->keys[i].row, kb, sizeof(kb)), e->keys[i].share * 100,
				(unsigned long long)e->keys[i].row->count);
		fputc('\n', f);
	}
	if (e->part[e->main_part] > 0)
		fprintf(f, "  time of %s: on CPU %.1f %%, blocked %.1f %%, waiting for a CPU %.1f %%\n",
			row_reason(t, rb, sizeof(rb)), e->part[PART_ONCPU] * 100,
			e->part[PART_BLOCKED] * 100, e->part[PART_RUNQ] * 100);
	for (__u32 i = 0; i < e->nr_stacks; i++)
		fprintf(f, "  stack %u of its time off CPU, %.1f %% (%s): %s\n", i + 1,
			e->stacks[i].share * 100, dur(e->stacks[i].stack->ns, d1, sizeof(d1)),
			e->stacks[i].stack->folded);
	for (__u32 i = 0; i < e->nr_rips; i++)
		fprintf(f, "  guest RIP %s: %.1f %% of its exits\n",
			rip_str(e, src, e->rips[i].row->id.key.key, sb, sizeof(sb)),
			e->rips[i].share * 100);
	(void)d2;
}

/* What this data could not show, as "not seen" lines (JSON: strings); buf holds one of them. */
static __u32 not_seen(const struct explain *e, const struct explain_source *src,
		      const char **v, char *buf, size_t len)
{
	__u32 n = 0;

	if (e->no_kernel_exits)
		v[n++] = src->live ?
			 "exits handled in the kernel (faults, HLT with an in-kernel irqchip, MSRs): "
			 "kvm_exit did not fire while tracing (it never does on a software KVM such "
			 "as kvm_pvm), only exits to the VMM were seen" :
			 "exits handled in the kernel: the data has only exits to the VMM "
			 "(kvm_exit did not fire)";
	if (e->no_split)
		v[n++] = "on CPU, blocked and waiting for a CPU: not recorded (record --split)";
	if (e->no_keys)
		v[n++] = "ports, addresses and MSRs of the exits: not recorded (record --keys)";
	/* Live, the stacks step ran and came back empty: say so, not that nobody asked. */
	if (e->top && e->main_part != PART_ONCPU && e->no_stacks && src->stacks_s > 0) {
		snprintf(buf, len, "kernel stacks of the blocked time: none in the %.2f s of the "
			 "stacks step (-r %s): no period off CPU during those exits ended while "
			 "it traced", src->stacks_s, src->stacks_reason);
		v[n++] = buf;
	} else if (e->top && e->main_part != PART_ONCPU && e->no_stacks && src->live) {
		/* Live, no guest's top reason was mostly blocked: explain chose not to trace them. */
		v[n++] = "kernel stacks of the blocked time: not traced (explain traces them only "
			 "when the top reason's time is mostly blocked)";
	} else if (e->top && e->main_part != PART_ONCPU && e->no_stacks) {
		v[n++] = "kernel stacks of the blocked time: not recorded (record --split --stacks)";
	}
	if (e->top && !e->nr_rips && !e->no_kernel_exits)
		v[n++] = "guest RIPs: none recorded for this reason";
	return n;
}

static void print_text(const struct explain *e, const struct explain_source *src, FILE *f)
{
	const char *nots[8];
	char nb[256];
	__u32 n = not_seen(e, src, nots, nb, sizeof(nb));

	fprintf(f, "%s, %.2f s of vCPU time (%s):\n", e->p->guests[e->guest].name, e->guest_s,
		src->what);
	answer(e, src, f);
	fprintf(f, "evidence:\n");
	evidence(e, src, f);
	for (__u32 i = 0; i < n; i++)
		fprintf(f, "not seen: %s\n", nots[i]);
}

static void json_row(const struct explain *e, const struct prof_row *r, FILE *f)
{
	char rb[48];

	fprintf(f, "\"reason_name\":");
	json_put_str(f, reason_str(r->id.isa, r->id.reason, rb, sizeof(rb)));
	fprintf(f, ",\"count\":%llu,\"rate\":%.3f,\"total_ns\":%llu",
		(unsigned long long)r->count, e->guest_s > 0 ? r->count / e->guest_s : 0,
		(unsigned long long)r->total_ns);
	if (e->p->hist)
		fprintf(f, ",\"p50_ns\":%llu,\"p99_ns\":%llu",
			(unsigned long long)prof_row_percentile(r, 50),
			(unsigned long long)prof_row_percentile(r, 99));
}

static void print_json(const struct explain *e, const struct explain_source *src, FILE *f)
{
	const char *nots[8];
	char nb[256];
	__u32 n = not_seen(e, src, nots, nb, sizeof(nb));
	char kb[96], wb[128];

	fprintf(f, "{\"guest\":");
	json_put_str(f, e->p->guests[e->guest].name);
	fprintf(f, ",\"source\":");
	json_put_str(f, src->what);
	fprintf(f, ",\"cause\":\"%s\",\"cause_words\":", explain_cause_key(e->cause));
	json_put_str(f, explain_cause_words(e->cause));
	fprintf(f, ",\"traced_s\":%.6f,\"vcpu_s\":%.6f,\"exit_share\":%.6f,\"idle_share\":%.6f,"
		"\"reasons\":[", e->p->span_s, e->guest_s, e->exit_share, e->idle_share);
	for (__u32 i = 0; i < e->nr_reasons; i++) {
		fprintf(f, "%s{", i ? "," : "");
		json_row(e, e->reasons[i].row, f);
		fprintf(f, ",\"share_of_exit_time\":%.6f}", e->reasons[i].share);
	}
	fprintf(f, "],\"top\":");
	if (e->top) {
		fputc('{', f);
		json_row(e, e->top, f);
		fputc('}', f);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\"keys\":[");
	for (__u32 i = 0; i < e->nr_keys; i++) {
		const struct prof_row *r = e->keys[i].row;

		fprintf(f, "%s{\"key_kind\":\"%s\",\"key\":%llu,\"key_dir\":\"%s\",\"key_name\":",
			i ? "," : "", key_kind_name(r->id.key.kind),
			(unsigned long long)r->id.key.key, key_dir_name(r->id.key.dir));
		json_put_str(f, row_key(r, kb, sizeof(kb)));
		fprintf(f, ",\"count\":%llu,\"share\":%.6f}", (unsigned long long)r->count,
			e->keys[i].share);
	}
	fprintf(f, "],\"split\":");
	if (e->top && e->part[e->main_part] > 0)
		fprintf(f, "{\"oncpu\":%.6f,\"blocked\":%.6f,\"runq\":%.6f,\"main\":\"%s\"}",
			e->part[PART_ONCPU], e->part[PART_BLOCKED], e->part[PART_RUNQ],
			part_keys[e->main_part]);
	else
		fprintf(f, "null");
	/* How long live explain's stacks step traced: its stacks' ns are of that window. */
	if (src->stacks_s > 0)
		fprintf(f, ",\"stacks_step_s\":%.6f", src->stacks_s);
	else
		fprintf(f, ",\"stacks_step_s\":null");
	fprintf(f, ",\"stacks\":[");
	for (__u32 i = 0; i < e->nr_stacks; i++) {
		const struct prof_stack *s = e->stacks[i].stack;

		fprintf(f, "%s{\"ns\":%llu,\"share\":%.6f,\"waits_in\":", i ? "," : "",
			(unsigned long long)s->ns, e->stacks[i].share);
		json_put_str(f, explain_wait_frame(s->folded, wb, sizeof(wb)));
		fprintf(f, ",\"folded\":");
		json_put_str(f, s->folded);
		fputc('}', f);
	}
	fprintf(f, "],\"rips\":[");
	for (__u32 i = 0; i < e->nr_rips; i++) {
		__u64 rip = e->rips[i].row->id.key.key;
		char sym[128];

		fprintf(f, "%s{\"rip\":\"%#llx\",\"symbol\":", i ? "," : "",
			(unsigned long long)rip);
		if (src->syms && guest_symbols_lookup(src->syms, e->p->guests[e->guest].name, rip,
						      sym, sizeof(sym)))
			json_put_str(f, sym);
		else
			fprintf(f, "null");
		fprintf(f, ",\"count\":%llu,\"share\":%.6f}",
			(unsigned long long)e->rips[i].row->count, e->rips[i].share);
	}
	fprintf(f, "],\"not_seen\":[");
	for (__u32 i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_put_str(f, nots[i]);
	}
	fprintf(f, "]}\n");
}

int explain_print(const struct explain *e, const struct explain_source *src, bool json, FILE *f)
{
	if (json)
		print_json(e, src, f);
	else
		print_text(e, src, f);
	return out_error(f);
}
