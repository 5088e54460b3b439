// SPDX-License-Identifier: GPL-2.0
/* The tracks of a Perfetto trace, shared by its two writers; trace_tracks.h says which. */
#include <stdio.h>
#include <string.h>

#include "reasons.h"
#include "trace_tracks.h"

void trace_tracks_init(struct trace_tracks *tt, __u32 first_id, trace_rate_fn draw,
		       trace_reason_rate_fn draw_reason, void *ctx)
{
	memset(tt, 0, sizeof(*tt));
	tt->next_id = first_id;
	tt->draw = draw;
	tt->draw_reason = draw_reason;
	tt->ctx = ctx;
}

/* The entry for (tgid, kind, id), created if create is set; NULL if absent or on ENOMEM. */
static struct trace_track *get(struct trace_tracks *tt, __u32 tgid, __u8 kind, __u32 id,
			       bool create)
{
	struct trace_track_key k = { .tgid = tgid, .id = id, .kind = kind };
	struct trace_track *t;
	bool added;

	if (!create)
		return trace_track_map_find(&tt->map, &k);
	t = trace_track_map_get(&tt->map, &k, &added);
	if (t && added) {
		t->tgid = tgid;
		t->kind = kind;
		t->id = id;
	}
	return t;
}

struct trace_track *trace_tracks_of_event(struct trace_tracks *tt, const struct vmexit_event *ev)
{
	__s32 vcpu = ev->vcpu;
	struct trace_track *th;

	if (vcpu >= 0) {
		/* Remember the thread's vCPU for its later vcpu -1 user exits. */
		th = get(tt, ev->tgid, TT_THREAD, ev->tid, true);
		if (th) {
			th->vcpu_known = true;
			th->vcpu = vcpu;
		}
	} else {
		th = get(tt, ev->tgid, TT_THREAD, ev->tid, false);
		if (th && th->vcpu_known)
			vcpu = th->vcpu;
	}
	if (vcpu >= 0)
		return get(tt, ev->tgid, TT_VCPU, vcpu, true);
	return get(tt, ev->tgid, TT_THREAD, ev->tid, true);
}

struct trace_track *trace_tracks_vm(struct trace_tracks *tt, __u32 tgid)
{
	return get(tt, tgid, TT_VM, 0, true);
}

/* Events in one window, per second. */
static __u64 per_s(__u64 n)
{
	return n * (1000000000ULL / TT_RATE_WINDOW_NS);
}

/* Draws every VM's rates for the window that ends, then moves to window `next`. */
static void rates_flush(struct trace_tracks *tt, __u64 next)
{
	struct trace_track_map_slot *s;
	struct trace_rate_map_slot *rs;

	hashmap_for_each(s, &tt->map) {
		struct trace_track *t = &s->val;

		if (t->kind != TT_VM || (!t->win_kvm && !t->win_vmm && !t->win_active))
			continue;
		tt->draw(tt->ctx, t, tt->win * TT_RATE_WINDOW_NS, per_s(t->win_kvm),
			 per_s(t->win_vmm));
		t->win_active = t->win_kvm || t->win_vmm;
		t->win_kvm = t->win_vmm = 0;
	}
	hashmap_for_each(rs, &tt->rates) {
		struct trace_rate *r = &rs->val;

		if (!r->win && !r->win_active)
			continue;
		tt->draw_reason(tt->ctx, r, tt->win * TT_RATE_WINDOW_NS, per_s(r->win));
		r->win_active = r->win;
		r->win = 0;
	}
	tt->win = next;
}

void trace_tracks_count(struct trace_tracks *tt, const struct vmexit_event *ev, bool user)
{
	struct trace_rate_key k = { .tgid = ev->tgid, .isa = ev->isa, .reason = ev->reason,
				    .user = user };
	__u64 win = ev->ts_ns / TT_RATE_WINDOW_NS;
	struct trace_track *vm;
	struct trace_rate *r;
	bool added;

	if (!tt->win_started) {
		tt->win = win;
		tt->win_started = true;
	}
	/* Records come in completion order, slightly out of start order: late ones count in
	 * the current window rather than reopening a drawn one. After a quiet gap the rates
	 * drop to 0 where it begins, not where the next exit comes. */
	if (win > tt->win)
		rates_flush(tt, tt->win + 1);
	if (win > tt->win)
		rates_flush(tt, win);
	vm = trace_tracks_vm(tt, ev->tgid);
	if (!vm)
		return;
	if (user)
		vm->win_vmm++;
	else
		vm->win_kvm++;
	r = trace_rate_map_get(&tt->rates, &k, &added);
	if (!r)
		return;
	if (added) {
		r->k = k;
		r->seq = tt->nr_rates++;
	}
	r->win++;
}

void trace_rate_name(const struct trace_rate *r, char *buf, size_t len)
{
	char rb[REASON_STR_MAX];

	snprintf(buf, len, "%s exits%s/s", reason_str(r->k.isa, r->k.reason, rb, sizeof(rb)),
		 r->k.user ? " to VMM" : "");
}

__u32 trace_track_id(struct trace_tracks *tt, struct trace_track *t, int which, bool *added)
{
	*added = !t->tid[which];
	if (*added)
		t->tid[which] = tt->next_id++;
	return t->tid[which];
}

void trace_track_name(const struct trace_track *t, int which, char *buf, size_t len)
{
	snprintf(buf, len, "%s %u%s", t->kind == TT_VCPU ? "vCPU" : "thread", t->id,
		 which == TT_VMM ? " (VMM)" : "");
}

long long trace_track_sort(const struct trace_track *t, int which)
{
	return (t->kind == TT_VCPU ? 0 : 1ll << 32) + 2ll * t->id + which;
}

void trace_tracks_finish(struct trace_tracks *tt)
{
	if (!tt->win_started)
		return;
	rates_flush(tt, tt->win + 1);
	rates_flush(tt, tt->win + 1);	/* and the drop to 0 after the last window */
	tt->win_started = false;
}

void trace_tracks_free(struct trace_tracks *tt)
{
	trace_track_map_free(&tt->map);
	trace_rate_map_free(&tt->rates);
}
