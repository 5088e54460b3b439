// SPDX-License-Identifier: GPL-2.0
/* stat --wake: names, order, percentiles and halt-poll advice of the kernel's wake cells. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hist.h"
#include "rows.h"
#include "wake_rows.h"

void wake_snapshot_free(struct wake_snapshot *s)
{
	free(s->wkeys);
	free(s->wcells);
	free(s->hkeys);
	free(s->hcells);
	memset(s, 0, sizeof(*s));
}

static const char *const source_names[] = {
#define WAKE_SRC_NAME(ID, name) [WAKE_SRC_##ID] = #name,
	WAKE_SOURCES(WAKE_SRC_NAME)
#undef WAKE_SRC_NAME
};

static const char *const part_names[] = {
#define WAKE_PART_NAME(ID, name) [WAKE_PART_##ID] = #name,
	WAKE_PARTS(WAKE_PART_NAME)
#undef WAKE_PART_NAME
};

static const char *const hlt_names[] = {
#define HLT_PART_NAME(ID, name) [HLT_PART_##ID] = #name,
	HLT_PARTS(HLT_PART_NAME)
#undef HLT_PART_NAME
};

const char *wake_source_name(__u32 source)
{
	return source < NR_WAKE_SOURCES ? source_names[source] : "?";
}

const char *wake_part_name(enum wake_part p)
{
	return part_names[p];
}

const char *hlt_part_name(enum hlt_part p)
{
	return hlt_names[p];
}

const char *wake_lost_name(enum wake_lost l)
{
	static const char *const names[NR_WAKE_LOSSES] = {
		[WAKE_LOST_SLOTS] = "pending interrupts past the vCPU's slots",
		[WAKE_LOST_CELLS] = "cells (map full)",
		[WAKE_LOST_THREADS] = "vCPU threads (map full)",
		[WAKE_LOST_RING] = "deliveries the event ring could not take",
	};

	return names[l];
}

const char *wake_lost_key(enum wake_lost l)
{
	static const char *const keys[NR_WAKE_LOSSES] = {
		[WAKE_LOST_SLOTS] = "slots",
		[WAKE_LOST_CELLS] = "cells",
		[WAKE_LOST_THREADS] = "threads",
		[WAKE_LOST_RING] = "ring",
	};

	return keys[l];
}

/* qsort has no context: the arrays are sorted through an index, then permuted. */
static const struct wake_key *sort_wkeys;
static const struct hlt_key *sort_hkeys;

static int cmp_u64(__u64 a, __u64 b)
{
	return a < b ? -1 : a > b;
}

int wake_key_cmp(const struct wake_key *x, const struct wake_key *y)
{
	if (x->tgid != y->tgid)
		return cmp_u64(x->tgid, y->tgid);
	if (x->proc_start != y->proc_start)
		return cmp_u64(x->proc_start, y->proc_start);
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	if (x->source != y->source)
		return cmp_u64(x->source, y->source);
	return cmp_u64(x->vector, y->vector);
}

int hlt_key_cmp(const struct hlt_key *x, const struct hlt_key *y)
{
	if (x->tgid != y->tgid)
		return cmp_u64(x->tgid, y->tgid);
	if (x->proc_start != y->proc_start)
		return cmp_u64(x->proc_start, y->proc_start);
	return x->vcpu < y->vcpu ? -1 : x->vcpu > y->vcpu;
}

static int wake_cmp(const void *a, const void *b)
{
	return wake_key_cmp(&sort_wkeys[*(const size_t *)a], &sort_wkeys[*(const size_t *)b]);
}

static int hlt_cmp(const void *a, const void *b)
{
	return hlt_key_cmp(&sort_hkeys[*(const size_t *)a], &sort_hkeys[*(const size_t *)b]);
}

/* Reorders keys and cells (each n of size ksz, csz) by the index idx. */
static void permute(void *keys, void *cells, size_t n, size_t ksz, size_t csz, const size_t *idx)
{
	char *k, *c;

	/* None (report's recording has no halted-exit cells: NULL arrays): nothing to move. */
	if (!n)
		return;
	k = malloc(n * ksz);
	c = malloc(n * csz);
	/* Out of memory: left unsorted, which loses nothing. */
	if (k && c) {
		for (size_t i = 0; i < n; i++) {
			memcpy(k + i * ksz, (char *)keys + idx[i] * ksz, ksz);
			memcpy(c + i * csz, (char *)cells + idx[i] * csz, csz);
		}
		memcpy(keys, k, n * ksz);
		memcpy(cells, c, n * csz);
	}
	free(k);
	free(c);
}

void wake_snapshot_sort(struct wake_snapshot *s)
{
	size_t n = s->nr_wake > s->nr_hlt ? s->nr_wake : s->nr_hlt;
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx));

	if (!idx)
		return;
	for (size_t i = 0; i < s->nr_wake; i++)
		idx[i] = i;
	sort_wkeys = s->wkeys;
	qsort(idx, s->nr_wake, sizeof(*idx), wake_cmp);
	permute(s->wkeys, s->wcells, s->nr_wake, sizeof(*s->wkeys), sizeof(*s->wcells), idx);
	for (size_t i = 0; i < s->nr_hlt; i++)
		idx[i] = i;
	sort_hkeys = s->hkeys;
	qsort(idx, s->nr_hlt, sizeof(*idx), hlt_cmp);
	permute(s->hkeys, s->hcells, s->nr_hlt, sizeof(*s->hkeys), sizeof(*s->hcells), idx);
	free(idx);
}

__u64 wake_hist_percentile(const __u64 *hist, __u64 max, double p)
{
	return hist_percentile(hist, 0, max, p);
}

__u64 wake_hist_at_most(const __u64 *hist, __u64 ns)
{
	__u64 n = 0;

	for (__u32 b = 0; b < NR_BUCKETS && hist_bucket_low(b) <= ns; b++)
		n += hist[b];
	return n;
}

double wake_pct(__u64 part, __u64 whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

void wake_row_of(const struct wake_cell *c, struct wake_row *out)
{
	out->count = c->count;
	out->avg_ns = c->count ? c->sum_ns / c->count : 0;
	out->p50_ns = wake_hist_percentile(c->hist, c->max_ns, 50);
	out->p99_ns = wake_hist_percentile(c->hist, c->max_ns, 99);
	for (int p = 0; p < NR_WAKE_PARTS; p++)
		out->part_pct[p] = wake_pct(c->parts[p], c->sum_ns);
}

void hlt_row_of(const struct hlt_cell *c, struct hlt_row *out)
{
	out->polled_pct = wake_pct(c->polled, c->halts);
	out->poll_slept_pct = wake_pct(c->poll_slept, c->halts);
	out->slept_pct = wake_pct(c->slept, c->halts);
	for (int p = 0; p < NR_HLT_PARTS; p++)
		out->part_pct[p] = wake_pct(c->parts[p], c->sum_ns);
}

size_t hlt_advice_of(const struct wake_snapshot *s, struct hlt_advice *out)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_hlt; i++) {
		const struct hlt_cell *c = &s->hcells[i];
		struct hlt_advice *a;

		/* One per VMM: a pid reused by another is another. */
		if (!n || out[n - 1].tgid != s->hkeys[i].tgid ||
		    s->hkeys[i - 1].proc_start != s->hkeys[i].proc_start) {
			a = &out[n++];
			memset(a, 0, sizeof(*a));
			a->tgid = s->hkeys[i].tgid;
		}
		a = &out[n - 1];
		a->halts += c->halts;
		a->poll_ns += c->parts[HLT_PART_POLL];
		for (__u32 b = 0; b < NR_BUCKETS; b++)
			a->hist[b] += c->hist[b];
	}
	return n;
}

static bool pid_in(__u32 tgid, const int *pids, int nr)
{
	for (int i = 0; i < nr; i++)
		if ((__u32)pids[i] == tgid)
			return true;
	return false;
}

/* n elements of size sz from src into a new array at *dst (NULL for none); 0 or -ENOMEM. */
static int dup_array(void **dst, const void *src, size_t n, size_t sz)
{
	*dst = NULL;
	if (!n)
		return 0;
	*dst = malloc(n * sz);
	if (!*dst)
		return -ENOMEM;
	memcpy(*dst, src, n * sz);
	return 0;
}

int wake_snapshot_copy(struct wake_snapshot *dst, const struct wake_snapshot *src)
{
	*dst = *src;
	if (dup_array((void **)&dst->wkeys, src->wkeys, src->nr_wake, sizeof(*src->wkeys)) ||
	    dup_array((void **)&dst->wcells, src->wcells, src->nr_wake, sizeof(*src->wcells)) ||
	    dup_array((void **)&dst->hkeys, src->hkeys, src->nr_hlt, sizeof(*src->hkeys)) ||
	    dup_array((void **)&dst->hcells, src->hcells, src->nr_hlt, sizeof(*src->hcells))) {
		wake_snapshot_free(dst);
		return -ENOMEM;
	}
	return 0;
}

void wake_snapshot_keep(struct wake_snapshot *s, const int *pids, int nr)
{
	size_t n = 0;

	if (!nr)
		return;
	for (size_t i = 0; i < s->nr_wake; i++)
		if (pid_in(s->wkeys[i].tgid, pids, nr)) {
			s->wkeys[n] = s->wkeys[i];
			s->wcells[n++] = s->wcells[i];
		}
	s->nr_wake = n;
	n = 0;
	for (size_t i = 0; i < s->nr_hlt; i++)
		if (pid_in(s->hkeys[i].tgid, pids, nr)) {
			s->hkeys[n] = s->hkeys[i];
			s->hcells[n++] = s->hcells[i];
		}
	s->nr_hlt = n;
}
