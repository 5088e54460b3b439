// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cell_seen.h"

void cell_seen_drop(struct cell_seen *p)
{
	free(p->hist);
	p->hist = NULL;
	p->lo = p->n = 0;
}

void cell_seen_reset(struct cell_seen *p, const struct cell_key *k)
{
	free(p->hist);
	memset(p, 0, sizeof(*p));
	p->key = *k;
}

int cell_seen_fit(struct cell_seen *p, const struct cell *now)
{
	__u32 lo = NR_BUCKETS, hi = 0, nlo, nhi;
	__u32 *h;

	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		if (now->hist[b]) {
			lo = b < lo ? b : lo;
			hi = b + 1;
		}
	}
	if (lo >= hi)
		return 0;
	if (p->n && lo >= p->lo && hi <= (__u32)p->lo + p->n)
		return 0;
	nlo = p->n && p->lo < lo ? p->lo : lo;
	nhi = p->n && (__u32)p->lo + p->n > hi ? (__u32)p->lo + p->n : hi;
	h = calloc(nhi - nlo, sizeof(*h));
	if (!h)
		return -ENOMEM;
	if (p->n)
		memcpy(h + (p->lo - nlo), p->hist, p->n * sizeof(*h));
	free(p->hist);
	p->hist = h;
	p->lo = nlo;
	p->n = nhi - nlo;
	return 0;
}

void cell_seen_store(struct cell_seen *p, const struct cell *now)
{
	p->key = now->key;
	p->started = now->started;
	p->count = now->count;
	p->total_ns = now->total_ns;
	p->oncpu_ns = now->oncpu_ns;
	p->blocked_ns = now->blocked_ns;
	p->runq_ns = now->runq_ns;
	p->stuck_done = now->stuck_done;
	p->inflight_ts = now->inflight_ts;
	if (p->n)
		memcpy(p->hist, now->hist + p->lo, p->n * sizeof(*p->hist));
}
