// SPDX-License-Identifier: GPL-2.0
/* Guest TSC to host CLOCK_MONOTONIC: guest_clock.h has the arithmetic and why. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "array_grow.h"
#include "guest_clock.h"

/* Pairs closer than this give a rate too coarse to place anything (a 1 us error in 10 ms is
 * 100 ppm): ask for --tsc-mhz instead. */
#define RATE_MIN_SPAN_NS	10000000ull
/* How far a pair's middle may be from the moment clock_gettime read: half the narrowest of
 * 8 reads, which takes 20-60 ns where no interrupt hits all 8 (tsc_clock.c). */
#define PAIR_ERR_NS		50.0
/* --tsc-mhz as given: taken to be exact to a part per million. */
#define GIVEN_RATE_ERR		1e-6

int guest_clock_add_offset(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 ts_ns,
			   __u64 offset)
{
	if (array_reserve(gc->offs, gc->nr_offs, gc->cap_offs, 16))
		return -ENOMEM;
	gc->offs[gc->nr_offs++] = (struct guest_tsc_offset){ .tgid = tgid, .vcpu = vcpu,
							      .ts_ns = ts_ns, .offset = offset };
	return 0;
}

int guest_clock_add_applied(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 read_ns,
			    __u64 write_ns, __u64 offset)
{
	if (array_reserve(gc->applied, gc->nr_applied, gc->cap_applied, 16))
		return -ENOMEM;
	gc->applied[gc->nr_applied++] = (struct guest_tsc_applied){
		.tgid = tgid, .vcpu = vcpu, .read_ns = read_ns, .write_ns = write_ns,
		.offset = offset };
	return 0;
}

/* The read that tells what KVM made of write o: the one made for it, else the first after it
 * (a write between attaching and the start's read); NULL when none was read. */
static struct guest_tsc_applied *applied_for(struct guest_clock *gc,
					     const struct guest_tsc_offset *o)
{
	struct guest_tsc_applied *after = NULL;

	for (size_t i = 0; i < gc->nr_applied; i++) {
		struct guest_tsc_applied *a = &gc->applied[i];

		if (a->tgid != o->tgid || a->vcpu != o->vcpu || a->read_ns < o->ts_ns)
			continue;
		if (a->write_ns == o->ts_ns)
			return a;
		if (!a->write_ns && !after)
			after = a;
	}
	return after;
}

static bool rewritten_before(const struct guest_clock *gc, size_t i, __u64 read_ns)
{
	const struct guest_tsc_offset *o = &gc->offs[i];

	for (size_t j = 0; j < gc->nr_offs; j++) {
		const struct guest_tsc_offset *w = &gc->offs[j];

		if (j != i && w->tgid == o->tgid && w->vcpu == o->vcpu && w->ts_ns >= o->ts_ns &&
		    w->ts_ns <= read_ns && (w->ts_ns > o->ts_ns || j > i))
			return true;
	}
	return false;
}

static int by_vcpu_time(const void *a, const void *b)
{
	const struct guest_tsc_offset *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->vcpu != y->vcpu)
		return x->vcpu < y->vcpu ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

int guest_clock_resolve(struct guest_clock *gc)
{
	struct guest_tsc_offset *o;

	if (!gc->nr_applied)
		return 0;	/* traced offsets only (a recording before 1.7, no debugfs) */
	for (size_t i = 0; i < gc->nr_offs; i++) {
		struct guest_tsc_applied *a;

		o = &gc->offs[i];
		a = applied_for(gc, o);
		if (!a)
			continue;	/* gone before it could be read: as traced */
		a->used = true;
		/* Another write of the vCPU came before the read, which may show that one: it
		 * says nothing of this write (the later one has its own read). */
		if (rewritten_before(gc, i, a->read_ns) || a->offset == o->offset)
			continue;
		if (array_reserve(gc->mis, gc->nr_mis, gc->cap_mis, 8))
			return -ENOMEM;
		gc->mis[gc->nr_mis++] = (struct guest_tsc_mismatch){
			.tgid = o->tgid, .vcpu = o->vcpu, .ts_ns = o->ts_ns,
			.traced = o->offset, .applied = a->offset };
		o->offset = a->offset;
	}
	/* Reads no traced write explains: a vCPU running before recording, or a write not
	 * traced; in effect from before the recording, or from that write. */
	for (size_t i = 0; i < gc->nr_applied; i++) {
		const struct guest_tsc_applied *a = &gc->applied[i];

		if (a->used)
			continue;
		if (guest_clock_add_offset(gc, a->tgid, a->vcpu, a->write_ns, a->offset))
			return -ENOMEM;
	}
	/* Stable enough: equal times of one vCPU are one write and its read, of equal value. */
	qsort(gc->offs, gc->nr_offs, sizeof(*gc->offs), by_vcpu_time);
	return 0;
}

int guest_clock_add_scale(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 ratio,
			  __u32 frac_bits)
{
	if (!ratio || frac_bits >= 64)
		return 0;	/* not a ratio KVM would run with: taken as 1 */
	if (array_reserve(gc->scales, gc->nr_scales, gc->cap_scales, 8))
		return -ENOMEM;
	gc->scales[gc->nr_scales++] = (struct guest_tsc_scale){ .tgid = tgid, .vcpu = vcpu,
								.ratio = ratio,
								.frac_bits = frac_bits };
	return 0;
}

int guest_clock_set_rate(struct guest_clock *gc, double tsc_mhz, __u32 tsc_khz, char *err,
			 size_t errlen)
{
	if (!gc->start.mono_ns) {
		snprintf(err, errlen, "has no host TSC clock (recorded before vmexit 1.5's format, "
			 "imported from another tool, or on a host without a TSC): record again "
			 "with this vmexit");
		return -EINVAL;
	}
	if (tsc_mhz > 0) {
		gc->tsc_hz = tsc_mhz * 1e6;
		gc->rate_err = GIVEN_RATE_ERR;
	} else if (tsc_khz) {
		gc->tsc_hz = tsc_khz * 1e3;
		gc->rate_err = 0.5 / tsc_khz;	/* rounded to the kHz */
	} else if (gc->end.mono_ns > gc->start.mono_ns + RATE_MIN_SPAN_NS &&
		   gc->end.tsc > gc->start.tsc) {
		gc->tsc_hz = (double)(gc->end.tsc - gc->start.tsc) * 1e9 /
			     (double)(gc->end.mono_ns - gc->start.mono_ns);
		gc->rate_err = 2 * PAIR_ERR_NS / (double)(gc->end.mono_ns - gc->start.mono_ns);
	}
	if (gc->tsc_hz > 0)
		return 0;
	snprintf(err, errlen, "has no TSC rate (recording too short or cut before its end): "
		 "give --tsc-mhz");
	return -EINVAL;
}

double guest_clock_error_ns(const struct guest_clock *gc, __u64 host_ns)
{
	double from = (double)host_ns - (double)gc->start.mono_ns;

	return PAIR_ERR_NS + (from < 0 ? -from : from) * gc->rate_err;
}

__s32 guest_clock_vcpu(const struct guest_clock *gc, __u32 tgid, __s32 vcpu)
{
	__s32 best = -1;

	for (size_t i = 0; i < gc->nr_offs; i++) {
		const struct guest_tsc_offset *o = &gc->offs[i];

		if (o->tgid != tgid || o->vcpu < 0)
			continue;
		if (vcpu >= 0 && o->vcpu == vcpu)
			return vcpu;
		if (best < 0 || o->vcpu < best)
			best = o->vcpu;
	}
	return vcpu >= 0 ? -1 : best;
}

static const struct guest_tsc_scale *scale_of(const struct guest_clock *gc, __u32 tgid,
					      __s32 vcpu)
{
	for (size_t i = 0; i < gc->nr_scales; i++) {
		if (gc->scales[i].tgid == tgid && gc->scales[i].vcpu == vcpu)
			return &gc->scales[i];
	}
	return NULL;
}

double guest_clock_guest_hz(const struct guest_clock *gc, __u32 tgid, __s32 vcpu)
{
	const struct guest_tsc_scale *s = scale_of(gc, tgid, vcpu);

	return s ? gc->tsc_hz * (double)s->ratio / (double)(1ull << s->frac_bits) : gc->tsc_hz;
}

/*
 * The host ns of a guest TSC under one offset: -EOVERFLOW at or past 2^63 ns, -ERANGE at or
 * below -2^63 (a hostile file, or a --tsc-mhz far below the real rate: at 1 MHz a TSC of 10^16
 * is 10^19 ns), where a plain cast would give any value at all.
 */
static int host_ns_with(const struct guest_clock *gc, const struct guest_tsc_scale *s,
			__u64 guest_tsc, __u64 offset, __s64 *ns)
{
	/* guest - offset wraps as KVM's sum does: the host TSC, scaled. */
	unsigned __int128 host = guest_tsc - offset;
	long double v;
	__s64 ticks;

	if (s)
		host = (host << s->frac_bits) / s->ratio;
	ticks = (__s64)((__u64)host - gc->start.tsc);
	v = (long double)gc->start.mono_ns + (long double)ticks * 1e9L / gc->tsc_hz;
	/* 2^63 is exact in a long double; anything at or past it does not fit. */
	if (!(v < 0x1p63L))
		return -EOVERFLOW;
	if (!(v > -0x1p63L))
		return -ERANGE;
	*ns = (__s64)v;
	return 0;
}

int guest_clock_to_host(const struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 guest_tsc,
			__u64 *host_ns)
{
	const struct guest_tsc_scale *s = scale_of(gc, tgid, vcpu);
	bool any = false;
	__s64 ns = 0;
	int ret = 0;

	/* The latest write that the value, placed by it, comes after; else the first. */
	for (size_t i = gc->nr_offs; i-- > 0;) {
		const struct guest_tsc_offset *o = &gc->offs[i];

		if (o->tgid != tgid || o->vcpu != vcpu)
			continue;
		ret = host_ns_with(gc, s, guest_tsc, o->offset, &ns);
		any = true;
		if (ret == -EOVERFLOW || (!ret && ns >= (__s64)o->ts_ns))
			break;
	}
	if (!any)
		return -ENOENT;
	if (ret)
		return ret;
	if (ns < 0)
		return -ERANGE;
	*host_ns = ns;
	return 0;
}

void guest_clock_free(struct guest_clock *gc)
{
	free(gc->offs);
	free(gc->scales);
	free(gc->applied);
	free(gc->mis);
	gc->offs = NULL;
	gc->scales = NULL;
	gc->applied = NULL;
	gc->mis = NULL;
	gc->nr_offs = gc->cap_offs = gc->nr_scales = gc->cap_scales = 0;
	gc->nr_applied = gc->cap_applied = gc->nr_mis = gc->cap_mis = 0;
}
