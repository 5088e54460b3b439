/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's own statistics (KVM_GET_STATS_FD) that count what vmexit's BPF rows count: the name
 * each is shown under (the BPF reason's, so that a dashboard reads the same either way) and the
 * BPF rows to hold it against in a cross-check, with what makes the two differ where they may.
 * Every other statistic keeps its KVM name; none is needed for KVM's statistics to be read.
 */
#ifndef VMEXIT_KVM_STAT_NAMES_H
#define VMEXIT_KVM_STAT_NAMES_H

#include <stdbool.h>
#include <linux/types.h>
#include "rows.h"

/* Which BPF rows a KVM counter is checked against. */
enum kvm_stat_match {
	KVM_MATCH_HW_ALL,	/* every exit kvm:kvm_exit saw (VMX, SVM, arm64 rows) */
	KVM_MATCH_HW,		/* kvm_exit rows of one reason (vmx/svm codes below) */
	KVM_MATCH_USER,		/* exits to the VMM of one KVM_EXIT_* reason */
};

struct kvm_stat_alias {
	const char *kvm;	/* KVM's descriptor name */
	const char *name;	/* shown as (the BPF reason name), or the KVM name */
	enum kvm_stat_match match;
	__u32 vmx, svm;		/* KVM_MATCH_HW: the hardware reasons */
	__u32 user;		/* KVM_MATCH_USER, or where kvm_exit does not fire: KVM_EXIT_* */
	bool user_too;		/* without kvm_exit rows, compare with the user reason */
	const char *why;	/* what can make the counts differ */
};

/* The aliases, in display order; *n of them. */
const struct kvm_stat_alias *kvm_stat_aliases(int *n);
/* The alias of a KVM statistic, or NULL. */
const struct kvm_stat_alias *kvm_stat_alias_of(const char *kvm);
/* The name a KVM statistic is shown under: its alias's, else its own. */
const char *kvm_stat_shown(const char *kvm);

/*
 * The BPF side's count for alias a in rows (since start, one guest when tgid != 0, else all),
 * and whether any kvm_exit row was there (*hw: the host's kvm_exit fires for that guest).
 */
__u64 kvm_stat_bpf_count(const struct kvm_stat_alias *a, const struct row_table *rows,
			 __u32 tgid, bool *hw);

#endif /* VMEXIT_KVM_STAT_NAMES_H */
