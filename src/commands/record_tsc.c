// SPDX-License-Identifier: GPL-2.0
/* The guests' applied TSC offsets into the recording (record_tsc.h). */
#include <stdio.h>
#include <time.h>

#include "kvm_tsc_state.h"
#include "record_tsc.h"

struct read_ctx {
	struct record_tsc *t;
	__u64 read_ns, write_ns;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static bool traced(const struct event_filter *f, __u32 tgid, __s32 vcpu)
{
	bool found = !f->nr_pids;

	for (int i = 0; i < f->nr_pids && !found; i++)
		found = (__u32)f->pids[i] == tgid;
	return found && (f->vcpu < 0 || f->vcpu == vcpu);
}

static int one(void *ctx, const struct kvm_tsc_state *st)
{
	struct read_ctx *c = ctx;

	if (!traced(c->t->f, st->tgid, st->vcpu))
		return 0;
	return rec_writer_add_tsc_applied(c->t->w, st->tgid, st->vcpu, c->read_ns, c->write_ns,
					  st->offset, st->ratio, st->frac_bits);
}

static int read_some(struct record_tsc *t, __u32 tgid, __s32 vcpu, __u64 write_ns)
{
	struct read_ctx c = { .t = t, .write_ns = write_ns };

	if (t->off)
		return 0;
	c.read_ns = mono_ns();
	return kvm_tsc_state_each(tgid, vcpu, one, &c);
}

int record_tsc_start(struct record_tsc *t, bool on)
{
	char err[256];

	t->off = !on;
	if (on && kvm_tsc_state_check(err, sizeof(err))) {
		fprintf(stderr, "vmexit: note: %s: the recording keeps no TSC offset of the guests "
			"already running, report --guest-trace cannot place their traces\n", err);
		t->off = true;
	}
	return read_some(t, 0, -1, 0);
}

int record_tsc_guest(struct record_tsc *t, __u32 tgid)
{
	return tgid ? read_some(t, tgid, -1, 0) : 0;
}

int record_tsc_write(struct record_tsc *t, const struct vmexit_event *ev)
{
	return ev->vcpu >= 0 ? read_some(t, ev->tgid, ev->vcpu, ev->ts_ns) : 0;
}
