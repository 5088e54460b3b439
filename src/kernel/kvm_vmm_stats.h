/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One VMM's KVM statistics, found from its fds (/proc/PID/fd). No BPF, nothing per exit: KVM
 * keeps these counters anyway. Two ways in:
 *  - binary stats fds ("anon_inode:kvm-vm-stats", "anon_inode:kvm-vcpu-stats") the VMM holds,
 *    copied with pidfd_getfd(): typed descriptors, per vCPU, histograms. Only the VMM can make
 *    them: KVM answers -EIO to a KVM_GET_STATS_FD (any ioctl) from outside the VM's mm, so
 *    a VM fd copied here is no use. pidfd_getfd() needs PTRACE_MODE_ATTACH_REALCREDS on the
 *    VMM: its uid (with Yama's ptrace_scope 0) or CAP_SYS_PTRACE.
 *  - debugfs kvm/<pid>-<fd>/ for a VMM that holds a VM fd ("anon_inode:kvm-vm") and no stats
 *    fds (most): one file per statistic, the VM's and its vCPUs' summed, no vCPU rows, no
 *    histograms; root (debugfs is 0700) and debugfs mounted. Kernel lockdown (integrity)
 *    refuses every writable debugfs file (EPERM), the counters among them: said, not read
 *    as zeros.
 * A stats fd, and a held debugfs file, holds a reference on its VM: its counts stay readable
 * after the VMM exits, until kvm_vmm_stats_close(). A VMM found once is counted whole.
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
	struct kvm_stats_fd f;		/* the VM's own statistics (debugfs: its vCPUs' too) */
	int *dfds;			/* debugfs: the file of each of f's statistics, held */
	int dir_fd;			/* debugfs: the VM's directory (0: none) */
	struct kvm_vcpu_stats *vcpus;
	int nr_vcpus;
};

struct kvm_vmm_stats {
	int pid;
	unsigned long long start;	/* /proc/PID/stat starttime: a reused pid is another VMM */
	bool debugfs;			/* read from debugfs (per VM only) */
	bool debugfs_refused;		/* debugfs listed the files and refused to open them */
	bool fds_refused;		/* /proc/PID/fd could not be listed (another user's: its
					 * mode is 0500, no ptrace check) */
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
