// SPDX-License-Identifier: GPL-2.0
/* Probing the running kernel for the cheapest hooks that measure the same thing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "hooks.h"
#include "session.h"
#include "vmexit.skel.h"
#include "hook_probe.skel.h"

/* vmexit runs on the kernel's architecture: only x86 KVM fires kvm:kvm_fpu. */
#if defined(__x86_64__) || defined(__i386__)
#define KVM_FPU_FIRES	1
#else
#define KVM_FPU_FIRES	0
#endif

const char *run_hook_name(enum run_hook r)
{
	switch (r) {
	case RUN_HOOK_FENTRY:
		return "fentry/kvm_arch_vcpu_ioctl_run";
	case RUN_HOOK_FPU:
		return "kvm:kvm_fpu";
	case RUN_HOOK_IOCTL:
		return "syscalls:sys_enter_ioctl";
	default:
		return "none";
	}
}

/* 0 when a trampoline attaches to KVM_RUN here, else the -errno of the step that failed. */
static int fentry_probe(void)
{
	struct hook_probe_bpf *p = hook_probe_bpf__open();
	int err;

	if (!p)
		return -errno;
	err = hook_probe_bpf__load(p);
	if (!err)
		err = hook_probe_bpf__attach(p);
	hook_probe_bpf__destroy(p);
	return err;
}

void hooks_choose_run(struct hooks *h, struct vmexit_bpf *skel)
{
	int err = fentry_probe();
	size_t n;

	h->run_note[0] = 0;
	if (!err) {
		h->run = RUN_HOOK_FENTRY;
		bpf_program__set_autoload(skel->progs.kvm_run_fentry, true);
		return;
	}
	n = snprintf(h->run_note, sizeof(h->run_note), "fentry refused: %s", strerror(-err));
	/*
	 * kvm_fpu is declared for every architecture (include/trace/events/kvm.h), so arm64's
	 * tracefs lists it too, but only x86's KVM_RUN fires it (kvm_load_guest_fpu): elsewhere
	 * it would attach and never end a userspace exit.
	 */
	if (KVM_FPU_FIRES && tracepoint_exists("kvm/kvm_fpu")) {
		h->run = RUN_HOOK_FPU;
		bpf_program__set_autoload(skel->progs.kvm_run_fpu, true);
		return;
	}
	if (n < sizeof(h->run_note))
		snprintf(h->run_note + n, sizeof(h->run_note) - n, KVM_FPU_FIRES ?
			 ", no kvm:kvm_fpu" : ", kvm:kvm_fpu never fires on this architecture");
	if (tracepoint_exists("syscalls/sys_enter_ioctl")) {
		h->run = RUN_HOOK_IOCTL;
		bpf_program__set_autoload(skel->progs.kvm_run_ioctl, true);
		return;
	}
	h->run = RUN_HOOK_NONE;
}

void hooks_print(const struct hooks *h, FILE *f)
{
	fprintf(f, "vmexit: hooks: KVM_RUN %s%s%s%s\n", run_hook_name(h->run),
		h->run_note[0] ? " (" : "", h->run_note, h->run_note[0] ? ")" : "");
	if (h->run == RUN_HOOK_IOCTL)
		fprintf(f, "vmexit: hooks: every syscall on the host pays for the ioctl "
			"tracepoint\n");
}
