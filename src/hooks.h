/* SPDX-License-Identifier: GPL-2.0 */
/* Which kernel hooks vmexit attaches, chosen by probing the running kernel at start-up. */
#ifndef VMEXIT_HOOKS_H
#define VMEXIT_HOOKS_H

#include <stdio.h>

/* What ends a userspace exit: the start of the thread's next KVM_RUN, best first. */
enum run_hook {
	RUN_HOOK_NONE,		/* VMM time not measured */
	RUN_HOOK_FENTRY,	/* trampoline on kvm_arch_vcpu_ioctl_run */
	RUN_HOOK_FPU,		/* kvm:kvm_fpu load (x86) */
	RUN_HOOK_IOCTL,		/* syscalls:sys_enter_ioctl: every task on the host pays */
};

struct hooks {
	enum run_hook run;
	char run_note[160];	/* why the better hooks were not taken */
};

struct vmexit_bpf;

/* Probes the KVM_RUN hooks and turns on the program of the best one in the opened skeleton. */
void hooks_choose_run(struct hooks *h, struct vmexit_bpf *skel);
const char *run_hook_name(enum run_hook r);
/* The -v line: which hooks are in use and why. */
void hooks_print(const struct hooks *h, FILE *f);

#endif /* VMEXIT_HOOKS_H */
