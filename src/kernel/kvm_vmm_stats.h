/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One VMM's KVM statistics: its VMs and vCPUs, found by their fds (/proc/PID/fd links
 * "anon_inode:kvm-vm" and "anon_inode:kvm-vcpu:N"), each fd copied here with pidfd_getfd()
 * and asked for its binary statistics (KVM_GET_STATS_FD). No BPF, nothing per exit: KVM keeps
 * these counters anyway.
 *
 * Privilege: pidfd_getfd() needs PTRACE_MODE_ATTACH_REALCREDS on the VMM, i.e. the same uid
 * (and Yama's ptrace_scope <= 0... 1 only for descendants) or CAP_SYS_PTRACE. Where that fails
 * and debugfs is mounted, kvm/<pid>-<fd>/ is read instead (root: debugfs is 0700): one file
 * per statistic, per VM only (the vCPUs' summed), no descriptors (the file mode says
 * cumulative 0644 from instant 0444; histograms are not there).
 *
 * A stats fd holds a reference on its VM: its counts stay readable after the VMM exits, until
 * kvm_vmm_stats_close(). So a VMM found once is counted whole, whatever its life afterwards.
 */
#ifndef VMEXIT_KVM_VMM_STATS_H
#define VMEXIT_KVM_VMM_STATS_H

#include <stdbool.h>
#include "kvm_stats_fd.h"

#define KVM_VMM_MAX_VCPUS	1024

struct kvm_vcpu_stats {
	int vcpu;			/* N of kvm-vcpu:N */
	struct kvm_stats_fd f;
};

struct kvm_vm_stats {
	int vm_fd;			/* the VMM's fd number (debugfs names the VM by it) */
	struct kvm_stats_fd f;		/* the VM's own statistics */
	struct kvm_vcpu_stats *vcpus;
	int nr_vcpus;
};

struct kvm_vmm_stats {
	int pid;
	unsigned long long start;	/* /proc/PID/stat starttime: a reused pid is another VMM */
	bool debugfs;			/* read from debugfs (per VM only) */
	struct kvm_vm_stats *vms;	/* a VMM may hold several */
	int nr_vms;
};

/*
 * Opens every VM and vCPU of pid that has stats. 0; -ENOENT: pid holds no KVM VM (yet);
 * -EPERM/-EACCES: neither pidfd_getfd() nor debugfs may be used (the message says which
 * capability); -errno otherwise. why (may be NULL) gets a one-line reason on failure.
 */
int kvm_vmm_stats_open(struct kvm_vmm_stats *v, int pid, char *why, size_t why_len);
/*
 * vCPUs (and VMs) created since the open: a VMM creates its vCPUs after its VM, and a poll may
 * see it in between. 0 or -errno (the process may have gone: then nothing changes).
 */
int kvm_vmm_stats_rescan(struct kvm_vmm_stats *v);
/* Reads every value afresh. 0 or -errno. */
int kvm_vmm_stats_read(struct kvm_vmm_stats *v);
void kvm_vmm_stats_close(struct kvm_vmm_stats *v);

/* The pids with a kvm-vm fd now, at most max (a scan of /proc). */
int kvm_vmm_pids(int *pids, int max);
/* /proc/PID/stat starttime (clock ticks since boot); 0 when gone. */
unsigned long long kvm_vmm_proc_start(int pid);

#endif /* VMEXIT_KVM_VMM_STATS_H */
