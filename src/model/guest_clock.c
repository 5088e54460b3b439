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

int guest_clock_add_offset(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 ts_ns,
			   __u64 offset)
{
	if (array_reserve(gc->offs, gc->nr_offs, gc->cap_offs, 16))
		return -ENOMEM;
	gc->offs[gc->nr_offs++] = (struct guest_tsc_offset){ .tgid = tgid, .vcpu = vcpu,
							      .ts_ns = ts_ns, .offset = offset };
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
	if (tsc_mhz > 0)
		gc->tsc_hz = tsc_mhz * 1e6;
	else if (tsc_khz)
		gc->tsc_hz = tsc_khz * 1e3;
	else if (gc->end.mono_ns > gc->start.mono_ns + RATE_MIN_SPAN_NS &&
		 gc->end.tsc > gc->start.tsc)
		gc->tsc_hz = (double)(gc->end.tsc - gc->start.tsc) * 1e9 /
			     (double)(gc->end.mono_ns - gc->start.mono_ns);
	if (gc->tsc_hz > 0)
		return 0;
	snprintf(err, errlen, "has no TSC rate (recording too short or cut before its end): "
		 "give --tsc-mhz");
	return -EINVAL;
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

/* The host ns of a guest TSC under one offset. */
static __s64 host_ns_with(const struct guest_clock *gc, const struct guest_tsc_scale *s,
			  __u64 guest_tsc, __u64 offset)
{
	/* guest - offset wraps as KVM's sum does: the host TSC, scaled. */
	unsigned __int128 host = guest_tsc - offset;
	__s64 ticks;

	if (s)
		host = (host << s->frac_bits) / s->ratio;
	ticks = (__s64)((__u64)host - gc->start.tsc);
	return (__s64)gc->start.mono_ns + (__s64)((long double)ticks * 1e9L / gc->tsc_hz);
}

int guest_clock_to_host(const struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 guest_tsc,
			__u64 *host_ns)
{
	const struct guest_tsc_scale *s = scale_of(gc, tgid, vcpu);
	bool any = false;
	__s64 ns = 0;

	/* The latest write that the value, placed by it, comes after; else the first. */
	for (size_t i = gc->nr_offs; i-- > 0;) {
		const struct guest_tsc_offset *o = &gc->offs[i];

		if (o->tgid != tgid || o->vcpu != vcpu)
			continue;
		ns = host_ns_with(gc, s, guest_tsc, o->offset);
		any = true;
		if (ns >= (__s64)o->ts_ns)
			break;
	}
	if (!any)
		return -ENOENT;
	if (ns < 0)
		return -ERANGE;
	*host_ns = ns;
	return 0;
}

void guest_clock_free(struct guest_clock *gc)
{
	free(gc->offs);
	free(gc->scales);
	gc->offs = NULL;
	gc->scales = NULL;
	gc->nr_offs = gc->cap_offs = gc->nr_scales = gc->cap_scales = 0;
}
