// SPDX-License-Identifier: GPL-2.0
/*
 * floor_progs: attaches empty BPF programs (bpf/floor.bpf.c) on the hooks vmexit uses and waits
 * for SIGINT or SIGTERM. The benchmarks run it as a tracer of its own, next to vmexit and
 * bpftrace, so that a cost can be read as a multiple of what any BPF program there costs.
 *
 * usage: floor_progs [--exit fast|classic|none] [--run auto|fentry|fpu-btf|fpu|ioctl|none]
 *                    [--user auto|btf|classic] [--wake] [--timed]
 * Default --exit fast --run auto --user auto: the hooks vmexit would choose (src/kernel/hooks.c),
 * the first that loads and attaches: for KVM_RUN a trampoline, kvm_fpu (x86; BTF-enabled, then
 * classic) and the ioctl syscall; for kvm_userspace_exit (always attached) the BTF-enabled
 * tracepoint, then the classic one. --wake: also stat --wake's hooks (bpf/wake.bpf.c's).
 * --timed: the least a program timing each exit does (bpf/floor.bpf.c), not empty ones, on
 * the BTF-enabled hooks vmexit's fast path takes: kvm_userspace_exit btf and KVM_RUN fentry or
 * fpu-btf (else refused), kvm_exit/kvm_entry fast (classic: the empty ones, as a pair that
 * never fires where vmexit found no kvm_exit to check). Prints "floor: attached ..." on stderr once every program
 * is attached.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

/* vmexit runs on the kernel's architecture: only x86 KVM fires kvm:kvm_fpu. */
#if defined(__x86_64__) || defined(__i386__)
#define KVM_FPU_FIRES	1
#else
#define KVM_FPU_FIRES	0
#endif

/* The KVM_RUN hooks in the order vmexit prefers them. */
static const char *const run_hooks[] = { "fentry", "fpu-btf", "fpu", "ioctl" };
static const char *const user_hooks[] = { "btf", "classic" };
#define NR_USER_HOOKS	(sizeof(user_hooks) / sizeof(user_hooks[0]))
#define NR_RUN_HOOKS	(sizeof(run_hooks) / sizeof(run_hooks[0]))

static bool run_hook_known(const char *hook)
{
	for (size_t i = 0; i < NR_RUN_HOOKS; i++)
		if (!strcmp(hook, run_hooks[i]))
			return true;
	return false;
}

/* The KVM_RUN hooks --timed has programs for: BTF-enabled, as its user-exit program. */
static bool run_hook_timed(const char *hook)
{
	return !strcmp(hook, "fentry") || !strcmp(hook, "fpu-btf");
}

static struct bpf_program *run_prog(struct floor_bpf *skel, const char *hook, bool timed)
{
	if (!strcmp(hook, "fentry"))
		return timed ? skel->progs.floor_run_fentry_timed : skel->progs.floor_run_fentry;
	if (!strcmp(hook, "fpu-btf"))
		return timed ? skel->progs.floor_run_fpu_timed : skel->progs.floor_run_fpu_btf;
	if (!strcmp(hook, "fpu"))
		return skel->progs.floor_run_fpu;
	if (!strcmp(hook, "ioctl"))
		return skel->progs.floor_run_ioctl;
	return NULL;
}

/* --wake's empty programs, set to load. */
static void wake_autoload(struct floor_bpf *skel)
{
	struct bpf_program *const progs[] = {
		skel->progs.floor_wake_entry, skel->progs.floor_wake_exit,
		skel->progs.floor_wake_halt_end, skel->progs.floor_wake_ipi,
		skel->progs.floor_wake_msi, skel->progs.floor_wake_ioapic,
		skel->progs.floor_wake_set_irq, skel->progs.floor_wake_accept,
		skel->progs.floor_wake_timer, skel->progs.floor_wake_switch,
		skel->progs.floor_wake_wakeup, skel->progs.floor_wake_thread_end,
	};

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_autoload(progs[i], true);
}

/* Opens, loads and attaches the programs of exit_hook and run_hook; NULL and errno on failure. */
static struct floor_bpf *floor_attach(const char *exit_hook, const char *run_hook,
				      const char *user_hook, bool wake, bool timed)
{
	struct floor_bpf *skel;
	int err, cpus;

	/* Timed: the KVM_RUN program must end what the user-exit one began, both BTF-enabled. */
	if (timed && (strcmp(user_hook, "btf") ||
		      (strcmp(run_hook, "none") && !run_hook_timed(run_hook)))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	skel = floor_bpf__open();
	if (!skel)
		return NULL;
	cpus = libbpf_num_possible_cpus();
	if (cpus > 0)
		bpf_map__set_max_entries(skel->maps.timed_starts, cpus);
	if (!strcmp(exit_hook, "fast")) {
		bpf_program__set_autoload(timed ? skel->progs.floor_exit_timed :
					  skel->progs.floor_exit_fast, true);
		bpf_program__set_autoload(timed ? skel->progs.floor_entry_timed :
					  skel->progs.floor_entry_fast, true);
	} else if (!strcmp(exit_hook, "classic")) {
		bpf_program__set_autoload(skel->progs.floor_exit, true);
		bpf_program__set_autoload(skel->progs.floor_entry, true);
	}
	if (run_prog(skel, run_hook, timed))
		bpf_program__set_autoload(run_prog(skel, run_hook, timed), true);
	bpf_program__set_autoload(strcmp(user_hook, "btf") ? skel->progs.floor_user_exit :
				  timed ? skel->progs.floor_user_exit_timed :
				  skel->progs.floor_user_exit_btf, true);
	if (wake)
		wake_autoload(skel);
	err = floor_bpf__load(skel);
	if (!err)
		err = floor_bpf__attach(skel);
	if (err) {
		floor_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

static int usage(const char *why)
{
	fprintf(stderr, "floor_progs: %s\nusage: floor_progs [--exit fast|classic|none] "
		"[--run auto|fentry|fpu-btf|fpu|ioctl|none] [--user auto|btf|classic] [--wake] "
		"[--timed]\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	const char *exit_hook = "fast", *run_hook = "auto", *user_hook = "auto";
	struct floor_bpf *skel = NULL;
	bool wake = false, timed = false;
	sigset_t stop;
	int sig;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			exit_hook = argv[++i];
		else if (!strcmp(argv[i], "--run") && i + 1 < argc)
			run_hook = argv[++i];
		else if (!strcmp(argv[i], "--user") && i + 1 < argc)
			user_hook = argv[++i];
		else if (!strcmp(argv[i], "--wake"))
			wake = true;
		else if (!strcmp(argv[i], "--timed"))
			timed = true;
		else
			return usage("unknown argument");
	}
	if (strcmp(exit_hook, "fast") && strcmp(exit_hook, "classic") && strcmp(exit_hook, "none"))
		return usage("--exit wants fast, classic or none");
	if (strcmp(run_hook, "auto") && strcmp(run_hook, "none") && !run_hook_known(run_hook))
		return usage("--run wants auto, fentry, fpu-btf, fpu, ioctl or none");
	if (strcmp(user_hook, "auto") && strcmp(user_hook, "btf") && strcmp(user_hook, "classic"))
		return usage("--user wants auto, btf or classic");
	/* Quiet while trying: a refused trampoline is an answer, not an error. */
	if (!strcmp(run_hook, "auto") || !strcmp(user_hook, "auto"))
		libbpf_set_print(NULL);
	/* --timed: the BTF-enabled user-exit hook only (floor_attach() refuses any other). */
	if (timed && !strcmp(user_hook, "auto"))
		user_hook = "btf";
	for (size_t u = 0; !skel && u < NR_USER_HOOKS; u++) {
		const char *user = strcmp(user_hook, "auto") ? user_hook : user_hooks[u];

		if (strcmp(run_hook, "auto")) {
			skel = floor_attach(exit_hook, run_hook, user, wake, timed);
		} else {
			for (size_t i = 0; !skel && i < NR_RUN_HOOKS; i++) {
				if (!strncmp(run_hooks[i], "fpu", 3) && !KVM_FPU_FIRES)
					continue;
				/* Only the hooks --timed has programs for: the last error is then
				 * the kernel's, not floor_attach()'s refusal. */
				if (timed && !run_hook_timed(run_hooks[i]))
					continue;
				skel = floor_attach(exit_hook, run_hooks[i], user, wake, timed);
				if (skel)
					run_hook = run_hooks[i];
			}
		}
		if (skel)
			user_hook = user;
		if (strcmp(user_hook, "auto"))
			break;
	}
	if (!skel) {
		fprintf(stderr, "floor_progs: cannot load or attach the %s programs (kvm_exit/"
			"kvm_entry %s, KVM_RUN %s, kvm_userspace_exit %s): %s\n",
			timed ? "timed" : "empty", exit_hook,
			run_hook, user_hook, strerror(errno));
		return 1;
	}
	/* Blocked before the line that tells the caller it may signal: none is missed. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	fprintf(stderr, "floor: attached: kvm_exit/kvm_entry %s, kvm_userspace_exit %s, KVM_RUN "
		"%s%s%s\n", exit_hook, user_hook, run_hook, wake ? ", wake" : "",
		timed ? ", timed" : "");
	sigwait(&stop, &sig);
	floor_bpf__destroy(skel);
	return 0;
}
