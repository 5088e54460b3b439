/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stat --kvm-check: KVM's own counters against vmexit's BPF rows over the same run. The KVM
 * side is read at the start (the base) and at the end; the BPF rows are those since the
 * start. Each counter with a BPF equivalent (kvm_stat_names.h) is compared per guest: within
 * 0.1 % they agree, else the line says by how much and what can make them differ.
 */
#ifndef VMEXIT_KVM_CROSS_CHECK_H
#define VMEXIT_KVM_CROSS_CHECK_H

#include <stdio.h>
#include "kvm_source.h"
#include "rows.h"

/* Parts per million two counts may differ by and still agree. */
#define KVM_CHECK_TOLERANCE_PPM	1000

/* Prints the comparison of every guest of ks (rows: since the start, by guest or finer);
 * returns how many comparisons disagree. */
int kvm_cross_check(struct kvm_source *ks, const struct row_table *rows, FILE *out);

#endif /* VMEXIT_KVM_CROSS_CHECK_H */
