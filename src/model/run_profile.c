// SPDX-License-Identifier: GPL-2.0
/* One run, per guest name, reason, key and vCPU, for diff and explain (run_profile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array_grow.h"
#include "hist.h"
#include "run_profile.h"

void run_profile_init(struct run_profile *p, bool all)
{
	memset(p, 0, sizeof(*p));
	p->all = all;
}

void run_profile_free(struct run_profile *p)
{
	for (__u32 i = 0; i < p->nr_stacks; i++)
		free(p->stacks[i].folded);
	free(p->stacks);
	free(p->rows);
	free(p->guests);
	prof_index_free(&p->index);
	memset(p, 0, sizeof(*p));
}

int run_profile_guest(struct run_profile *p, const char *name)
{
	struct prof_guest *g;

	if (p->all)
		name = PROF_ALL;
	for (__u32 i = 0; i < p->nr_guests; i++) {
		if (!strncmp(p->guests[i].name, name, PROF_NAME_MAX - 1))
			return (int)i;
	}
	if (array_reserve(p->guests, p->nr_guests, p->cap_guests, 8))
		return -ENOMEM;
	g = &p->guests[p->nr_guests];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	return (int)p->nr_guests++;
}

double run_profile_guest_s(const struct run_profile *p, __u32 guest)
{
	__u32 v = guest < p->nr_guests && p->guests[guest].vcpus ? p->guests[guest].vcpus : 1;

	return p->span_s * v;
}

const struct prof_row *run_profile_find(const struct run_profile *p, const struct prof_id *id)
{
	__u32 *at = prof_index_find((struct prof_index *)&p->index, id);

	return at ? &p->rows[*at] : NULL;
}

static struct prof_row *row_get(struct run_profile *p, const struct prof_id *id)
{
	bool added;
	__u32 *at = prof_index_get(&p->index, id, &added);
	struct prof_row *r;

	if (!at)
		return NULL;
	if (!added)
		return &p->rows[*at];
	if (array_reserve(p->rows, p->nr, p->cap, 64))
		return NULL;
	*at = p->nr;
	r = &p->rows[p->nr++];
	memset(r, 0, sizeof(*r));
	r->id = *id;
	r->min_ns = ~0ull;
	return r;
}

static int add_to(struct run_profile *p, const struct prof_id *id, const struct row *src)
{
	struct prof_row *r = row_get(p, id);

	if (!r)
		return -ENOMEM;
	r->count += src->count;
	r->completed += src->completed;
	r->total_ns += src->total_ns;
	r->oncpu_ns += src->oncpu_ns;
	r->blocked_ns += src->blocked_ns;
	r->runq_ns += src->runq_ns;
	if (src->completed && src->min_ns < r->min_ns)
		r->min_ns = src->min_ns;
	if (src->completed && src->max_ns > r->max_ns)
		r->max_ns = src->max_ns;
	for (__u32 b = 0; b < NR_BUCKETS; b++)
		r->hist[b] += src->hist[b];
	return 0;
}

/* vCPUs per guest: each (tgid, start, vCPU) of the source once, under its guest. */
struct vcpu_seen {
	__u32 tgid;
	__s32 vcpu;
	__u32 start_lo, start_hi;
};

DEFINE_HASHMAP(vcpu_set, struct vcpu_seen, __u8)

int run_profile_add_rows(struct run_profile *p, const struct row_table *rt, prof_name_fn *name,
			 void *ctx)
{
	struct vcpu_set seen = {};
	int err = 0;

	for (__u32 i = 0; !err && i < rt->nr; i++) {
		const struct row *r = &rt->rows[i];
		const struct row_key *k = &r->key;
		struct prof_id id = { .level = PROF_REASON, .vcpu = -1, .isa = k->isa,
				      .reason = k->reason };
		int g;

		/* Other kvm events (top --kvm-events) are not exits. */
		if (k->isa == TOP_ISA_KVM_EVENT)
			continue;
		g = run_profile_guest(p, name(ctx, k->tgid, k->start));
		if (g < 0) {
			err = g;
			break;
		}
		id.guest = (__u32)g;
		if (k->key.kind == KEY_RIP) {
			id.level = PROF_RIP;
			id.key = k->key;
			p->rips = true;
			err = add_to(p, &id, r);
			continue;
		}
		if (k->isa != VMEXIT_ISA_USER)
			p->kernel_exits = true;
		err = add_to(p, &id, r);
		if (!err && k->key.kind != KEY_NONE) {
			struct prof_id kid = id;

			kid.level = PROF_KEY;
			kid.key = k->key;
			p->keys = true;
			err = add_to(p, &kid, r);
		}
		if (!err && k->vcpu >= 0) {
			struct prof_id vid = id;
			struct vcpu_seen vs = { k->tgid, k->vcpu, (__u32)k->start,
						(__u32)(k->start >> 32) };
			bool added;

			vid.level = PROF_VCPU;
			vid.vcpu = k->vcpu;
			p->vcpus = true;
			err = add_to(p, &vid, r);
			if (!err && !vcpu_set_get(&seen, &vs, &added))
				err = -ENOMEM;
			if (!err && added)
				p->guests[g].vcpus++;
		}
		if (r->completed && !p->hist) {
			for (__u32 b = 0; b < NR_BUCKETS && !p->hist; b++)
				p->hist = r->hist[b] != 0;
		}
		if (r->oncpu_ns || r->blocked_ns || r->runq_ns)
			p->split = true;
	}
	vcpu_set_free(&seen);
	return err;
}

int run_profile_add_stack(struct run_profile *p, const char *guest, __u32 isa, __u32 reason,
			  char *const *frames, __u32 nr_frames, __u64 ns, __u64 count)
{
	struct prof_stack *s;
	size_t len = 1;
	char *f;
	int g = run_profile_guest(p, guest);

	if (g < 0)
		return g;
	for (__u32 i = 0; i < nr_frames; i++)
		len += strlen(frames[i]) + 1;
	/* The same stack of the same guest and reason adds up (--all sums guests). */
	f = malloc(len);
	if (!f)
		return -ENOMEM;
	*f = 0;
	for (__u32 i = nr_frames; i-- > 0;) {
		strcat(f, frames[i]);
		if (i)
			strcat(f, ";");
	}
	for (__u32 i = 0; i < p->nr_stacks; i++) {
		s = &p->stacks[i];
		if (s->guest == (__u32)g && s->isa == isa && s->reason == reason &&
		    !strcmp(s->folded, f)) {
			s->ns += ns;
			s->count += count;
			free(f);
			return 0;
		}
	}
	if (array_reserve(p->stacks, p->nr_stacks, p->cap_stacks, 16)) {
		free(f);
		return -ENOMEM;
	}
	p->stacks[p->nr_stacks++] = (struct prof_stack){ .guest = (__u32)g, .isa = isa,
		.reason = reason, .folded = f, .ns = ns, .count = count };
	return 0;
}

double prof_row_median(const struct prof_row *r)
{
	double total = 0, half, cum = 0;

	for (__u32 b = 0; b < NR_BUCKETS; b++)
		total += (double)r->hist[b];
	if (!total)
		return 0;
	half = total / 2;
	for (__u32 b = 0; b < NR_BUCKETS; b++) {
		double n = (double)r->hist[b], lo, hi;

		if (!n || cum + n < half) {
			cum += n;
			continue;
		}
		if (b >= NR_BUCKETS - 1)
			return (double)r->max_ns;
		lo = (double)hist_bucket_low(b);
		hi = b < HIST_EXACT ? lo + 1 : (double)hist_bucket_high(b);
		return lo + (hi - lo) * (half - cum) / n;
	}
	return (double)r->max_ns;
}

__u64 prof_row_percentile(const struct prof_row *r, double pct)
{
	struct row *t = calloc(1, sizeof(*t));
	__u64 v;

	if (!t)
		return 0;
	memcpy(t->hist, r->hist, sizeof(t->hist));
	t->min_ns = r->completed ? r->min_ns : 0;
	t->max_ns = r->max_ns;
	v = row_percentile(t, pct);
	free(t);
	return v;
}
