// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "durations.h"
#include "reasons.h"
#include "stack_output.h"
#include "text_escape.h"

static bool same_group(const struct stack_row *a, const struct stack_row *b)
{
	return a->tgid == b->tgid && a->proc_start == b->proc_start && a->isa == b->isa &&
	       a->reason == b->reason;
}

static const char *guest_of(const struct stack_view *v, const struct stack_row *r)
{
	const char *g = v->guest ? v->guest(v->ctx, r->tgid, r->proc_start) : NULL;

	return g && *g ? g : "?";
}

struct group {
	size_t first;		/* its first (largest) row */
	__u64 ns, count;
};

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return (x->first > y->first) - (x->first < y->first);
}

static void print_group(const struct stack_view *v, const struct stack_table *t,
			const struct group *g, FILE *f)
{
	const struct stack_row *head = &t->rows[g->first];
	char nb[TEXT_NAME_MAX], rb[REASON_STR_MAX], db[32];
	int shown = 0;

	fprintf(f, "%s %s: %s off CPU in %llu periods\n", text_esc(nb, guest_of(v, head)),
		reason_label(head->isa, head->reason, rb, sizeof(rb)),
		fmt_duration(v->unit_ns, g->ns, db, sizeof(db)), (unsigned long long)g->count);
	for (size_t i = g->first; i < t->nr && shown < STACKS_TOP; i++) {
		const struct stack_row *r = &t->rows[i];

		if (!same_group(r, head))
			continue;
		shown++;
		fprintf(f, "  %9s %5.1f%% %8llu periods\n", fmt_duration(v->unit_ns, r->ns, db,
			sizeof(db)), g->ns ? 100.0 * r->ns / g->ns : 0,
			(unsigned long long)r->count);
		for (__u32 k = 0; k < r->nr_frames; k++)
			fprintf(f, "      %s\n", r->frames[k]);
		if (!r->nr_frames)
			fprintf(f, "      (no kernel frames)\n");
	}
}

void stacks_print_table(const struct stack_view *v, const struct stack_table *t, FILE *f)
{
	struct group *groups = calloc(t->nr ? t->nr : 1, sizeof(*groups));
	size_t nr = 0;

	fprintf(f, "\nSTACKS: time off CPU during exits, by kernel stack (top %d per guest and "
		"reason)\n", STACKS_TOP);
	if (!t->nr)
		fprintf(f, "(none)\n");
	if (!groups) {
		fprintf(f, "(out of memory)\n");
		return;
	}
	for (size_t i = 0; i < t->nr; i++) {
		size_t g = 0;

		while (g < nr && !same_group(&t->rows[groups[g].first], &t->rows[i]))
			g++;
		if (g == nr)
			groups[nr++].first = i;
		groups[g].ns += t->rows[i].ns;
		groups[g].count += t->rows[i].count;
	}
	qsort(groups, nr, sizeof(*groups), cmp_group);
	for (size_t g = 0; g < nr; g++)
		print_group(v, t, &groups[g], f);
	free(groups);
}

/* A folded line's fields are split on ';' and the count on the last blank. */
static void put_folded_name(const char *s, FILE *f)
{
	for (; *s; s++)
		fputc(*s == ';' || isspace((unsigned char)*s) ? '_' : *s, f);
}

/* A frame as flame graphs merge it: by function, without its offset. */
static void put_folded_frame(const char *s, FILE *f)
{
	const char *plus = strstr(s, "+0x");
	char buf[256];

	snprintf(buf, sizeof(buf), "%.*s", plus ? (int)(plus - s) : (int)strlen(s), s);
	put_folded_name(buf, f);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per distinct stack: rows whose frames differ only in offsets add up. */
void stacks_print_folded(const struct stack_view *v, const struct stack_table *t, FILE *f)
{
	char **lines = calloc(t->nr ? t->nr : 1, sizeof(*lines)), rb[REASON_STR_MAX];
	size_t nr = 0;

	for (size_t i = 0; lines && i < t->nr; i++) {
		const struct stack_row *r = &t->rows[i];
		size_t len = 0;
		FILE *m = open_memstream(&lines[nr], &len);

		if (!m)
			break;
		put_folded_name(guest_of(v, r), m);
		fputc(';', m);
		put_folded_name(reason_label(r->isa, r->reason, rb, sizeof(rb)), m);
		for (__u32 k = r->nr_frames; k > 0; k--) {
			fputc(';', m);
			put_folded_frame(r->frames[k - 1], m);
		}
		/* The value after a tab, which sorts below every frame character: equal stacks
		 * end up next to each other. */
		fprintf(m, "\t%llu", (unsigned long long)r->ns);
		if (fclose(m))
			break;
		nr++;
	}
	if (nr < t->nr)
		fprintf(stderr, "vmexit: out of memory: %zu of %zu stacks folded\n", nr, t->nr);
	if (nr)
		qsort(lines, nr, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < nr;) {
		char *tab = strrchr(lines[i], '\t');
		__u64 ns = 0;
		size_t j = i;

		for (; j < nr && !strncmp(lines[j], lines[i], (size_t)(tab - lines[i]) + 1); j++)
			ns += strtoull(strrchr(lines[j], '\t') + 1, NULL, 10);
		fprintf(f, "%.*s %llu\n", (int)(tab - lines[i]), lines[i], (unsigned long long)ns);
		i = j;
	}
	for (size_t i = 0; i < nr; i++)
		free(lines[i]);
	free(lines);
}

void stacks_print_json(const struct stack_view *v, const struct stack_table *t, FILE *f)
{
	char rb[REASON_STR_MAX];

	fprintf(f, ",\"stacks\":[");
	for (size_t i = 0; i < t->nr; i++) {
		const struct stack_row *r = &t->rows[i];

		fprintf(f, "%s{\"pid\":%u,\"guest\":", i ? "," : "", r->tgid);
		json_put_str(f, guest_of(v, r));
		fprintf(f, ",\"isa\":\"%s\",\"reason\":", isa_name(r->isa));
		json_put_str(f, reason_label(r->isa, r->reason, rb, sizeof(rb)));
		fprintf(f, ",\"frames\":[");
		for (__u32 k = 0; k < r->nr_frames; k++) {
			if (k)
				fputc(',', f);
			json_put_str(f, r->frames[k]);
		}
		fprintf(f, "],\"ns\":%llu,\"count\":%llu}", (unsigned long long)r->ns,
			(unsigned long long)r->count);
	}
	fputc(']', f);
}
