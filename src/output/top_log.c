// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit top --log`: one line per interval with the busiest reasons, for a terminal that
 * scrolls or a file; a header every few lines, like vmstat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lost_causes.h"
#include "reasons.h"
#include "top_view_int.h"

#define LOG_REPEAT	20	/* --log: header every this many lines, like vmstat */

struct log_sum {
	__u32 isa, reason;
	__u64 count;
};

static int log_sum_cmp(const void *pa, const void *pb)
{
	const struct log_sum *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	if (a->isa != b->isa)
		return a->isa < b->isa ? -1 : 1;
	return a->reason < b->reason ? -1 : a->reason > b->reason;
}

/* Kvm events by their tracepoint's name; exits short, as `vmexit stat` prints them. */
static void log_label(__u32 isa, __u32 reason, char *buf, size_t len)
{
	if (isa == TOP_ISA_KVM_EVENT)
		top_reason_label(isa, reason, buf, len);
	else
		reason_label(isa, reason, buf, len);
}

/*
 * The columns: the busiest reasons of tot. With keep, the columns of the last header stay
 * where they are and only reasons without one are added, so that a line never changes the
 * meaning of the columns above it without a new header.
 */
static bool log_pick(struct top_log *lg, const struct row_table *tot, const regex_t *re,
		     bool keep)
{
	struct log_sum *s = NULL;
	__u32 n = 0;
	struct top_log old = *lg;

	if (tot && tot->nr)
		s = calloc(tot->nr, sizeof(*s));
	for (__u32 i = 0; s && i < tot->nr; i++) {
		const struct row *r = &tot->rows[i];
		__u32 j;

		for (j = 0; j < n; j++) {
			if (s[j].isa == r->key.isa && s[j].reason == r->key.reason)
				break;
		}
		if (j == n) {
			char label[96];

			top_reason_label(r->key.isa, r->key.reason, label, sizeof(label));
			if (re && regexec(re, label, 0, NULL, 0))
				continue;
			s[n++] = (struct log_sum){ r->key.isa, r->key.reason, 0 };
		}
		s[j].count += r->count;
	}
	if (n)
		qsort(s, n, sizeof(*s), log_sum_cmp);
	if (!keep)
		lg->nr = 0;
	for (__u32 i = 0; i < n && lg->nr < TOP_LOG_COLS; i++) {
		struct row_key k = { 0, -1, s[i].isa, s[i].reason, 0, {}, 0 };
		int c;

		for (c = 0; c < lg->nr && row_key_cmp(&lg->cols[c], &k); c++)
			;
		if (c < lg->nr)
			continue;
		lg->cols[lg->nr] = k;
		log_label(s[i].isa, s[i].reason, lg->labels[lg->nr], sizeof(lg->labels[lg->nr]));
		lg->nr++;
	}
	free(s);
	if (old.nr != lg->nr)
		return true;
	for (int i = 0; i < lg->nr; i++) {
		if (row_key_cmp(&old.cols[i], &lg->cols[i]))
			return true;
	}
	return false;
}

static int col_width(const char *label)
{
	int n = (int)strlen(label);

	return n > 9 ? n : 9;
}

int top_log_emit(struct top_log *lg, const struct row_table *cur, const struct row_table *tot,
		 double interval_s, const __u64 lost[NR_LOST], const char *clock,
		 const regex_t *re, char *buf, size_t len)
{
	__u64 kexits = 0, uexits = 0, events = 0, lost_now = 0, per[TOP_LOG_COLS] = {};
	bool changed = false, due = !lg->started || lg->lines >= LOG_REPEAT;
	size_t off = 0;

	buf[0] = 0;
	for (__u32 i = 0; cur && i < cur->nr; i++) {
		const struct row *r = &cur->rows[i];

		if (r->key.isa == VMEXIT_ISA_USER)
			uexits += r->count;
		else if (r->key.isa == TOP_ISA_KVM_EVENT)
			events += r->count;
		else
			kexits += r->count;
	}
	for (int i = 0; i < NR_LOST; i++) {
		if (i != LOST_UNMATCHED_ENTRY)
			lost_now += lost[i] - lg->lost_prev[i];
		lg->lost_prev[i] = lost[i];
	}
	/* -z (kvm_stat's): an idle interval leaves no line, and no header for it. */
	if (lg->skip_zero && !kexits && !uexits && !events && !lost_now)
		return 0;
	/* A reason new since the last header gets a column while there is room for it. */
	if (due || lg->nr < TOP_LOG_COLS)
		changed = log_pick(lg, tot, re, !due);
	if (due || changed) {
		off += snprintf(buf + off, len - off, "%8s %9s %8s %6s", "time", "exits/s",
				"vmm/s", "lost");
		for (int i = 0; i < lg->nr && off < len; i++)
			off += snprintf(buf + off, len - off, " %*s", col_width(lg->labels[i]),
					lg->labels[i]);
		if (off < len)
			off += snprintf(buf + off, len - off, "\n");
		lg->lines = 0;
		lg->started = true;
	}
	for (__u32 i = 0; cur && i < cur->nr; i++) {
		const struct row *r = &cur->rows[i];

		for (int c = 0; c < lg->nr; c++) {
			if (lg->cols[c].isa == r->key.isa && lg->cols[c].reason == r->key.reason)
				per[c] += r->count;
		}
	}
#define RATE(n) (interval_s > 0 ? (double)(n) / interval_s : 0)
	if (off < len)
		off += snprintf(buf + off, len - off, "%8s %9.0f %8.0f %6llu", clock, RATE(kexits),
				RATE(uexits), (unsigned long long)lost_now);
	for (int i = 0; i < lg->nr && off < len; i++)
		off += snprintf(buf + off, len - off, " %*.0f", col_width(lg->labels[i]),
				RATE(per[i]));
#undef RATE
	if (off < len)
		snprintf(buf + off, len - off, "\n");
	lg->lines++;
	return 0;
}
