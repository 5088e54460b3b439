/* SPDX-License-Identifier: GPL-2.0 */
/* stat --source kvm: KVM's own statistics per guest (and vCPU), no BPF program loaded. */
#ifndef VMEXIT_STAT_KVM_H
#define VMEXIT_STAT_KVM_H

#include <stdbool.h>
#include "cli_filters.h"

struct stat_kvm_opts {
	const struct cli_filters *filters;	/* -p, -g, -c */
	bool by_vcpu;
	bool json;
	double interval;			/* 0: the summary at the end only */
	long count;				/* 0: until Ctrl-C (or every -p gone) */
};

/* Runs until the count, Ctrl-C, or every -p process gone; the exit status. */
int stat_kvm_run(const struct stat_kvm_opts *o);

#endif /* VMEXIT_STAT_KVM_H */
