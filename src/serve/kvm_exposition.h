/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve --source kvm: the exposition of KVM's own statistics (kvm_source.h). Series:
 *   vmexit_exits_total{guest,pid[,vcpu],kind,isa="kvm",reason}  the counters that count what a
 *       BPF exit row counts (kvm_stat_names.h: IO, HLT, MMIO, INTR), as the BPF series are named
 *   vmexit_kvm_<stat>_total     every other cumulative statistic (KVM's name; a time in ns
 *                               becomes _seconds), exits among them (every VM exit)
 *   vmexit_kvm_<stat>           instant and peak ones (gauges)
 *   vmexit_kvm_<stat>_bucket    histograms (le in the statistic's unit, _count; KVM keeps no sum)
 *   vmexit_kvm_guests           guests whose statistics are read
 * Values are KVM's: from the VM's creation, per VM (vCPUs summed) or per vCPU (--by vcpu).
 */
#ifndef VMEXIT_KVM_EXPOSITION_H
#define VMEXIT_KVM_EXPOSITION_H

#include <stdbool.h>
#include "kvm_source.h"
#include "prom_exposition.h"

/* Appends the exposition of every guest of ks to out; 0 or -ENOMEM. */
int kvm_expo_render(struct kvm_source *ks, bool by_vcpu, enum expo_format fmt,
		    struct expo_buf *out);

#endif /* VMEXIT_KVM_EXPOSITION_H */
