/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host's TSC read against CLOCK_MONOTONIC, so that TSC values (a guest's, shifted back by
 * KVM's offset) can be placed on the clock of vmexit's events. Two pairs, one at each end of
 * a recording, give the TSC's rate to well under a part per million over a second; the kernel
 * exports its own calibration (tsc_khz) only on some kernels, as cpu0's tsc_freq_khz.
 */
#ifndef VMEXIT_TSC_CLOCK_H
#define VMEXIT_TSC_CLOCK_H

#include <linux/types.h>

struct tsc_pair {
	__u64 tsc;		/* host TSC */
	__u64 mono_ns;		/* CLOCK_MONOTONIC at the same moment (0: no pair) */
};

/*
 * Reads a pair: the TSC on either side of clock_gettime(), the narrowest of a few tries, its
 * middle taken. -EOPNOTSUPP where there is no TSC to read (arm64: its counter, CNTVCT, is
 * shifted for guests by CNTVOFF, which no tracepoint reports).
 */
int tsc_pair_now(struct tsc_pair *p);

/* The kernel's TSC frequency from sysfs, in kHz; 0 when this kernel does not export it. */
__u32 tsc_sysfs_khz(void);

#endif /* VMEXIT_TSC_CLOCK_H */
