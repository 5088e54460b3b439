/* SPDX-License-Identifier: GPL-2.0 */
/* Which kernel hooks vmexit attaches, chosen by probing the running kernel at start-up. */
#ifndef VMEXIT_HOOKS_H
#define VMEXIT_HOOKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "tracing_info.h"

/* What ends a userspace exit: the start of the thread's next KVM_RUN, best first. */
enum run_hook {
	RUN_HOOK_NONE,		/* VMM time not measured */
	RUN_HOOK_FENTRY,	/* trampoline on kvm_arch_vcpu_ioctl_run */
	RUN_HOOK_FPU_BTF,	/* kvm_fpu load (x86), the BTF-enabled tracepoint */
	RUN_HOOK_FPU,		/* kvm:kvm_fpu load (x86), the classic one */
	RUN_HOOK_IOCTL,		/* syscalls:sys_enter_ioctl: every task on the host pays */
};

/* kvm_exit and kvm_entry: the classic tracepoints, or the raw ones (the fast path). */
enum exit_hook {
	EXIT_HOOK_CLASSIC,
	EXIT_HOOK_FAST,
};

/*
 * The check window. The fast path is trusted only once CHECK_MIN_MATCHED exits were read
 * alike: a handful proves little, and a slow machine (Bochs: tens of us of emulated time per
 * exit) may make that few in the nominal window. check_window_open() says whether to keep
 * looking, given the exits the classic side saw (seen), those both read alike (matched) and
 * those they did not (bad: read differently, by one side only, or unreadable).
 * The window ends at the first of:
 *  - a bad exit: the verdict is in, the fast path is refused;
 *  - CHECK_ENOUGH exits agreed;
 *  - no exit at all in its first CHECK_IDLE_S: no VM runs, nothing to judge (counted from
 *    quiet_s before start when the host was already seen to make no exit then: start-up
 *    watches kvm_exit before the BTF work that arming the check needs);
 *  - window_s passed and CHECK_MIN_MATCHED exits agreed;
 *  - window_s passed and no new exit came for CHECK_IDLE_S (the VMs stopped, or none ran);
 *  - CHECK_MAX_WINDOWS * window_s passed: start-up ends even if exits only trickle in.
 * Verbose (--check-hooks, which prints both sides' counts over its window) skips the first
 * three: it always looks for window_s, so that a VM started just before vmexit is still
 * judged, and longer only while exits keep coming with fewer than CHECK_MIN_MATCHED agreed.
 * Fewer than CHECK_MIN_MATCHED agreeing exits then: the classic tracepoints run, and -v and
 * the JSON note say that the fast path was not checked, and why.
 */
#define CHECK_MIN_MATCHED	100
#define CHECK_ENOUGH		5000
#define CHECK_IDLE_S		0.1
#define CHECK_MAX_WINDOWS	10

struct check_window {
	double start, window_s;	/* seconds, any monotonic clock */
	bool verbose;
	double quiet_s;		/* no exit on the host in the quiet_s before start */
	__u64 last_seen;	/* seen at the last call, and since when */
	double last_seen_at;
};

bool check_window_open(struct check_window *w, double now, __u64 seen, __u64 matched, __u64 bad);

struct vmexit_bpf;
struct hook_check_bpf;
struct exit_watch_bpf;
struct bpf_link;
struct btf;
struct bpf_program;

/* The check's objects from start-up until they are detached, after tracing began. */
struct hook_check_run {
	struct exit_watch_bpf *watch;	/* counts every kvm_exit from the start */
	struct hook_check_bpf *obj;	/* NULL when the check did not load */
	struct bpf_link *links[4];
	struct btf *vmlinux_btf, *kvm_btf;	/* parsed once for the probes, until KVM_RUN's */
	bool run_probed;		/* KVM_RUN's fentry probed already, with run_err */
	int run_err;
	/* tp_btf programs can attach to kvm_userspace_exit and kvm_fpu (their BTF prototypes
	 * are known), probed with the fentry; user_btf also says which userspace exit hook is
	 * in use (there is no fallback past the classic one); entry_btf: a tp_btf program can
	 * attach to kvm_entry, the entry of the classic kvm_exit's pair too (hooks_exit_autoload) */
	bool user_btf, fpu_btf, entry_btf;
	/* A program can read an exit's key from kvm_run (bpf/run_key.bpf.h): bpf_rdonly_cast and
	 * the types it reads, all in vmlinux's BTF (the kfunc types only vmlinux's) */
	bool run_key_btf;
	/* kvm_exit_direct loads (bpf/kernel_load.bpf.h): bpf_rdonly_cast and its stand-in types in
	 * vmlinux's BTF; cleared when it did not load (kvm_exit_fast then) */
	bool exit_direct;
	double watch_from;
	struct check_window w;
	bool reaping;			/* a thread detaches the objects */
	/* Their links' fds when the thread took them: before 5.15 a classic tracepoint's link is
	 * its perf event, which the end of a session must not hand off (perf_hand_off.h) */
	int reaped_fds[5];
	int n_reaped_fds;
	bool say_detached;		/* -v: it says when they are gone */
	double released_at;
	pthread_t reaper;
};

/* What a check window found. */
enum check_verdict {
	CHECK_NONE,		/* no window ran */
	CHECK_AGREED,		/* the fast path may be used */
	CHECK_TOO_FEW,		/* not checked: too few exits (fast_switch.h waits for more) */
	CHECK_REFUSED,		/* the fast path read differently: the classic pair stays */
};

struct fast_switch;

struct hooks {
	enum run_hook run;
	char run_note[160];	/* why the better hooks were not taken */
	bool want_rip;		/* --by rip: the check compares the RIPs too (set before the check) */
	bool want_vector;	/* --by key: the check compares the interrupt vectors too */
	enum exit_hook exit;
	__u32 exit_shape;	/* enum vmexit_exit_shape */
	char exit_note[200];	/* why not the fast path, or that it was checked */
	struct hook_check check;
	enum check_verdict verdict;	/* of the start-up window */
	struct hook_check_run run_state;
	struct fast_switch *sw;	/* started idle: the switch once exits begin, or NULL */
};

/* Probes the KVM_RUN and userspace exit hooks and turns on the program of the best one of each
 * in the opened skeleton. */
void hooks_choose_run(struct hooks *h, struct vmexit_bpf *skel);
/*
 * kvm_exit/kvm_entry: the fast path when the kernel's raw prototype is known and the check
 * window agrees (window_s, its per-reason counts printed when verbose_check), else the
 * classic tracepoints, always for a stream (it needs the record's fields); kvm_entry's program is
 * the BTF-enabled one with either kvm_exit wherever the kernel's BTF has it. A disagreement is
 * reported on stderr. The window runs while the rest of start-up goes on:
 * hooks_check_start() arms it (before the main object is opened), hooks_exit_autoload() loads
 * both variants in the main object when the fast path may be chosen, hooks_check_finish()
 * waits for the window's end and chooses, hooks_exit_prog_used() says which programs to
 * attach, and hooks_check_release() detaches the check's programs in a thread once tracing
 * began (a classic tracepoint's detach waits for an RCU grace period). hooks_free() at the end.
 */
/* classic_why: the classic tracepoint is needed (its note says why); NULL: the check runs. */
void hooks_check_start(struct hooks *h, const char *classic_why, double window_s,
		       bool verbose_check);
void hooks_exit_autoload(const struct hooks *h, struct vmexit_bpf *skel);
/* Reloading the main object with the classic tracepoints only: its fast path did not load;
 * direct: kvm_exit_direct was the program refused, and kvm_exit_fast is tried first. */
void hooks_exit_fast_refused(struct hooks *h, struct vmexit_bpf *skel, int err, bool direct);
void hooks_check_finish(struct hooks *h);
/*
 * One check window (armed by the caller) to its end, or until *stop (may be NULL): fills k and
 * note (why, for -v and JSON), warns on stderr when the fast path read differently, and says
 * whether the fast path may be used. The check's programs return at once afterwards.
 */
enum check_verdict hooks_check_verdict(struct hook_check_run *r, struct hook_check *k, char *note,
				       size_t len, const volatile int *stop);
/* Detaches and frees the check and the watch (a grace period: not on a hot path). */
void check_objects_destroy(struct hook_check_run *r);
bool hooks_exit_prog_used(const struct hooks *h, const struct vmexit_bpf *skel,
			  const struct bpf_program *prog);
/* The raw kvm_exit program this kernel takes (kvm_exit_direct or kvm_exit_fast,
 * bpf/vmexit.bpf.c), and its link. */
struct bpf_program *hooks_exit_fast_prog(const struct hooks *h, const struct vmexit_bpf *skel);
struct bpf_link **hooks_exit_fast_link(const struct hooks *h, struct vmexit_bpf *skel);
/*
 * The check's links, for a caller that detaches everything at once (a session's end): none
 * once hooks_check_release() gave them to its thread. Returns how many were put in links[].
 */
int hooks_check_links(struct hooks *h, struct bpf_link **links[], int max);
/* The fds of the check's links its thread took (perhaps closed since), which
 * hooks_check_links() no longer gives, for the session's end: never handed off
 * (perf_hand_off.h). Returns how many are in fds[]. */
int hooks_check_link_fds(const struct hooks *h, int fds[], int max);
/* verbose: "vmexit: hooks: start-up check detached" on stderr once they are. */
void hooks_check_release(struct hooks *h, bool verbose);
/* Waits until the thread of hooks_check_release() has detached the check (none: at once).
 * A check kept for a run started idle (fast_switch.h) stays. */
void hooks_check_reaped(struct hooks *h);
void hooks_free(struct hooks *h);
const char *run_hook_name(enum run_hook r);
/* The -v lines: which hooks are in use and why. exit_only: the kvm_exit line alone, the
 * --check-hooks verdict (checked, not checked, refused: and why). */
void hooks_print(const struct hooks *h, bool exit_only, FILE *f);
/* The hooks in use as the outputs show them (valid while h is). */
void hooks_info(const struct hooks *h, struct hooks_info *out);

#endif /* VMEXIT_HOOKS_H */
