/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Guest TSC to the host's CLOCK_MONOTONIC (report --guest-trace). KVM runs a vCPU with
 *	guest TSC = host TSC * ratio / 2^frac_bits + offset
 * (ratio 1 unless the host scales the guest's TSC; offset as kvm_write_tsc_offset last wrote
 * it for that vCPU), and a recording's TSC pairs tie the host TSC to its clock:
 *	host ns = mono_ns + (host TSC - tsc) / rate.
 * An offset rewritten mid-recording (a guest writing its TSC, a migration) is applied from
 * its time on: a guest TSC is placed with the latest offset that puts it after its write.
 * Offsets come from two sources: kvm_write_tsc_offset as traced (only when written: at vCPU
 * creation, a TSC write, a migration), and KVM's debugfs as applied, read by record at its
 * start (guests already running) and after each traced write. Where both speak of the same
 * write the applied one is believed: a KVM may trace an offset it does not apply (kvm_pvm).
 */
#ifndef VMEXIT_GUEST_CLOCK_H
#define VMEXIT_GUEST_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "tsc_clock.h"

struct guest_tsc_offset {
	__u32 tgid;
	__s32 vcpu;
	__u64 ts_ns;		/* when KVM wrote it */
	__u64 offset;		/* guest - host, two's complement */
};

/* An offset read from KVM's debugfs at read_ns, after the traced write of write_ns (0: none). */
struct guest_tsc_applied {
	__u32 tgid;
	__s32 vcpu;
	__u64 read_ns, write_ns;
	__u64 offset;
	bool used;		/* guest_clock_resolve: it replaced a traced write */
};

/* A traced write that KVM did not apply as traced (guest_clock_resolve). */
struct guest_tsc_mismatch {
	__u32 tgid;
	__s32 vcpu;
	__u64 ts_ns;
	__u64 traced, applied;
};

struct guest_tsc_scale {
	__u32 tgid;
	__s32 vcpu;
	__u64 ratio;
	__u32 frac_bits;
};

struct guest_clock {
	struct tsc_pair start, end;	/* the recording's (end.mono_ns 0: none) */
	double tsc_hz;			/* host TSC ticks per second, once set */
	double rate_err;		/* its relative error bound, once set */
	struct guest_tsc_offset *offs;	/* in the order written: time order per vCPU */
	size_t nr_offs, cap_offs;
	struct guest_tsc_applied *applied;	/* in the order read */
	size_t nr_applied, cap_applied;
	struct guest_tsc_mismatch *mis;
	size_t nr_mis, cap_mis;
	struct guest_tsc_scale *scales;
	size_t nr_scales, cap_scales;
};

/* 0 or -ENOMEM. */
int guest_clock_add_offset(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 ts_ns,
			   __u64 offset);
int guest_clock_add_applied(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 read_ns,
			    __u64 write_ns, __u64 offset);
int guest_clock_add_scale(struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 ratio,
			  __u32 frac_bits);

/*
 * Once every offset is in: the offsets guest times are placed by (offs), each vCPU's in time
 * order: each traced write with the value read from debugfs after it where there is one (a
 * differing one noted in mis), and the value read at the start for a vCPU that was running
 * before (in effect from before the recording). 0 or -ENOMEM.
 */
int guest_clock_resolve(struct guest_clock *gc);

/*
 * The host TSC's rate: tsc_mhz if > 0 (--tsc-mhz), else tsc_khz (the kernel's, from the
 * recording), else measured between the start and end pairs. -EINVAL with err filled when
 * there is no start pair or nothing to take the rate from.
 */
int guest_clock_set_rate(struct guest_clock *gc, double tsc_mhz, __u32 tsc_khz, char *err,
			 size_t errlen);

/* How far off a guest TSC placed at host_ns may be: the start pair's reading error plus the
 * TSC rate's error over the time from it (the offset itself is exact). */
double guest_clock_error_ns(const struct guest_clock *gc, __u64 host_ns);

/* The vCPU a guest event names (vcpu < 0: none) as placed: vcpu, or the guest's lowest vCPU
 * with an offset; -1 when the guest has no offset at all. */
__s32 guest_clock_vcpu(const struct guest_clock *gc, __u32 tgid, __s32 vcpu);

/* The guest TSC rate of a vCPU, ticks per second (its scaling applied). */
double guest_clock_guest_hz(const struct guest_clock *gc, __u32 tgid, __s32 vcpu);

/*
 * Places a guest TSC value of tgid's vcpu (as guest_clock_vcpu() chose) on the host's
 * CLOCK_MONOTONIC. -ENOENT when that vCPU has no offset; -ERANGE when it lands before 0;
 * -EOVERFLOW when at or past 2^63 ns (a --tsc-mhz far too low, or a hostile file).
 */
int guest_clock_to_host(const struct guest_clock *gc, __u32 tgid, __s32 vcpu, __u64 guest_tsc,
			__u64 *host_ns);

void guest_clock_free(struct guest_clock *gc);

#endif /* VMEXIT_GUEST_CLOCK_H */
