/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmexit-guest --json: each vCPU's own KVM counters at the end of its run, read by the VMM from
 * the vCPU's binary statistics (KVM_GET_STATS_FD: the one --stats-fds holds, else one opened
 * for the read and closed), as a VMM that exports its statistics reads them. What KVM itself
 * counted, independently of vmexit: test_kvm_stats_host holds vmexit's reading against it, and
 * the workload's counts against it only where this KVM keeps the counter (kvm_pvm, the software
 * backend, leaves io_exits at 0). Included by vmexit-guest.c.
 */
#ifndef VMEXIT_GUEST_KVM_STATS_H
#define VMEXIT_GUEST_KVM_STATS_H

#include <linux/kvm.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The counters the tests compare, by KVM's names. */
static const char *const guest_kvm_stat_name[] = { "exits", "io_exits", "mmio_exits",
						   "halt_exits" };
#define NR_GUEST_KVM_STATS (sizeof(guest_kvm_stat_name) / sizeof(guest_kvm_stat_name[0]))

struct guest_kvm_stats {
	bool found[NR_GUEST_KVM_STATS];
	uint64_t value[NR_GUEST_KVM_STATS];
};

/* From stats fd fd: 0, or -1 (a kernel without binary stats, a short read). */
static int guest_kvm_stats_of(int fd, struct guest_kvm_stats *st)
{
	struct kvm_stats_header h;
	size_t dsz;
	char *d;

	memset(st, 0, sizeof(*st));
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || h.num_desc > 4096 ||
	    h.name_size > 4096)
		return -1;
	dsz = sizeof(struct kvm_stats_desc) + h.name_size;
	d = malloc(dsz * h.num_desc);
	if (!d || pread(fd, d, dsz * h.num_desc, h.desc_offset) != (ssize_t)(dsz * h.num_desc)) {
		free(d);
		return -1;
	}
	for (uint32_t i = 0; i < h.num_desc; i++) {
		const struct kvm_stats_desc *x = (const void *)(d + i * dsz);

		for (size_t k = 0; k < NR_GUEST_KVM_STATS; k++) {
			if (x->size != 1 || strncmp(x->name, guest_kvm_stat_name[k], h.name_size))
				continue;
			st->found[k] = pread(fd, &st->value[k], 8, h.data_offset + x->offset) == 8;
		}
	}
	free(d);
	return 0;
}

/* vCPU fd's counters; held: its stats fd already open (--stats-fds), else -1. */
static int guest_kvm_stats_read(int vcpu_fd, int held, struct guest_kvm_stats *st)
{
	int fd = held >= 0 ? held : ioctl(vcpu_fd, KVM_GET_STATS_FD, NULL);
	int err;

	if (fd < 0)
		return -1;
	err = guest_kvm_stats_of(fd, st);
	if (held < 0)
		close(fd);
	return err;
}

#endif /* VMEXIT_GUEST_KVM_STATS_H */
