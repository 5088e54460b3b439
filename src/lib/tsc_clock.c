// SPDX-License-Identifier: GPL-2.0
/* A host TSC / CLOCK_MONOTONIC pair and the kernel's TSC frequency (tsc_clock.h). */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "tsc_clock.h"

#define PAIR_TRIES	8

int tsc_pair_now(struct tsc_pair *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__u64 best = ~0ull;

	p->tsc = p->mono_ns = 0;
	/* An interrupt between the reads widens one try: the narrowest is the most exact. */
	for (int i = 0; i < PAIR_TRIES; i++) {
		struct timespec ts;
		__u64 a, b;

		a = __rdtsc();
		clock_gettime(CLOCK_MONOTONIC, &ts);
		b = __rdtsc();
		if (b < a || b - a >= best)
			continue;
		best = b - a;
		p->tsc = a + (b - a) / 2;
		p->mono_ns = (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	}
	return p->mono_ns ? 0 : -EAGAIN;
#else
	p->tsc = p->mono_ns = 0;
	return -EOPNOTSUPP;
#endif
}

__u32 tsc_sysfs_khz(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/tsc_freq_khz", "re");
	unsigned int khz = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%u", &khz) != 1)
		khz = 0;
	fclose(f);
	return khz;
}
