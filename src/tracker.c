// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tracker.h"
#include "hist.h"
#include "guest_names.h"

int tracker_init(struct tracker *t, const struct cell_source *src, enum group_by by,
		 __s32 vcpu_filter, bool resolve_names)
{
	memset(t, 0, sizeof(*t));
	t->src = *src;
	t->by = by;
	t->vcpu_filter = vcpu_filter;
	t->resolve_names = resolve_names;
	row_table_init(&t->cum);
	return 0;
}

void tracker_free(struct tracker *t)
{
	free(t->prev);
	free(t->vcpu);
	row_table_free(&t->cum);
	memset(t, 0, sizeof(*t));
}

static int tracker_reserve(struct tracker *t, __u32 n)
{
	struct cell *prev;
	__s32 *vcpu;
	__u32 cap;

	if (n <= t->cap)
		return 0;
	cap = t->cap ? t->cap : 64;
	while (cap < n)
		cap *= 2;
	prev = realloc(t->prev, (size_t)cap * sizeof(*prev));
	if (!prev)
		return -ENOMEM;
	t->prev = prev;
	vcpu = realloc(t->vcpu, (size_t)cap * sizeof(*vcpu));
	if (!vcpu)
		return -ENOMEM;
	t->vcpu = vcpu;
	t->cap = cap;
	return 0;
}

/* The vCPU of a cell whose exits did not say: another cell of the same thread, else the
 * thread's name (QEMU's "CPU 3/KVM") as the kernel saw it, else as /proc says now. */
__s32 cell_key_vcpu(const struct cell_key *k)
{
	char comm[sizeof(k->comm) + 1];

	if (k->vcpu >= 0)
		return k->vcpu;
	memcpy(comm, k->comm, sizeof(k->comm));
	comm[sizeof(k->comm)] = 0;
	return vcpu_from_thread_name(comm);
}

static __s32 resolve_vcpu(struct tracker *t, __u32 i)
{
	const struct cell *c = &t->src.cells[i];
	__s32 v;

	for (__u32 j = 0; j < t->seen; j++) {
		if (j != i && t->prev[j].key.tid == c->key.tid && t->vcpu[j] >= 0)
			return t->vcpu[j];
	}
	v = cell_key_vcpu(&t->prev[i].key);
	if (v >= 0 || !t->resolve_names)
		return v;
	return vcpu_for_thread(c->key.tgid, c->key.tid);
}

void tracker_discover(struct tracker *t)
{
	__u32 n = t->src.nr_cells(t->src.ctx);

	if (tracker_reserve(t, n))
		return;
	while (t->seen < n) {
		__u32 i = t->seen;
		const struct cell *c = &t->src.cells[i];

		if (!__atomic_load_n(&c->key.ready, __ATOMIC_ACQUIRE))
			break;		/* being filled in right now: next time */
		memset(&t->prev[i], 0, sizeof(t->prev[i]));
		t->prev[i].key = c->key;
		t->vcpu[i] = c->key.vcpu;
		t->seen++;
		if (t->vcpu[i] < 0)
			t->vcpu[i] = resolve_vcpu(t, i);
	}
}

static void delta_row(struct row *d, const struct cell *now, const struct cell *prev,
		      __u32 closed_epoch, bool split)
{
	__u64 lo = ~0ULL, hi = 0;

	d->count = now->started - prev->started;
	d->completed = now->count - prev->count;
	d->total_ns = now->total_ns - prev->total_ns;
	d->oncpu_ns = d->blocked_ns = d->runq_ns = 0;
	if (split) {
		d->oncpu_ns = now->oncpu_ns - prev->oncpu_ns;
		d->blocked_ns = now->blocked_ns - prev->blocked_ns;
		d->runq_ns = now->runq_ns - prev->runq_ns;
		/*
		 * The kernel adds an exit to the three parts and then to the total: a copy taken
		 * in between would break their sum for one interval. The parts are the total.
		 */
		d->total_ns = d->oncpu_ns + d->blocked_ns + d->runq_ns;
	}
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		d->hist[b] = (__u32)(now->hist[b] - prev->hist[b]);	/* modulo 2^32 */
		if (d->hist[b]) {
			if (lo == ~0ULL)
				lo = hist_bucket_low(b);
			hi = hist_bucket_high(b) - 1;
		}
	}
	if (!d->completed) {
		d->min_ns = ~0ULL;
		d->max_ns = 0;
	} else if (now->iv_epoch == closed_epoch) {
		d->min_ns = now->iv_min_ns;
		d->max_ns = now->iv_max_ns;
	} else {
		/* An exit completed while the epoch turned: fall back to the buckets' bounds,
		 * narrowed by the lifetime extremes. */
		d->min_ns = lo > now->min_ns ? lo : now->min_ns;
		d->max_ns = hi < now->max_ns ? hi : now->max_ns;
	}
}

static void row_key_for(const struct tracker *t, __u32 i, struct row_key *k)
{
	const struct cell_key *ck = &t->prev[i].key;

	k->tgid = t->by == BY_REASON ? 0 : ck->tgid;
	k->vcpu = t->by == BY_VCPU ? t->vcpu[i] : -1;
	k->isa = ck->isa;
	k->reason = ck->reason;
}

int tracker_sample(struct tracker *t, __u32 closed_epoch, struct row_table *out)
{
	struct row d;

	tracker_discover(t);
	/* Cells still unresolved get another chance once per interval, while threads live. */
	for (__u32 i = 0; i < t->seen; i++) {
		if (t->vcpu[i] < 0 && t->by == BY_VCPU)
			t->vcpu[i] = resolve_vcpu(t, i);
	}
	row_table_reset(out);
	for (__u32 i = 0; i < t->seen; i++) {
		struct cell now;
		struct row_key k;
		struct row *r, *c;

		memcpy(&now, &t->src.cells[i], sizeof(now));
		if (now.started == t->prev[i].started && now.count == t->prev[i].count)
			continue;
		if (t->vcpu_filter >= 0 && t->vcpu[i] != t->vcpu_filter) {
			t->prev[i] = now;
			continue;
		}
		delta_row(&d, &now, &t->prev[i], closed_epoch, t->split);
		t->prev[i] = now;
		row_key_for(t, i, &k);
		r = row_table_get(out, &k);
		c = row_table_get(&t->cum, &k);
		if (!r || !c)
			return -ENOMEM;
		row_add(r, &d);
		row_add(c, &d);
	}
	return 0;
}
