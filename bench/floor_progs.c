// SPDX-License-Identifier: GPL-2.0
/*
 * floor_progs: attaches empty BPF programs (bpf/floor.bpf.c) on the hooks vmexit uses and waits
 * for SIGINT or SIGTERM. The benchmarks run it as a tracer of its own, next to vmexit and
 * bpftrace, so that a cost can be read as a multiple of what any BPF program there costs.
 *
 * usage: floor_progs [--exit fast|classic|none] [--run auto|fentry|fpu-btf|fpu|ioctl|none]
 *                    [--user auto|btf|classic] [--wake] [--timed | --timed-key]
 * Default --exit fast --run auto --user auto: the hooks vmexit would choose (src/kernel/hooks.c),
 * the first that loads and attaches: for KVM_RUN a trampoline, kvm_fpu (x86; BTF-enabled, then
 * classic) and the ioctl syscall; for kvm_userspace_exit (always attached) the BTF-enabled
 * tracepoint, then the classic one. --wake: also stat --wake's hooks (bpf/wake.bpf.c's).
 * --timed: the least a program timing each exit does (bpf/floor.bpf.c), not empty ones, on
 * the BTF-enabled hooks vmexit's fast path takes: kvm_userspace_exit btf and KVM_RUN fentry or
 * fpu-btf (else refused), kvm_exit/kvm_entry fast (classic: the empty ones, as a pair that
 * never fires where vmexit found no kvm_exit to check). --timed-key: --timed, and the end of each
 * KVM_RUN (kvm_fpu's put: KVM_RUN fpu-btf only) reads the exit's key from the vCPU's kvm_run
 * (where a program can type the vCPU: Linux 6.2+, struct kvm_vcpu in vmlinux's BTF); at the end
 * it prints how many KVM_RUNs it read and how many were IO exits. Prints "floor: attached ..."
 * on stderr once every program is attached.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor_timed.h"
#include "floor.skel.h"

/* What the programs on the user-exit hooks do: nothing, time each exit, or also read its key. */
enum floor_mode { FLOOR_EMPTY, FLOOR_TIMED, FLOOR_TIMED_KEY };

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

/*
 * The KVM_RUN hooks a mode has programs for: any with empty ones; BTF-enabled with --timed, as
 * its user-exit program; kvm_fpu's BTF-enabled one with --timed-key (the key is read at the put).
 */
static bool run_hook_has(const char *hook, enum floor_mode mode)
{
	switch (mode) {
	case FLOOR_TIMED:
		return !strcmp(hook, "fentry") || !strcmp(hook, "fpu-btf");
	case FLOOR_TIMED_KEY:
		return !strcmp(hook, "fpu-btf");
	default:
		return true;
	}
}

static struct bpf_program *run_prog(struct floor_bpf *skel, const char *hook, enum floor_mode mode)
{
	bool timed = mode != FLOOR_EMPTY;

	if (!strcmp(hook, "fentry"))
		return timed ? skel->progs.floor_run_fentry_timed : skel->progs.floor_run_fentry;
	if (!strcmp(hook, "fpu-btf"))
		return mode == FLOOR_TIMED_KEY ? skel->progs.floor_run_fpu_keyed :
		       timed ? skel->progs.floor_run_fpu_timed : skel->progs.floor_run_fpu_btf;
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
				      const char *user_hook, bool wake, enum floor_mode mode)
{
	bool timed = mode != FLOOR_EMPTY;
	struct floor_bpf *skel;
	int err, cpus;

	/* Timed: the KVM_RUN program must end what the user-exit one began, both BTF-enabled. */
	if (timed && (strcmp(user_hook, "btf") ||
		      (strcmp(run_hook, "none") && !run_hook_has(run_hook, mode)))) {
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
	if (run_prog(skel, run_hook, mode))
		bpf_program__set_autoload(run_prog(skel, run_hook, mode), true);
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

/*
 * --timed-key: what the put read, summed over the CPUs' records: a check that the key came from
 * the vCPU the thread runs (the guest's IO exits are all there), not a figure of the bench.
 */
static int keyed_report(struct floor_bpf *skel)
{
	int cpus = libbpf_num_possible_cpus();
	struct timed_start rec[NR_TIMED];
	__u64 runs = 0, io = 0;

	for (int cpu = 0; cpu < cpus; cpu++) {
		__u32 key = cpu;

		if (bpf_map__lookup_elem(skel->maps.timed_starts, &key, sizeof(key), rec,
					 sizeof(rec), 0)) {
			fprintf(stderr, "floor_progs: reading the timed records: %s\n",
				strerror(errno));
			return -1;
		}
		runs += rec[TIMED_USER].key_runs;
		io += rec[TIMED_USER].key_io;
	}
	fprintf(stderr, "floor: keyed: %llu KVM_RUNs' vCPU found, %llu IO exits read from kvm_run\n",
		(unsigned long long)runs, (unsigned long long)io);
	return 0;
}

static int usage(const char *why)
{
	fprintf(stderr, "floor_progs: %s\nusage: floor_progs [--exit fast|classic|none] "
		"[--run auto|fentry|fpu-btf|fpu|ioctl|none] [--user auto|btf|classic] [--wake] "
		"[--timed | --timed-key]\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	const char *exit_hook = "fast", *run_hook = "auto", *user_hook = "auto";
	struct floor_bpf *skel = NULL;
	static const char *const mode_name[] = { "empty", "timed", "timed, keyed" };
	enum floor_mode mode = FLOOR_EMPTY;
	bool wake = false;
	sigset_t stop;
	int sig, err = 0;

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
			mode = FLOOR_TIMED;
		else if (!strcmp(argv[i], "--timed-key"))
			mode = FLOOR_TIMED_KEY;
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
	if (mode != FLOOR_EMPTY && !strcmp(user_hook, "auto"))
		user_hook = "btf";
	for (size_t u = 0; !skel && u < NR_USER_HOOKS; u++) {
		const char *user = strcmp(user_hook, "auto") ? user_hook : user_hooks[u];

		if (strcmp(run_hook, "auto")) {
			skel = floor_attach(exit_hook, run_hook, user, wake, mode);
		} else {
			for (size_t i = 0; !skel && i < NR_RUN_HOOKS; i++) {
				if (!strncmp(run_hooks[i], "fpu", 3) && !KVM_FPU_FIRES)
					continue;
				/* Only the hooks the mode has programs for: the last error is then
				 * the kernel's, not floor_attach()'s refusal. */
				if (!run_hook_has(run_hooks[i], mode))
					continue;
				skel = floor_attach(exit_hook, run_hooks[i], user, wake, mode);
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
			mode_name[mode], exit_hook,
			run_hook, user_hook, strerror(errno));
		return 1;
	}
	/* Blocked before the line that tells the caller it may signal: none is missed. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	fprintf(stderr, "floor: attached: kvm_exit/kvm_entry %s, kvm_userspace_exit %s, KVM_RUN "
		"%s%s%s%s\n", exit_hook, user_hook, run_hook, wake ? ", wake" : "",
		mode != FLOOR_EMPTY ? ", " : "", mode != FLOOR_EMPTY ? mode_name[mode] : "");
	sigwait(&stop, &sig);
	if (mode == FLOOR_TIMED_KEY && keyed_report(skel))
		err = 1;
	floor_bpf__destroy(skel);
	return err;
}
