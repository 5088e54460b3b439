/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Naming guests (VMM processes) and vCPUs (their threads) from what /proc shows: the VMM's
 * command line and the thread names VMMs give their vCPU threads.
 */
#ifndef VMEXIT_PROC_NAMES_H
#define VMEXIT_PROC_NAMES_H

#include <stddef.h>
#include <stdio.h>

/*
 * The guest name in a command line (args: NUL-separated argv as in /proc/PID/cmdline, len
 * bytes, last NUL optional). Understands QEMU's -name/--name (NAME, guest=NAME, ",," for a
 * literal comma, the last -name wins) and firecracker's --id. 0 with the name (truncated to
 * outlen - 1), or -ENOENT.
 */
int guest_name_from_cmdline(const char *args, size_t len, char *out, size_t outlen);

/* The argument at arg of a command line ending at end (its length in *alen) and where the
 * next one starts (end if none); the last NUL may be missing (a truncated read). */
const char *cmdline_next_arg(const char *arg, const char *end, size_t *alen);
/* /proc/PID/cmdline (NUL-separated argv) in a malloc'd buffer, *len bytes; NULL with errno. */
char *proc_cmdline(int pid, size_t *len);
/* The command-line name alone: 0, -ENOENT if the command line names no guest, -ESRCH if the
 * process is gone, or -errno. */
int guest_cmdline_name(int pid, char *out, size_t outlen);
/* The command-line name, else the process's comm. 0, or -errno (-ENOENT: process gone). */
int guest_name_for_pid(int pid, char *out, size_t outlen);

/*
 * The vCPU index in a vCPU thread's name: "CPU 3/KVM" (QEMU), "vcpu3" (cloud-hypervisor),
 * "crosvm_vcpu3", "fc_vcpu 3" (firecracker), "kvm-vcpu-3" (kvmtool). -1 if not one of them.
 */
int vcpu_from_thread_name(const char *comm);

/* vcpu_from_thread_name() of /proc/TGID/task/TID/comm; -1 if unknown or the thread is gone. */
int vcpu_for_thread(int tgid, int tid);

/*
 * PIDs of the VMM processes whose command-line guest name is exactly name. A process counts
 * as a VMM if its argv[0] is a known VMM binary or it holds /dev/kvm or a KVM VM open, so
 * that `find -name x` is not a guest. Returns how many were stored in pids (at most max), or
 * -errno if /proc cannot be read.
 */
int guests_find(const char *name, int *pids, int max);

/* 1: pid holds /dev/kvm or a KVM VM open (every KVM VMM does); 0: not; -1: its open files
 * are not ours to read. */
int holds_kvm(int pid);

/*
 * "  PID  NAME" for every VMM process, for "unknown guest" errors; "  (none found)" if none
 * and every process could be checked; if some could not be (not ours to read: another user's,
 * without root), a line on stderr says so. Returns how many, or -1 if /proc cannot be read.
 */
int guests_list_print(FILE *f);

#endif /* VMEXIT_PROC_NAMES_H */
