// SPDX-License-Identifier: GPL-2.0
/* Preflight checks, skeleton open -> tunables -> load -> attach, and the traced command. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "env_knobs.h"
#include "bpf_run_stats.h"
#include "hooks.h"
#include "fast_switch.h"
#include "links_destroy.h"
#include "perf_hand_off.h"
#include "session.h"
#include "startup_heap.h"
#include "startup_timing.h"
#include "tracefs.h"
#include "vmexit.skel.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif
#ifndef CAP_BPF
#define CAP_BPF		39
#endif

static bool verbose;

/*
 * The program the kernel refused in the last failed load, as libbpf names it ("prog 'NAME':
 * failed to load"), or "": libbpf closes every program of a failed load, so their fds cannot
 * tell which one it was (session_load() needs to: the fast path's or kvm_run's keys').
 */
static char refused_prog[64];

static void note_refused(const char *fmt, va_list args)
{
	char line[256];
	const char *p, *q;
	va_list ap;

	if (!strstr(fmt, "failed to load"))
		return;
	va_copy(ap, args);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p = strstr(line, "prog '");
	q = p ? strstr(p + 6, "': failed to load") : NULL;
	if (q)
		snprintf(refused_prog, sizeof(refused_prog), "%.*s", (int)(q - p - 6), p + 6);
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_WARN)
		note_refused(fmt, args);
	/* Without -v, vmexit's own one-line errors say what went wrong. */
	if (!verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static bool refused(const struct bpf_program *prog)
{
	return !strcmp(refused_prog, bpf_program__name(prog));
}

static bool cap_effective(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * The capabilities loading and attaching tracing programs takes that the effective set lacks,
 * as text, or NULL when it has them. Root is no proof: capsh --drop, setpriv and containers
 * leave uid 0 without them, and the load then fails with a bare EPERM. CAP_SYS_ADMIN stands
 * for both (the kernels before 5.8 know no other).
 */
static const char *missing_caps(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	bool bpf, perfmon;

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0 ? NULL : "CAP_BPF and CAP_PERFMON";
	if (cap_effective(data, CAP_SYS_ADMIN))
		return NULL;
	bpf = cap_effective(data, CAP_BPF);
	perfmon = cap_effective(data, CAP_PERFMON);
	if (bpf && perfmon)
		return NULL;
	return bpf ? "CAP_PERFMON" : perfmon ? "CAP_BPF" : "CAP_BPF and CAP_PERFMON";
}

int session_preflight(void)
{
	const char *missing = missing_caps(), *tfs;
	char p[128];

	if (missing && geteuid() != 0) {
		fprintf(stderr, "vmexit: needs root (or CAP_BPF and CAP_PERFMON): run it with sudo\n");
		return -1;
	}
	if (missing) {
		fprintf(stderr, "vmexit: running as root without %s (dropped by capsh, setpriv or "
			"a container): grant %s (or CAP_SYS_ADMIN) to vmexit\n", missing, missing);
		return -1;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "vmexit: this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			"use a kernel built with CONFIG_DEBUG_INFO_BTF=y\n");
		return -1;
	}
	tfs = tracefs_dir();
	if (!tfs && mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0)
		tfs = tracefs_dir();
	if (!tfs) {
		fprintf(stderr, "vmexit: tracefs is not mounted and could not be: "
			"mount -t tracefs nodev /sys/kernel/tracing\n");
		return -1;
	}
	snprintf(p, sizeof(p), "%s/events/kvm/kvm_userspace_exit", tfs);
	if (access(p, F_OK)) {
		fprintf(stderr, "vmexit: no kvm tracepoints in %s/events/kvm: load the kvm module "
			"(modprobe kvm_intel or modprobe kvm_amd)\n", tfs);
		return -1;
	}
	snprintf(p, sizeof(p), "%s/events/kvm/kvm_exit", tfs);
	if (access(p, F_OK)) {
		fprintf(stderr, "vmexit: kvm is loaded but has no kvm_exit tracepoint in %s: "
			"load kvm_intel or kvm_amd\n", tfs);
		return -1;
	}
	return 0;
}

/* Forks the command stopped on a pipe, so that its pid can be filtered before it runs. */
static int command_fork(struct session *s, char **argv)
{
	int fds[2], ex[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	/* Closed by a successful exec (O_CLOEXEC): a failed one writes its errno instead, so a
	 * command that could not run is told from one that ran and exited 127. */
	if (pipe2(ex, O_CLOEXEC | O_NONBLOCK)) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(fds[0]);
		close(fds[1]);
		close(ex[0]);
		close(ex[1]);
		return e;
	}
	if (pid == 0) {
		char c;
		int e;

		close(fds[1]);
		close(ex[0]);
		/* One byte means go; EOF means the parent gave up: never run untraced. */
		if (read(fds[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		e = errno;
		fprintf(stderr, "vmexit: cannot run '%s': %s\n", argv[0], strerror(e));
		/* Best effort: without it the parent takes the 127 for the command's own. */
		(void)!write(ex[1], &e, sizeof(e));
		_exit(127);
	}
	close(fds[0]);
	close(ex[1]);
	s->child_exec_fd = ex[0];
	s->child = pid;
	s->child_pid = pid;
	s->child_go_fd = fds[1];
	return 0;
}

void session_start_command(struct session *s)
{
	if (s->child_go_fd >= 0) {
		/*
		 * The command's first moments are measured too: the check's detach (a thread,
		 * freeing BTF, closing perf events) must not compete with it for a CPU.
		 */
		hooks_check_reaped(&s->hooks);
		if (write(s->child_go_fd, "g", 1) != 1)
			fprintf(stderr, "vmexit: cannot start the command: %s\n", strerror(errno));
		close(s->child_go_fd);
		s->child_go_fd = -1;
	}
}

bool session_command_done(struct session *s, int *status)
{
	if (!s->child)
		return false;
	if (waitpid(s->child, &s->child_status, WNOHANG) == s->child) {
		s->child = 0;
		if (status)
			*status = s->child_status;
		return true;
	}
	return false;
}

int session_command_report(const struct session *s, int rc)
{
	int st = s->child_status;

	if (s->child) {
		/* Ctrl-C or the end of tracing: the command keeps running, untraced from now on. */
		fprintf(stderr, "vmexit: tracing ended; command (pid %d) left running\n", s->child);
		return rc;
	}
	if (!s->child_pid || (WIFEXITED(st) && !WEXITSTATUS(st)))
		return rc;
	fprintf(stderr, "vmexit: the command %s %d\n",
		WIFEXITED(st) ? "exited with status" : "was killed by signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return rc ? rc : (WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

bool session_command_not_run(struct session *s)
{
	int e;

	if (s->child_exec_fd >= 0 && read(s->child_exec_fd, &e, sizeof(e)) == sizeof(e))
		s->child_not_run = true;
	return s->child_not_run;
}

static bool task_storage_supported(void)
{
	/* Task storage for tracing programs: Linux 5.11 ("bpf: Enable task local storage
	 * for tracing programs"); probing the map type is the cheap proxy. */
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
}

static int fill_filters(struct session *s, struct session_opts *o)
{
	__u8 one = 1;
	int fd, err;

	fd = bpf_map__fd(s->skel->maps.pid_filter);
	for (int i = 0; i < o->filter.nr_pids; i++) {
		__u32 pid = o->filter.pids[i];

		err = bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
		if (err)
			return err;
	}
	if (s->child) {
		__u32 pid = s->child;

		err = bpf_map_update_elem(fd, &pid, &one, BPF_ANY);
		if (err)
			return err;
	}
	fd = bpf_map__fd(s->skel->maps.reason_filter);
	for (int i = 0; i < o->filter.nr_reasons; i++) {
		__u64 key = (__u64)o->filter.reasons[i].isa << 32 | o->filter.reasons[i].reason;

		err = bpf_map_update_elem(fd, &key, &one, BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

/* The programs of bpf/vmexit.bpf.c that note keys, key_<name> on the tracepoint kvm_<name>. */
#define KEY_PROGS(X) X(pio) X(mmio) X(msr) X(cpuid) X(hypercall) X(hv_hypercall) X(hvc_arm64) \
	X(page_fault) X(guest_fault)

/*
 * When session_stop_exits() detaches each program: a group together (links_destroy.h), the
 * groups in this order, so that an exit that began can still complete.
 */
enum stop_group {
	STOP_BEGINS,		/* what begins exits, and the other events */
	STOP_COMPLETES,		/* what completes them */
	STOP_LAST,		/* what the exits in flight still need: their switches, forks */
	STOP_NEVER,		/* a thread that ends still emits the exits it leaves in flight */
};

/* Room for every program link_order() lists (a static assertion there keeps it so). */
#define LINKS_MAX	40

struct prog_link {
	struct bpf_program *prog;
	struct bpf_link **link;
	enum stop_group stop;
};

/*
 * Programs that complete an exit go first, those that start one last: attached the other way
 * round, a vCPU running at attach time would show a userspace exit whose KVM_RUN was missed.
 * Fills order[] and returns how many there are.
 */
static size_t link_order(struct vmexit_bpf *skel, struct prog_link order[LINKS_MAX])
{
	const struct prog_link all[] = {
		{ skel->progs.process_fork, &skel->links.process_fork, STOP_LAST },
		/* Before any cell is handed out: every thread's end then frees its cells. */
		{ skel->progs.thread_exit, &skel->links.thread_exit, STOP_NEVER },
		/* Before any exit begins, so that none misses its thread's switches. */
		{ skel->progs.sched_switch, &skel->links.sched_switch, STOP_LAST },
		{ skel->progs.sched_wakeup, &skel->links.sched_wakeup, STOP_LAST },
		{ skel->progs.kvm_run_fentry, &skel->links.kvm_run_fentry, STOP_COMPLETES },
		{ skel->progs.kvm_run_fpu, &skel->links.kvm_run_fpu, STOP_COMPLETES },
		{ skel->progs.kvm_run_fpu_btf, &skel->links.kvm_run_fpu_btf, STOP_COMPLETES },
		{ skel->progs.kvm_run_fpu_keyed, &skel->links.kvm_run_fpu_keyed, STOP_COMPLETES },
		{ skel->progs.kvm_run_ioctl, &skel->links.kvm_run_ioctl, STOP_COMPLETES },
		{ skel->progs.kvm_entry, &skel->links.kvm_entry, STOP_COMPLETES },
		{ skel->progs.kvm_entry_fast, &skel->links.kvm_entry_fast, STOP_COMPLETES },
		{ skel->progs.kvm_write_tsc_offset, &skel->links.kvm_write_tsc_offset, STOP_BEGINS },
#define KVM_EVENT_ATTACH(ID, id, name) \
		{ skel->progs.kvm_##name, &skel->links.kvm_##name, STOP_BEGINS },
		VMEXIT_KVM_EVENTS(KVM_EVENT_ATTACH)
#undef KVM_EVENT_ATTACH
#define KEY_ATTACH(name) { skel->progs.key_##name, &skel->links.key_##name, STOP_BEGINS },
		KEY_PROGS(KEY_ATTACH)
#undef KEY_ATTACH
		{ skel->progs.kvm_userspace_exit, &skel->links.kvm_userspace_exit, STOP_BEGINS },
		{ skel->progs.kvm_userspace_exit_btf, &skel->links.kvm_userspace_exit_btf,
		  STOP_BEGINS },
		{ skel->progs.kvm_exit, &skel->links.kvm_exit, STOP_BEGINS },
		{ skel->progs.kvm_exit_fast, &skel->links.kvm_exit_fast, STOP_BEGINS },
		{ skel->progs.kvm_exit_direct, &skel->links.kvm_exit_direct, STOP_BEGINS },
	};

	_Static_assert(sizeof(all) / sizeof(all[0]) <= LINKS_MAX, "link_order: order[] is too short");
	memcpy(order, all, sizeof(all));
	return sizeof(all) / sizeof(all[0]);
}

/* kvm_amd's sev_es parameter (a bool: Y or N); false without kvm_amd. */
static bool sev_es_enabled(void)
{
	FILE *f = fopen("/sys/module/kvm_amd/parameters/sev_es", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == 'Y' || c == '1';
}

/*
 * Whether kvm_cpuid's key program runs. The fast path's kvm_exit takes a CPUID exit's leaf from
 * the guest's RAX (bpf/keys.bpf.h, key_exit_leaf()), so it goes without it; the classic record
 * has no registers, and a run started idle keeps the program across its switch to the fast
 * path (no exit begun under one pair then loses its leaf). An SEV-ES guest's CPUID exits as a
 * VMGEXIT with its registers encrypted: kvm_cpuid alone has its leaf.
 */
static bool key_cpuid_needed(const struct hooks *h)
{
	return h->exit != EXIT_HOOK_FAST || sev_es_enabled();
}

static int attach_in_order(const struct hooks *h, struct vmexit_bpf *skel)
{
	struct prog_link order[LINKS_MAX];
	size_t n = link_order(skel, order);

	for (size_t i = 0; i < n; i++) {
		/* Loaded while the fast path check ran: only the chosen kvm_exit pair runs. */
		if (!bpf_program__autoload(order[i].prog) ||
		    !hooks_exit_prog_used(h, skel, order[i].prog))
			continue;
		if (order[i].prog == skel->progs.key_cpuid && !key_cpuid_needed(h)) {
			if (verbose)
				fprintf(stderr, "vmexit: hooks: keys: a CPUID exit's leaf from the "
					"guest's RAX at kvm_exit (no program on kvm_cpuid)\n");
			continue;
		}
		*order[i].link = bpf_program__attach(order[i].prog);
		if (!*order[i].link) {
			fprintf(stderr, "vmexit: cannot attach %s: %s\n",
				bpf_program__section_name(order[i].prog), strerror(errno));
			return -errno;
		}
	}
	return 0;
}

void session_stop_exits(struct session *s)
{
	struct prog_link order[LINKS_MAX];
	size_t n = link_order(s->skel, order);

	/* No pair changes places while they go; a check still waiting for exits goes first. */
	fast_switch_stop(&s->hooks);
	for (enum stop_group g = STOP_BEGINS; g < STOP_NEVER; g++) {
		struct bpf_link **links[LINKS_MAX + 8];
		int k = g == STOP_BEGINS ? hooks_check_links(&s->hooks, links, 8) : 0;

		for (size_t i = 0; i < n; i++) {
			if (order[i].stop == g)
				links[k++] = order[i].link;
		}
		links_destroy(links, k);
	}
}

/* The flush_in_flight iterator's output: whole event records of rec_len bytes each. */
int session_flush_in_flight(struct session *s, __u64 end_ns,
			    int (*fn)(void *ctx, const struct vmexit_event *ev), void *ctx)
{
	size_t rec_len = vmexit_event_len(s->skel->rodata->split_enabled,
					  s->skel->rodata->key_mode);
	unsigned char buf[64 * sizeof(struct vmexit_event)];
	struct bpf_link *link;
	size_t have = 0;
	int fd, err = 0;
	ssize_t n;

	s->skel->bss->flush_ns = end_ns;
	link = bpf_program__attach_iter(s->skel->progs.flush_in_flight, NULL);
	if (!link)
		return -errno;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	while (!err && (n = read(fd, buf + have, sizeof(buf) - have)) != 0) {
		size_t off = 0;

		if (n < 0) {
			if (errno != EINTR)
				err = -errno;
			continue;
		}
		have += n;
		for (; !err && have - off >= rec_len; off += rec_len) {
			struct vmexit_event ev = {};

			memcpy(&ev, buf + off, rec_len);
			err = fn(ctx, &ev);
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	close(fd);
out:
	bpf_link__destroy(link);
	return err;
}

/*
 * The --kvm-events programs are not autoloaded (SEC("?tp/...")): turn on the requested ones
 * whose tracepoint this kernel has, and say which are missing instead of failing.
 */
static void kvm_events_autoload(struct vmexit_bpf *skel, __u32 mask)
{
	struct bpf_program *progs[VMEXIT_KVM_NR] = {
#define KVM_EVENT_PROG(ID, id, name) [VMEXIT_KVM_##ID] = skel->progs.kvm_##name,
		VMEXIT_KVM_EVENTS(KVM_EVENT_PROG)
#undef KVM_EVENT_PROG
	};
	char tp[64];

	for (int id = 1; id < VMEXIT_KVM_NR; id++) {
		if (!(mask & (1u << id)))
			continue;
		snprintf(tp, sizeof(tp), "kvm/kvm_%s", kvm_event_name(id));
		if (!tracepoint_exists(tp)) {
			fprintf(stderr, "vmexit: warning: this kernel has no %s tracepoint; "
				"kvm_%s events are not captured\n", tp, kvm_event_name(id));
			continue;
		}
		bpf_program__set_autoload(progs[id], true);
	}
}

/*
 * The stack map hashes each stack to one of max_entries buckets, and a stack whose bucket holds
 * another is lost (no BPF_F_REUSE_STACKID, bpf/stacks.bpf.h): with 1024 a handful of distinct
 * stacks collided now and then (once in a bed run of test_stacks_host). 16384, as bcc's
 * offcputime keeps, makes that 16 times rarer for 8 MiB of 64-frame stacks, only with --stacks.
 */
__u32 stacks_max(const struct session_opts *o)
{
	return o->max_stacks ? o->max_stacks : 16384;
}

/*
 * Keys: the table sized --max-keys plus a reserve for each cell's none and other rows (see
 * bpf/keys.bpf.h); an empty table of one entry otherwise.
 */
static void keys_tunables(struct session *s, const struct session_opts *o)
{
	__u32 reserve = 2 * (s->max_cells < KEYS_RESERVE_CELLS ? s->max_cells : KEYS_RESERVE_CELLS);

	s->max_keys = o->max_keys ? o->max_keys : KEYS_DEFAULT_MAX;
	s->skel->rodata->key_mode = o->key_mode;
	s->skel->rodata->max_keys = s->max_keys;
	if (o->key_gpa_shift)
		s->skel->rodata->key_gpa_shift = o->key_gpa_shift;
	/* A stream's records carry their keys: no table to fill (nor keys_full to count). */
	s->skel->rodata->key_table_enabled = !o->stream;
	if (o->key_mode && !o->stream) {
		/* The hash finds an entry's slot, the array holds it, the queue its reuse. */
		s->skel->rodata->key_slots_nr = s->max_keys + reserve;
		bpf_map__set_max_entries(s->skel->maps.key_table, s->max_keys + reserve);
		bpf_map__set_max_entries(s->skel->maps.key_slots, s->max_keys + reserve);
		bpf_map__set_max_entries(s->skel->maps.free_keys, s->max_keys + reserve);
	}
}

/*
 * --by key where KVM traces no kvm_exit: exits to the VMM keyed from kvm_run at their KVM_RUN
 * (bpf/run_key.bpf.h), with no key program at all. NULL when chosen, else why not (said with
 * -v). Only where no kvm_exit is to come, whose key programs would be needed for the kernel's
 * exits: upstream x86 KVM traces kvm_exit in both its vendor modules (kvm_intel, kvm_amd; their
 * /sys/module directories exist built in too), so a KVM with neither is one that does not
 * (kvm_pvm, this project's development host). Should one fire kvm_exit all the same,
 * fast_switch.c says that its exits go keyless.
 */
static const char *run_keys_refusal(const struct session *s, const struct session_opts *o)
{
	static char why[96];

	if (o->key_mode != KEY_MODE_DEVICE)
		return "";
	if (!access("/sys/module/kvm_intel", F_OK) || !access("/sys/module/kvm_amd", F_OK))
		return "kvm_exit fires here (kvm_intel or kvm_amd)";
	if (s->hooks.run != RUN_HOOK_FPU_BTF)
		return "KVM_RUN's hook is not tp_btf/kvm_fpu";
	if (!s->hooks.run_state.run_key_btf)
		return "no bpf_rdonly_cast or no struct kvm_vcpu in vmlinux's BTF";
	if (s->run_keys_err) {
		snprintf(why, sizeof(why), "the program did not load: %s",
			 strerror(-s->run_keys_err));
		return why;
	}
	if (env_knob_is("VMEXIT_RUN_KEYS", "0"))
		return "VMEXIT_RUN_KEYS=0";
	return NULL;
}

/* The key tracepoints (--by key), where this kernel has them; --by rip needs none. */
static void keys_autoload(struct vmexit_bpf *skel, __u32 key_mode)
{
	static const struct { const char *tp; size_t prog; } key_progs[] = {
#define KEY_TP(name) { "kvm/kvm_" #name, offsetof(struct vmexit_bpf, progs.key_##name) },
		KEY_PROGS(KEY_TP)
#undef KEY_TP
	};

	if (key_mode != KEY_MODE_DEVICE)
		return;
	for (size_t i = 0; i < sizeof(key_progs) / sizeof(key_progs[0]); i++) {
		struct bpf_program **p = (void *)((char *)skel + key_progs[i].prog);

		bpf_program__set_autoload(*p, tracepoint_exists(key_progs[i].tp));
	}
}


/*
 * The exit in flight per CPU (bpf/cpu_exit_slot.bpf.h) spares the entry its task-storage
 * lookup, and the exit too while the slot holds the thread's cell for the reason, for plain
 * counts and --by key/rip: with keys an exit whose key is final at kvm_exit with its entry in
 * the slot's ways, or none yet, begins there, and ends there once kvm_exit or the key event
 * that named its key (kvm_pio's port) knew its entry; the rest through the thread's state.
 * --split and the stream read the thread's state at the exit's end anyway. A userspace exit
 * and its KVM_RUN take the slot's user half without -c (which filters by the thread's vCPU);
 * with keys one whose key is its guest exit's final one. VMEXIT_CPU_SLOT=0 turns both off
 * (benchmarks, tests).
 */
static void cpu_slot_tunables(struct session *s, const struct session_opts *o)
{
	int cpus = libbpf_num_possible_cpus();
	bool on = !o->stream && !o->split && cpus > 0 && !env_knob_is("VMEXIT_CPU_SLOT", "0");
	bool user = on && o->filter.vcpu < 0;
	const char *where = s->task_storage ? "task storage" : "a hash by thread id";

	s->skel->rodata->cpu_slot_enabled = on;
	s->skel->rodata->user_slot_enabled = user;
	if (cpus > 0)
		bpf_map__set_max_entries(s->skel->maps.cpu_exits, cpus);
	/* The fallback is the per-thread state: set_tunables() chose it before (hash or not). */
	if (!verbose)
		return;
	/* What cpu_slot_begins() and key_slot_final() decide, said as the slot is used. */
	if (!on)
		fprintf(stderr, "vmexit: exits in flight: in %s\n", where);
	else if (o->key_mode == KEY_MODE_OFF)
		fprintf(stderr, "vmexit: exits in flight: per CPU (begun and ended there%s), in %s "
			"when the thread moved\n", user ? ", userspace exits too" : "", where);
	else
		fprintf(stderr, "vmexit: exits in flight: per CPU (begun there when the key is "
			"final or none at kvm_exit, ended there once its key entry is known%s), in "
			"%s otherwise and when the thread moved\n",
			user ? "; userspace exits too, keyed by their guest exit's final key" : "",
			where);
}

/* The open object's tunables: where per-thread state lives, filters on or off, map sizes. */
static void set_tunables(struct session *s, const struct session_opts *o)
{
	struct vmexit_bpf *skel = s->skel;

	/* VMEXIT_THREAD_HASH=1: the tests run the pre-5.11 per-thread hash on a newer kernel. */
	s->task_storage = !o->force_thread_hash && !env_knob_on("VMEXIT_THREAD_HASH") &&
			  task_storage_supported();
	if (verbose)
		fprintf(stderr, "vmexit: per-thread state in %s\n",
			s->task_storage ? "task storage" : "a hash by thread id");
	s->max_cells = o->max_cells ? o->max_cells : 4096;
	s->windowed = o->cells_windowed;

	skel->rodata->use_task_storage = s->task_storage;
	skel->rodata->filter_pids = o->filter.nr_pids > 0 || o->command || o->pid_filter_on;
	skel->rodata->follow_forks = o->command != NULL;
	skel->rodata->filter_reasons = o->filter.nr_reasons > 0;
	skel->rodata->filter_vcpu = o->filter.vcpu;
	skel->rodata->max_cells = s->max_cells;
	skel->rodata->stream_enabled = o->stream;
	skel->rodata->stream_min_latency_ns = o->filter.min_latency_ns;
	skel->rodata->stream_sample_every = o->sample_every ? o->sample_every : 1;
	skel->rodata->kvm_events_enabled = o->kvm_events != 0;
	skel->rodata->split_enabled = o->split;
	skel->rodata->stacks_enabled = o->split && o->stacks;
	skel->rodata->stack_min_ns = o->stack_min_ns;
	skel->rodata->stuck_min_ns = o->stuck_ns;
	skel->rodata->count_gated = o->count_later;
	keys_tunables(s, o);
	cpu_slot_tunables(s, o);

	bpf_map__set_max_entries(skel->maps.cells, s->max_cells);
	if (o->split && o->stacks) {
		bpf_map__set_max_entries(skel->maps.stack_map, stacks_max(o));
		bpf_map__set_max_entries(skel->maps.stack_time, stacks_max(o));
	}
	bpf_map__set_max_entries(skel->maps.free_cells, s->max_cells);
	if (s->task_storage) {
		bpf_map__set_autocreate(skel->maps.thread_hash, true);
	} else {
		bpf_map__set_max_entries(skel->maps.thread_hash, 16384);
		bpf_map__set_autocreate(skel->maps.thread_storage, false);
	}
	if (o->stream || o->kvm_events) {
		__u64 ring = (o->ringbuf_kb ? o->ringbuf_kb : 16384) * 1024ull;

		bpf_map__set_max_entries(skel->maps.events, ring);
		/* stream and record read on their own clock; top's kvm event counts at a wakeup. */
		if (o->stream)
			skel->rodata->stream_wake_shift = stream_wake_shift_of(ring);
	}
}

/* Which programs load: the hooks this kernel offers, and only what the options need. */
static void choose_programs(struct session *s, const struct session_opts *o)
{
	struct vmexit_bpf *skel = s->skel;
	const char *why;

	hooks_choose_run(&s->hooks, skel);
	hooks_exit_autoload(&s->hooks, skel);
	if (s->hooks.run == RUN_HOOK_NONE) {
		/* Userspace exits are still counted, and every one shows up as in flight. */
		fprintf(stderr, "vmexit: warning: no hook for the start of KVM_RUN (%s, no "
			"syscalls:sys_enter_ioctl); time spent in the VMM is not measured\n",
			s->hooks.run_note);
	}
	/* Every context switch on the host pays for it: only when asked. */
	bpf_program__set_autoload(skel->progs.sched_switch, o->split);
	bpf_program__set_autoload(skel->progs.sched_wakeup, o->split);
	/* The fork follower only matters when we run the command ourselves. */
	bpf_program__set_autoload(skel->progs.process_fork, o->command != NULL);
	/* TSC offsets are an x86 notion: arm64 has no such tracepoint. */
	bpf_program__set_autoload(skel->progs.kvm_write_tsc_offset,
				  o->stream && tracepoint_exists("kvm/kvm_write_tsc_offset"));
	if (o->stream || o->kvm_events)
		kvm_events_autoload(skel, o->kvm_events);
	bpf_program__set_autoload(skel->progs.flush_in_flight, o->stream);
	why = run_keys_refusal(s, o);
	if (why) {
		keys_autoload(skel, o->key_mode);
		if (verbose && *why)
			fprintf(stderr, "vmexit: hooks: keys of exits to the VMM from their key "
				"events (not from kvm_run: %s)\n", why);
		return;
	}
	skel->rodata->run_keys = true;
	bpf_program__set_autoload(skel->progs.kvm_run_fpu_btf, false);
	bpf_program__set_autoload(skel->progs.kvm_run_fpu_keyed, true);
	if (verbose)
		fprintf(stderr, "vmexit: hooks: keys of exits to the VMM from kvm_run at their KVM_RUN "
			"(no key programs: no kvm_intel or kvm_amd, kvm_exit is not to come)\n");
}

/* The cell array, read-only and shared with the kernel: samples read it without syscalls. */
static int map_cells(struct session *s)
{
	size_t stride = (sizeof(struct cell) + 7) & ~7ul;
	int err;

	if (s->windowed) {
		cell_window_init(&s->win, bpf_map__fd(s->skel->maps.cells), s->max_cells, stride);
		return 0;
	}
	s->cells_len = stride * s->max_cells;
	s->cells_len = (s->cells_len + getpagesize() - 1) & ~((size_t)getpagesize() - 1);
	s->cells = mmap(NULL, s->cells_len, PROT_READ, MAP_SHARED,
			bpf_map__fd(s->skel->maps.cells), 0);
	if (s->cells == MAP_FAILED) {
		err = -errno;
		s->cells = NULL;
		fprintf(stderr, "vmexit: cannot map the statistics: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

/*
 * Tests only: VMEXIT_TEST_REFUSE=NAME has the kernel refuse that program, as a kernel may,
 * to see what falls back: loaded as a socket filter, it may call none of the tracing helpers
 * every one of them calls (checked by main()).
 */
static void test_refusal(struct vmexit_bpf *skel)
{
	const char *name = getenv("VMEXIT_TEST_REFUSE");
	struct bpf_program *p = name && *name ?
				bpf_object__find_program_by_name(skel->obj, name) : NULL;

	if (p && bpf_program__autoload(p))
		bpf_program__set_type(p, BPF_PROG_TYPE_SOCKET_FILTER);
}

/*
 * Opens and loads the main object; -EAGAIN when its fast path did not load (the next call
 * loads the classic tracepoints only), else 0 or -errno, said on stderr.
 */
static int session_load(struct session *s, struct session_opts *o)
{
	bool fast;
	int err;

	vmexit_bpf__destroy(s->skel);
	s->skel = vmexit_bpf__open();
	if (!s->skel) {
		err = -errno;
		fprintf(stderr, "vmexit: cannot open the BPF object: %s\n", strerror(-err));
		return err;
	}
	set_tunables(s, o);
	choose_programs(s, o);
	fast = bpf_program__autoload(s->skel->progs.kvm_exit_fast) ||
	       bpf_program__autoload(s->skel->progs.kvm_exit_direct) ||
	       bpf_program__autoload(s->skel->progs.kvm_entry_fast);
	test_refusal(s->skel);
	refused_prog[0] = 0;
	err = vmexit_bpf__load(s->skel);
	/*
	 * Which one failed, kvm_run's keys or the fast path, as libbpf named it (refused_prog).
	 * Another program, and neither is to blame; none named (a failure before the programs'
	 * loads), the fast path goes first (as before run_keys), and the next load tells.
	 */
	if (err && s->skel->rodata->run_keys &&
	    (refused(s->skel->progs.kvm_run_fpu_keyed) || (!refused_prog[0] && !fast))) {
		s->run_keys_err = err;
		fprintf(stderr, "vmexit: warning: keys from kvm_run do not load (%s): taking them "
			"from the key programs\n", strerror(-err));
		return -EAGAIN;
	}
	if (err && fast && (!refused_prog[0] || refused(s->skel->progs.kvm_exit_direct) ||
			    refused(s->skel->progs.kvm_exit_fast) ||
			    refused(s->skel->progs.kvm_entry_fast))) {
		hooks_exit_fast_refused(&s->hooks, s->skel, err,
					refused(s->skel->progs.kvm_exit_direct));
		return -EAGAIN;
	}
	if (err) {
		fprintf(stderr, "vmexit: cannot load the BPF programs: %s (run with -v for the "
			"verifier log)\n", strerror(-err));
		if (o->split)
			fprintf(stderr, "vmexit: --split needs BTF tracepoints (tp_btf, Linux 5.5+): "
				"try without it\n");
	}
	return err;
}

/*
 * Why this session's kvm_exit must be the classic tracepoint, or NULL. --by key's interrupt
 * vectors on VMX come from KVM's own cache on the fast path (bpf/vmx_vector.bpf.h); the RIP
 * does not (bpf/exit_read.bpf.h, vcpu_exit_rip()).
 */
static const char *classic_needed(const struct session_opts *o)
{
	if (o->stream)
		return "a stream needs the classic record's fields";
	/* SVM's and arm64's fast path read the RIP where the record does (bpf/exit_read.bpf.h). */
	if (o->key_mode == KEY_MODE_RIP && !access("/sys/module/kvm_intel", F_OK))
		return "--by rip on VMX needs the classic record's RIP: KVM reads it lazily "
		       "(a VMREAD) and has it cached at kvm_exit for no exit reason";
	return NULL;
}

int session_open(struct session *s, struct session_opts *o)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->child_go_fd = -1;
	s->child_exec_fd = -1;
	verbose = o->verbose;
	libbpf_set_print(print_libbpf);

	if (o->command) {
		err = command_fork(s, o->command);
		if (err) {
			fprintf(stderr, "vmexit: cannot start '%s': %s\n", o->command[0],
				strerror(-err));
			return err;
		}
	}

	startup_mark("session start");
	/* Only commands that load BPF objects hold the heap: report and the rest never release it. */
	startup_heap_hold();
	/* The check window runs while the main object is opened and loaded. */
	s->hooks.want_rip = o->key_mode == KEY_MODE_RIP;
	s->hooks.want_vector = o->key_mode == KEY_MODE_DEVICE;
	hooks_check_start(&s->hooks, classic_needed(o), o->check_hooks ? 2.0 : 0.3,
			  o->check_hooks);
	/* Its fast path did not load where the check's did (kvm_exit_direct, then the helper
	 * calls' kvm_exit_fast, when libbpf names neither), or kvm_run's keys did not: reload
	 * without it (each refusal is kept, so at most three times). */
	for (int i = 0; (err = session_load(s, o)) == -EAGAIN && i < 3; i++)
		;
	startup_mark("main open and load");
	if (err)
		goto fail;
	err = fill_filters(s, o);
	if (err) {
		fprintf(stderr, "vmexit: cannot set filters: %s\n", strerror(-err));
		goto fail;
	}
	err = map_cells(s);
	if (err)
		goto fail;
	hooks_check_finish(&s->hooks);
	err = attach_in_order(&s->hooks, s->skel);
	if (err)
		goto fail;
	startup_mark("attach");
	/* Started idle: the check waits for exits to judge the fast path (fast_switch.h). */
	if (!fast_switch_wanted(&s->hooks, s->skel) || fast_switch_start(&s->hooks, s->skel,
									 verbose))
		/* Off the critical path: tracing starts while the check's programs are detached. */
		hooks_check_release(&s->hooks, verbose);
	/* --check-hooks asked a question: its answer is said without -v too. */
	if (verbose || o->check_hooks)
		hooks_print(&s->hooks, !verbose, stderr);
	return 0;
fail:
	session_close(s);
	return err ? err : -EINVAL;
}

int session_filter_pids(struct session *s, const int *add, int nr_add, const int *del,
			int nr_del)
{
	int fd = bpf_map__fd(s->skel->maps.pid_filter), err = 0;
	__u8 one = 1;

	for (int i = 0; i < nr_del; i++) {
		__u32 pid = del[i];

		if (bpf_map_delete_elem(fd, &pid) && errno != ENOENT && !err)
			err = -errno;
	}
	for (int i = 0; i < nr_add; i++) {
		__u32 pid = add[i];

		if (bpf_map_update_elem(fd, &pid, &one, BPF_ANY) && !err)
			err = -errno;
	}
	/* After the map update (a syscall: ordered before this store), so that a thread that
	 * sees the new generation finds its pid. */
	if (nr_add)
		__atomic_store_n(&s->skel->bss->filter_gen, s->skel->bss->filter_gen + 1,
				 __ATOMIC_RELEASE);
	return err;
}

int session_unwanted_vmms(struct session *s, int *pids, int max)
{
	int fd = bpf_map__fd(s->skel->maps.unwanted_vmms), n = 0, nr_gone = 0;
	__u32 key, next, gone[64];
	bool first = true;

	while (n < max && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (kill((pid_t)key, 0) && errno == ESRCH) {
			/* Forgotten after the walk: a deleted key would restart it. */
			if (nr_gone < (int)(sizeof(gone) / sizeof(gone[0])))
				gone[nr_gone++] = key;
			continue;
		}
		pids[n++] = (int)key;
	}
	for (int i = 0; i < nr_gone; i++)
		bpf_map_delete_elem(fd, &gone[i]);
	return n;
}

__u32 session_nr_cells(const struct session *s)
{
	__u32 n = __atomic_load_n(&s->skel->bss->next_cell, __ATOMIC_ACQUIRE);

	return n < s->max_cells ? n : s->max_cells;
}

const struct cell *session_cell_at(void *session, __u32 i)
{
	struct session *s = session;

	return cell_window_at(&s->win, i);
}

void session_release_cell(void *session, __u32 idx)
{
	static const struct cell zero;
	struct session *s = session;

	/* Zeroed through the syscall: the mapping stays read-only, so no stray write of ours can
	 * reach a cell that is in use. No thread writes this one: its owner has exited. */
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.cells), &idx, &zero, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->skel->maps.free_cells), NULL, &idx, BPF_ANY)) {
		s->cells_leaked++;
		return;
	}
	s->cells_freed++;
}

void session_cell_counts(const struct session *s, struct cell_counts *c)
{
	c->handed_out = __atomic_load_n(&s->skel->bss->next_cell, __ATOMIC_RELAXED);
	if (c->handed_out > s->max_cells)
		c->handed_out = s->max_cells;
	c->reused = __atomic_load_n(&s->skel->bss->cells_reused, __ATOMIC_RELAXED);
	c->freed = s->cells_freed;
	c->leaked = s->cells_leaked;
}

/* What the kernel skipped: the recursion misses of every program of ours it runs. */
static __u64 programs_skipped(const struct session *s)
{
	struct bpf_program *p;
	__u64 n = 0;

	bpf_object__for_each_program(p, s->skel->obj) {
		struct bpf_prog_info info;
		int fd = bpf_program__fd(p);

		if (fd >= 0 && !bpf_prog_info_read(fd, &info))
			n += info.recursion_misses;
	}
	return n;
}

void session_lost(const struct session *s, __u64 lost[NR_LOST])
{
	for (int i = 0; i < NR_LOST; i++)
		lost[i] = __atomic_load_n(&s->skel->bss->lost[i], __ATOMIC_RELAXED);
	lost[LOST_BPF_SKIPPED] = programs_skipped(s);
}

void session_start_counting(struct session *s)
{
	__atomic_store_n(&s->skel->bss->counting, 1, __ATOMIC_RELEASE);
}

void session_new_epoch(struct session *s)
{
	__atomic_store_n(&s->skel->bss->epoch, s->skel->bss->epoch + 1, __ATOMIC_RELEASE);
}

__u32 session_epoch(const struct session *s)
{
	return __atomic_load_n(&s->skel->bss->epoch, __ATOMIC_ACQUIRE);
}

int session_proc_args(void *session, __u32 tgid, char *buf, size_t len)
{
	struct session *s = session;
	struct proc_args pa;

	if (!s->skel || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.procs), &tgid, &pa))
		return -ENOENT;
	if (pa.len > sizeof(pa.args) || pa.len > len)
		return -EINVAL;
	memcpy(buf, pa.args, pa.len);
	return (int)pa.len;
}

int session_progs(const struct session *s, struct bpf_program **progs, int max)
{
	const struct bpf_object_skeleton *sk = s->skel->skeleton;
	int n = 0;

	for (int i = 0; i < sk->prog_cnt && n < max; i++) {
		struct bpf_program *p = *sk->progs[i].prog;

		/* The fast pair, which a run started idle may attach later (fast_switch.h). */
		if (*sk->progs[i].link || (fast_switch_pending(&s->hooks) &&
					   (p == hooks_exit_fast_prog(&s->hooks, s->skel) ||
					    p == s->skel->progs.kvm_entry_fast)))
			progs[n++] = p;
	}
	return n;
}

void session_close(struct session *s)
{
	struct perf_hand_off off = { .done_fd = -1 };

	if (s->child_go_fd >= 0) {
		close(s->child_go_fd);	/* an unstarted child reads EOF and exits */
		s->child_go_fd = -1;
		if (s->child)
			waitpid(s->child, NULL, 0);
		s->child = 0;
	}
	if (s->child_exec_fd >= 0)
		close(s->child_exec_fd);
	s->child_exec_fd = -1;
	if (s->cells)
		munmap(s->cells, s->cells_len);
	s->cells = NULL;
	cell_window_free(&s->win);
	fast_switch_stop(&s->hooks);
	if (s->skel) {
		const struct bpf_object_skeleton *sk = s->skel->skeleton;
		struct bpf_link **links[72];
		int n = hooks_check_links(&s->hooks, links, 8);
		int link_fds[72 + 5], n_fds = 0, held;

		/* Nothing is read any more: every program at once, not one grace period each, and
		 * the perf events' grace period in a process of its own (perf_hand_off.h). */
		for (int i = 0; i < sk->prog_cnt && n < 72; i++)
			links[n++] = sk->progs[i].link;
		for (int i = 0; i < n; i++)
			if (*links[i])
				link_fds[n_fds++] = bpf_link__fd(*links[i]);
		/* The check's too, should its thread still hold them (hooks_check_links() then
		 * gives none). */
		n_fds += hooks_check_link_fds(&s->hooks, link_fds + n_fds, 72 + 5 - n_fds);
		held = perf_events_hand_off(&off, link_fds, n_fds);
		if (verbose && held > 0)
			fprintf(stderr, "vmexit: end: %d perf events left to vmexit-release (pid %d) "
				"to close\n", held, off.pid);
		else if (held < 0)
			fprintf(stderr, "vmexit: end: cannot start vmexit-release (%s): closing the "
				"perf events here\n", strerror(-held));
		links_destroy(links, n);
	}
	vmexit_bpf__destroy(s->skel);
	s->skel = NULL;
	hooks_free(&s->hooks);
	perf_hand_off_done(&off);
}
