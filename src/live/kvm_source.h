/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's own statistics as a source for stat and serve (--source kvm), and for stat's
 * cross-check of the BPF rows (--kvm-check): the VMMs of the -p pids, of the -g names, or all of
 * them, found by a scan of /proc (every tick: a VMM is found within a tick of creating its VM),
 * their VM and vCPU stats fds read when asked. A VMM found once is counted whole: the stats
 * fds keep its counters after it exits, and they count from the VM's creation (a VM already
 * running at the start counts from the start: its values then are the base).
 */
#ifndef VMEXIT_KVM_SOURCE_H
#define VMEXIT_KVM_SOURCE_H

#include <stdbool.h>
#include "kvm_vmm_stats.h"

#define KVM_SOURCE_MAX_PIDS	64
#define KVM_SOURCE_NAME_MAX	256

struct kvm_guest {
	struct kvm_vmm_stats v;
	char name[KVM_SOURCE_NAME_MAX];	/* its -name guest=, else its comm */
	bool ended;			/* the VMM has exited: its values are final */
	double ended_at;		/* kvm_source clock (seconds) */
	int nr_fds;			/* kvm_guest_fd()'s */
};

struct kvm_source {
	const int *pids;		/* -p: only these */
	int nr_pids;
	const char *const *names;	/* -g: only VMMs with these guest names */
	int nr_names;
	struct kvm_guest *guests;
	int nr, cap;
	bool started;			/* the first scan is done: VMs found later count from 0 */
	bool said_perm;			/* a permission failure said once */
	bool verbose;			/* say each guest found, and how it is read */
	/* Test-only VMEXIT_TEST_KVM_STATS_SKEW=NAME:N adds N to statistic NAME as read (a
	 * planted disagreement for the cross-check's test). */
	char skew_name[64];
	long long skew;
};

/* The selection; nothing is opened yet. */
void kvm_source_init(struct kvm_source *ks, const int *pids, int nr_pids,
		     const char *const *names, int nr_names);
/*
 * Finds new VMMs (and new vCPUs of known ones), notes those that have exited, reads every value
 * afresh. now: seconds on any steady clock. 0, or -ENOMEM; a VMM that cannot be opened is said
 * on stderr (once for a permission problem) and skipped.
 */
int kvm_source_update(struct kvm_source *ks, double now);
/* The previous values become the current ones (the start of a new interval). */
void kvm_source_mark(struct kvm_source *ks);
/* Forgets (closes) the guests that ended before now - keep_s. */
void kvm_source_forget(struct kvm_source *ks, double now, double keep_s);
void kvm_source_free(struct kvm_source *ks);
/* Every VMM it found refused it (said once on stderr): it read no guest's statistics. */
bool kvm_source_refused(const struct kvm_source *ks);

/*
 * The stats fds of g (VM, its vCPUs, the next VM...): fd i for i in [0, g->nr_fds); *vcpu
 * the vCPU index, -1 for a VM's own statistics. NULL past the end. Each fd's base holds its
 * values at the run's start (zero for a VM or vCPU made since), its prev those at the last
 * kvm_source_mark().
 */
struct kvm_stats_fd *kvm_guest_fd(struct kvm_guest *g, int i, int *vcpu);
/* Value item of statistic d in fd i of g: now, since the base, since the previous mark. */
__u64 kvm_guest_value(const struct kvm_guest *g, int i, const struct kvm_stat_desc *d, __u32 item);
__u64 kvm_guest_since_base(const struct kvm_guest *g, int i, const struct kvm_stat_desc *d,
			   __u32 item);
__u64 kvm_guest_since_mark(const struct kvm_guest *g, int i, const struct kvm_stat_desc *d,
			   __u32 item);
/* Sum over g's vCPU and VM fds of statistic name since the base (cumulative ones); *found
 * whether any fd has it. */
__u64 kvm_guest_total(struct kvm_guest *g, const char *name, bool *found);
/* The same of histogram name: its values counted since the base, over all its buckets. */
__u64 kvm_guest_hist_total(struct kvm_guest *g, const char *name, bool *found);

#endif /* VMEXIT_KVM_SOURCE_H */
