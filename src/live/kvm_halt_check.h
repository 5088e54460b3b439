/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stat --wake --kvm-check: the halts vmexit saw (kvm_vcpu_wakeup, bpf/wake.bpf.c) against KVM's
 * own halt statistics of the same guests over the same run (KVM_GET_STATS_FD; Linux 5.16 and
 * later have the histograms). What each side counts, from kvm_vcpu_halt() (virt/kvm/kvm_main.c):
 * one kvm_vcpu_wakeup per halt, waited when the vCPU thread slept; halt_wait_hist one value per
 * waited halt, halt_wait_ns its time from the poll's end to the wake-up's return;
 * halt_attempted_poll the halts that polled (the vCPU's own poll window was not 0: it grows and
 * shrinks with the halts it sees), halt_successful_poll those that then did not sleep. So the
 * waited halts are compared exactly, the wait time within 1 %, and the polls as bounds.
 */
#ifndef VMEXIT_KVM_HALT_CHECK_H
#define VMEXIT_KVM_HALT_CHECK_H

#include <stdio.h>
#include "kvm_source.h"
#include "wake_rows.h"

/* Time sums agree within this many parts per million. */
#define KVM_HALT_TIME_TOLERANCE_PPM	10000

/* Prints the comparison per guest of ks; returns how many disagree. */
int kvm_halt_check(struct kvm_source *ks, const struct wake_snapshot *w, FILE *out);

#endif /* VMEXIT_KVM_HALT_CHECK_H */
