// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "cell_seen.h"

void cell_seen_drop(struct cell_seen *p)
{
	bucket_run_free(&p->hist);
}

void cell_seen_reset(struct cell_seen *p, const struct cell_key *k)
{
	bucket_run_free(&p->hist);
	memset(p, 0, sizeof(*p));
	p->key = *k;
}

int cell_seen_fit(struct cell_seen *p, const struct cell *now)
{
	return bucket_run_fit(&p->hist, now->hist);
}

void cell_seen_store_counts(struct cell_seen *p, const struct cell *now)
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
}

void cell_seen_store(struct cell_seen *p, const struct cell *now)
{
	cell_seen_store_counts(p, now);
	bucket_run_store(&p->hist, now->hist);
}
