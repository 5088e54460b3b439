/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's binary statistics (Documentation/virt/kvm/api.rst, KVM_GET_STATS_FD, Linux 5.14+): a
 * file per VM and per vCPU holding a header, an id string, a table of descriptors and a block
 * of u64 data. The descriptors are read once, when the file is opened: the kernel fixes them
 * for the life of the VM. Nothing here knows a statistic by name; what each one is comes from
 * its flags (type, unit, base) and exponent.
 */
#ifndef VMEXIT_KVM_STATS_FD_H
#define VMEXIT_KVM_STATS_FD_H

#include <stdbool.h>
#include <linux/types.h>

/* The descriptor types of linux/kvm.h, as their values (KVM_STATS_TYPE_*). */
enum kvm_stat_type {
	KVM_STAT_CUMULATIVE,	/* a counter that only grows */
	KVM_STAT_INSTANT,	/* a value now (a gauge) */
	KVM_STAT_PEAK,		/* the highest value so far */
	KVM_STAT_LINEAR_HIST,	/* size buckets of bucket_size each, the last open-ended */
	KVM_STAT_LOG_HIST,	/* bucket 0: value 0; bucket i: [2^(i-1), 2^i) */
	KVM_STAT_NR_TYPES,
};

enum kvm_stat_unit {
	KVM_STAT_UNIT_NONE,
	KVM_STAT_UNIT_BYTES,
	KVM_STAT_UNIT_SECONDS,
	KVM_STAT_UNIT_CYCLES,
	KVM_STAT_UNIT_BOOLEAN,
	KVM_STAT_NR_UNITS,
};

#define KVM_STAT_NAME_MAX	64

struct kvm_stat_desc {
	char name[KVM_STAT_NAME_MAX];
	enum kvm_stat_type type;
	enum kvm_stat_unit unit;
	bool pow2;		/* the exponent is of 2, else of 10 */
	__s16 exponent;		/* value * base^exponent is in the unit (ns: seconds, -9) */
	__u16 size;		/* u64 items: 1, or the histogram's buckets */
	__u32 bucket_size;	/* linear histograms */
	__u32 index;		/* its first item in data[] */
};

struct kvm_stats_fd {
	int fd;
	char id[KVM_STAT_NAME_MAX];	/* "kvm-PID" (a VM), "kvm-PID/vcpu-N" (a vCPU) */
	struct kvm_stat_desc *descs;
	__u32 nr_descs;
	__u64 *data;			/* after kvm_stats_fd_read() */
	/* For readers that count from a point: the values there (a run's start, the previous
	 * sample). Zeroed by the open: a VM counts from its creation. */
	__u64 *base, *prev;
	__u32 nr_data;
	__u32 data_offset;
};

/*
 * Reads the header, id and descriptors of a stats fd (taken over: closed by _close). 0, or
 * -errno (-EPROTO: a layout this build does not understand; nothing is left open then).
 */
int kvm_stats_fd_open(struct kvm_stats_fd *s, int fd);
/* Reads every value afresh into s->data (one pread). 0 or -errno. */
int kvm_stats_fd_read(struct kvm_stats_fd *s);
/* The descriptor named name, or NULL. */
const struct kvm_stat_desc *kvm_stats_fd_find(const struct kvm_stats_fd *s, const char *name);
void kvm_stats_fd_close(struct kvm_stats_fd *s);

/* "cumulative", "instant", "peak", "linear_hist", "log_hist". */
const char *kvm_stat_type_name(enum kvm_stat_type t);
/* A value of d in d's unit (seconds, bytes...): raw * base^exponent. */
double kvm_stat_scale(const struct kvm_stat_desc *d, double raw);
/* The upper bound (inclusive, raw units) of bucket i of a histogram d; +inf for the last. */
double kvm_stat_bucket_le(const struct kvm_stat_desc *d, __u32 i);

#endif /* VMEXIT_KVM_STATS_FD_H */
