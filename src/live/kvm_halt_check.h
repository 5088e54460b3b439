/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stat --wake --kvm-check: the halts vmexit saw (kvm_vcpu_wakeup, bpf/wake.bpf.c) against KVM's
 * own halt statistics of the same guests over the same run (stats fds or debugfs). What each
 * side counts, from kvm_vcpu_halt() (virt/kvm/kvm_main.c, Linux 5.16 and later): every halt
 * ends in one kvm_vcpu_wakeup(halt_ns = cur - start, waited); a halt that slept adds
 * cur - poll_end to halt_wait_ns and, if it polled first, poll_end - start to
 * halt_poll_fail_ns: the same clock reads, so halt_wait_ns + halt_poll_fail_ns equals the
 * slept halts' halt_ns to the nanosecond. A halt that polled and did not sleep adds
 * poll_end - start (at most its halt_ns) to halt_poll_success_ns. halt_wait_hist (stats fds
 * only) counts the halts that slept; halt_attempted_poll and halt_successful_poll the halts
 * that polled (the vCPU's own window was not 0: it grows and shrinks with its halts), and of
 * those the ones that did not sleep.
 */
#ifndef VMEXIT_KVM_HALT_CHECK_H
#define VMEXIT_KVM_HALT_CHECK_H

#include <stdio.h>
#include "kvm_source.h"
#include "wake_rows.h"

/* Prints the comparison per guest of ks; returns how many disagree. */
int kvm_halt_check(struct kvm_source *ks, const struct wake_snapshot *w, FILE *out);

#endif /* VMEXIT_KVM_HALT_CHECK_H */
