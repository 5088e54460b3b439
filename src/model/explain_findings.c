// SPDX-License-Identifier: GPL-2.0
/* explain's drill-down over one guest's profile (explain_findings.h). */
#include <string.h>
#include <strings.h>
#include "explain_findings.h"
#include "reasons.h"

#define CAUSE_KEY(id, key, words) [EXPLAIN_##id] = key,
#define CAUSE_WORDS(id, key, words) [EXPLAIN_##id] = words,
static const char *const cause_keys[] = { EXPLAIN_CAUSES(CAUSE_KEY) };
static const char *const cause_words[] = { EXPLAIN_CAUSES(CAUSE_WORDS) };

const char *explain_cause_key(enum explain_cause c)
{
	return c < NR_EXPLAIN_CAUSES ? cause_keys[c] : "?";
}

const char *explain_cause_words(enum explain_cause c)
{
	return c < NR_EXPLAIN_CAUSES ? cause_words[c] : "?";
}

bool explain_reason_idle(__u32 isa, __u32 reason)
{
	const char *n = reason_name(isa, reason);

	return n && (!strcasecmp(n, "hlt") || !strcmp(n, "WFx"));
}

/* Keeps the EXPLAIN_TOP largest by value in v (sorted, largest first). */
static void top_insert(struct explain_item *v, __u32 *nr, struct explain_item it, double value,
		       double (*value_of)(const struct explain_item *))
{
	__u32 at = *nr;

	while (at > 0 && value_of(&v[at - 1]) < value)
		at--;
	if (at >= EXPLAIN_TOP)
		return;
	if (*nr < EXPLAIN_TOP)
		(*nr)++;
	memmove(&v[at + 1], &v[at], (*nr - 1 - at) * sizeof(*v));
	v[at] = it;
}

static double row_time(const struct explain_item *it)
{
	return (double)it->row->total_ns;
}

static double row_count(const struct explain_item *it)
{
	return (double)it->row->count;
}

static double stack_time(const struct explain_item *it)
{
	return (double)it->stack->ns;
}

static bool same_reason(const struct prof_row *a, const struct prof_row *b)
{
	return a->id.guest == b->id.guest && a->id.isa == b->id.isa &&
	       a->id.reason == b->id.reason;
}

/*
 * Where kvm_exit fires, an exit handed to the VMM lies inside the guest exit that caused it
 * (kvm_exit .. kvm_entry spans kvm_userspace_exit .. KVM_RUN): the guest exits alone add up
 * to the time out of guest mode; summing both would count the VMM's part twice.
 */
static bool counted(const struct explain *e, const struct prof_row *r)
{
	return !e->nested || r->id.isa != VMEXIT_ISA_USER;
}

static void reasons(struct explain *e)
{
	const struct run_profile *p = e->p;
	double total = 0, idle = 0;
	struct explain_item best[EXPLAIN_TOP];
	__u32 nr_best = 0;

	for (__u32 i = 0; i < p->nr; i++) {
		const struct prof_row *r = &p->rows[i];

		if (r->id.guest == e->guest && r->id.level == PROF_REASON &&
		    r->id.isa != VMEXIT_ISA_USER)
			e->nested = true;
	}
	for (__u32 i = 0; i < p->nr; i++) {
		const struct prof_row *r = &p->rows[i];
		bool is_idle;

		if (r->id.guest != e->guest || r->id.level != PROF_REASON || !counted(e, r))
			continue;
		is_idle = explain_reason_idle(r->id.isa, r->id.reason);
		total += (double)r->total_ns;
		if (is_idle)
			idle += (double)r->total_ns;
		top_insert(e->reasons, &e->nr_reasons, (struct explain_item){ .row = r },
			   (double)r->total_ns, row_time);
		if (!is_idle)
			top_insert(best, &nr_best, (struct explain_item){ .row = r },
				   (double)r->total_ns, row_time);
	}
	for (__u32 i = 0; i < e->nr_reasons; i++)
		e->reasons[i].share = total > 0 ? e->reasons[i].row->total_ns / total : 0;
	if (e->guest_s > 0) {
		e->exit_share = total / 1e9 / e->guest_s;
		e->idle_share = idle / 1e9 / e->guest_s;
	}
	e->top = nr_best ? best[0].row : NULL;
}

/* The top reason's keys and RIPs. */
static void keys_and_rips(struct explain *e)
{
	const struct run_profile *p = e->p;

	for (__u32 i = 0; i < p->nr; i++) {
		const struct prof_row *r = &p->rows[i];

		if (!same_reason(r, e->top))
			continue;
		if (r->id.level == PROF_KEY)
			top_insert(e->keys, &e->nr_keys, (struct explain_item){ .row = r },
				   (double)r->total_ns, row_time);
		else if (r->id.level == PROF_RIP)
			top_insert(e->rips, &e->nr_rips, (struct explain_item){ .row = r },
				   (double)r->count, row_count);
	}
	for (__u32 i = 0; i < e->nr_keys; i++)
		e->keys[i].share = e->top->total_ns ?
				   (double)e->keys[i].row->total_ns / e->top->total_ns : 0;
	for (__u32 i = 0; i < e->nr_rips; i++)
		e->rips[i].share = e->top->count ? (double)e->rips[i].row->count / e->top->count : 0;
}

static void split(struct explain *e)
{
	const struct prof_row *t = e->top;
	double sum = (double)t->oncpu_ns + t->blocked_ns + t->runq_ns;

	if (sum <= 0)
		return;
	e->part[PART_ONCPU] = t->oncpu_ns / sum;
	e->part[PART_BLOCKED] = t->blocked_ns / sum;
	e->part[PART_RUNQ] = t->runq_ns / sum;
	e->main_part = PART_ONCPU;
	for (int i = 1; i < NR_PARTS; i++) {
		if (e->part[i] > e->part[e->main_part])
			e->main_part = i;
	}
}

static void stacks(struct explain *e)
{
	const struct run_profile *p = e->p;
	double total = 0;

	for (__u32 i = 0; i < p->nr_stacks; i++) {
		const struct prof_stack *s = &p->stacks[i];

		/* A guest exit's off-CPU time in the VMM is charged to the exit to the VMM
		 * inside it (the innermost in flight): its stacks are the guest exit's too. */
		bool inside = e->nested && e->top->id.isa != VMEXIT_ISA_USER &&
			      s->isa == VMEXIT_ISA_USER;

		if (s->guest != e->guest || (!inside && (s->isa != e->top->id.isa ||
							 s->reason != e->top->id.reason)))
			continue;
		total += (double)s->ns;
		top_insert(e->stacks, &e->nr_stacks, (struct explain_item){ .stack = s },
			   (double)s->ns, stack_time);
	}
	for (__u32 i = 0; i < e->nr_stacks; i++)
		e->stacks[i].share = total > 0 ? e->stacks[i].stack->ns / total : 0;
}

static bool top_stack_has(const struct explain *e, const char *frame)
{
	return e->nr_stacks && strstr(e->stacks[0].stack->folded, frame);
}

/* The cause, from the figures: an expert's rules of thumb, each stated with its threshold. */
static enum explain_cause cause(const struct explain *e)
{
	double busy = e->exit_share - e->idle_share;

	if (!e->top || busy < EXPLAIN_QUIET_SHARE)
		return e->idle_share >= EXPLAIN_QUIET_SHARE ? EXPLAIN_IDLE : EXPLAIN_NOTHING;
	if (!e->part[PART_ONCPU] && !e->part[PART_BLOCKED] && !e->part[PART_RUNQ])
		return EXPLAIN_EXIT_RATE;	/* no split: the rate is what is known */
	/*
	 * A third of the time asleep: the handler waits for something (a guest exit's time on
	 * CPU includes the kernel's own handling and, under an emulator, much more). Else a quarter of the time waiting for a CPU is
	 * starvation: a CPU hog preempts the vCPU thread wherever it runs, inside exits or in
	 * guest mode alike, so even a vCPU that gets half its CPU waits only about as long
	 * in its exits as it runs in them.
	 */
	if (e->part[PART_BLOCKED] >= EXPLAIN_BLOCKED_SHARE)
		/* handle_userfault: the fault waits for the VMM's userfaultfd handler */
		return top_stack_has(e, "handle_userfault") ? EXPLAIN_USERFAULTFD :
		       EXPLAIN_SLOW_HANDLER;
	if (e->part[PART_RUNQ] >= EXPLAIN_STARVED_SHARE)
		return EXPLAIN_STARVED;
	/* Short exits handled on CPU: their number is the cost; long ones: the handler. */
	return !e->p->hist || prof_row_percentile(e->top, 50) < EXPLAIN_SHORT_NS ?
	       EXPLAIN_EXIT_RATE : EXPLAIN_BUSY_HANDLER;
}

void explain_guest(const struct run_profile *p, __u32 g, struct explain *e)
{
	memset(e, 0, sizeof(*e));
	e->p = p;
	e->guest = g;
	e->guest_s = run_profile_guest_s(p, g);
	e->no_kernel_exits = !p->kernel_exits;
	e->no_split = !p->split;
	e->no_keys = !p->keys;
	e->no_stacks = !p->nr_stacks;
	reasons(e);
	if (e->top) {
		keys_and_rips(e);
		split(e);
		stacks(e);
	}
	e->cause = cause(e);
}
