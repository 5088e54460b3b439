/* SPDX-License-Identifier: GPL-2.0 */
/* Which kernel hooks vmexit attaches, chosen by probing the running kernel at start-up. */
#ifndef VMEXIT_HOOKS_H
#define VMEXIT_HOOKS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

/* What ends a userspace exit: the start of the thread's next KVM_RUN, best first. */
enum run_hook {
	RUN_HOOK_NONE,		/* VMM time not measured */
	RUN_HOOK_FENTRY,	/* trampoline on kvm_arch_vcpu_ioctl_run */
	RUN_HOOK_FPU,		/* kvm:kvm_fpu load (x86) */
	RUN_HOOK_IOCTL,		/* syscalls:sys_enter_ioctl: every task on the host pays */
};

/* kvm_exit and kvm_entry: the classic tracepoints, or the raw ones (the fast path). */
enum exit_hook {
	EXIT_HOOK_CLASSIC,
	EXIT_HOOK_FAST,
};

/* The start-up check of the fast path: both read the same exits for a short window. */
struct hook_check {
	bool ran;
	double window_s;
	__u64 matched, mismatched, unpaired, unreadable, entries;
};

struct hooks {
	enum run_hook run;
	char run_note[160];	/* why the better hooks were not taken */
	enum exit_hook exit;
	__u32 exit_shape;	/* enum vmexit_exit_shape */
	char exit_note[200];	/* why not the fast path, or that it was checked */
	struct hook_check check;
};

struct vmexit_bpf;

/* Probes the KVM_RUN hooks and turns on the program of the best one in the opened skeleton. */
void hooks_choose_run(struct hooks *h, struct vmexit_bpf *skel);
/*
 * kvm_exit/kvm_entry: the fast path when the kernel's raw prototype is known and the check
 * window agrees (window_s, its per-reason counts printed when verbose_check), else the
 * classic tracepoints, always for a stream (it needs the record's fields). A disagreement is
 * reported on stderr.
 */
void hooks_choose_exit(struct hooks *h, struct vmexit_bpf *skel, bool stream, double window_s,
		       bool verbose_check);
const char *run_hook_name(enum run_hook r);
/* The -v lines: which hooks are in use and why. */
void hooks_print(const struct hooks *h, FILE *f);
/* "hooks":{...} for JSON outputs, without a leading comma. */
void hooks_json(const struct hooks *h, FILE *f);

#endif /* VMEXIT_HOOKS_H */
