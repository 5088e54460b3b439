// SPDX-License-Identifier: GPL-2.0
/*
 * What a userspace exit costs under `vmexit stat`, against its floor and its peer, on this host:
 * the bundled guest's KVM_EXIT_IO exits, alone, under empty BPF programs on the same hooks
 * (bench/floor_progs), under programs that only time each exit there (floor_progs --timed: a
 * clock read at both ends, the start kept per CPU, summed; "timing alone", the least any
 * timing tracer pays, BTF-enabled hooks only), the same with each exit's port read from
 * kvm_run at the end of the KVM_RUN before it, as vmexit's --by key does where kvm_exit never
 * fires ("timing + key", floor_progs --timed-key: where the kernel lets a program type the
 * vCPU), under vmexit, under `vmexit stat --by key` (a port per IO
 * exit), and under bpftrace's VMM-time histogram on the same hooks, the cases
 * alternating for several rounds. Two figures per case and round:
 *  - BPF run time per user exit: the kernel's own accounting (BPF_ENABLE_STATS) of the
 *    tracer's programs over the runs of its kvm_userspace_exit program (other VMs of the host
 *    fire the hooks too: the programs' own count is the denominator), in three sums: the
 *    user-exit hooks' programs (kvm_userspace_exit and the KVM_RUN hook's: what bpftrace's
 *    script has too, the like-for-like comparison), the kernel-exit pair's (kvm_exit and
 *    kvm_entry: they fire for every exit on a hardware KVM host, the nested beds' included,
 *    never on a host whose kvm_exit is silent), and the others (the keys' raw tracepoints);
 *  - end to end: the guest's CPU time (user + system, its rusage) per exit over alone, with the
 *    statistics off (they cost two clock reads per program run). CPU time, not wall time: time
 *    the guest waits for a CPU busy with other jobs does not count.
 * Medians of the rounds (end to end: of each round's difference to that round's alone, which
 * takes the host's drift out), and the ratios against the floor and bpftrace. Each round
 * starts with the next case, so that none always runs first after a tracer's start or last.
 * The end-to-end difference is small against the guest's own CPU time per exit, which other
 * jobs on the host move: the quartiles of the rounds' differences say whether the target is
 * met, missed, or cannot be told on this host (the quartile ranges overlap the target).
 * Nothing is asserted.
 * Each tracer starts while a slow warm-up VM makes exits (as bench/bed_overhead.sh does): where
 * kvm_exit fires, vmexit's start-up check judges the fast path on them and is gone before any
 * timed guest; where it does not, vmexit says the check waits for exits, which cost a user exit
 * nothing. The warm-up VM is stopped before the timed guests, in every case alike.
 * Runs $VMEXIT_BIN (bench/run.sh sets it) and the guest and bench/floor_progs next to it;
 * VMEXIT_BENCH_ROUNDS (default 11), VMEXIT_BENCH_EXITS (default 30000: fewer in an emulated
 * bed, bench/bed_user_exits.sh) and VMEXIT_BENCH_CPU (pin the guest to that CPU: fewer
 * migrations, steadier CPU time) for a longer, shorter or steadier run.
 */
#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bpf_run_stats.h"
#include "bench_args.h"

#define EXITS		30000	/* per guest; VMEXIT_BENCH_EXITS */
#define ROUNDS		41	/* at most; VMEXIT_BENCH_ROUNDS, default 11 */
#define MAX_PROGS	32
#define TARGET_BPF	0.40	/* vmexit/bpftrace, BPF run time per user exit (issue 33) */
#define TARGET_E2E	0.40	/* vmexit/bpftrace, end to end per exit */

/*
 * C_TIMED: the least a program timing each exit to the VMM costs (floor_progs --timed).
 * C_TIMED_KEY: that, and each exit's key read from kvm_run at the end of its KVM_RUN
 * (floor_progs --timed-key): what a key costs with no program on kvm_pio.
 */
enum bench_case { C_ALONE, C_FLOOR, C_TIMED, C_TIMED_KEY, C_VMEXIT, C_KEYS, C_BPFTRACE,
		  NR_CASES };

static const char *const case_name[NR_CASES] = {
	[C_ALONE] = "alone",
	[C_FLOOR] = "empty programs",
	[C_TIMED] = "timing alone",
	[C_TIMED_KEY] = "timing + key",
	[C_VMEXIT] = "vmexit stat",
	[C_KEYS] = "stat --by key",
	[C_BPFTRACE] = "bpftrace",
};

/* One program of a tracer: summed over the rounds' stats runs. */
struct prog_sum {
	char name[BPF_OBJ_NAME_LEN];
	double ns_per_exit[ROUNDS], runs_per_exit[ROUNDS];
};

struct case_res {
	double cpu[ROUNDS];	/* guest CPU ns per exit, statistics off */
	double bpf[ROUNDS];	/* BPF run time ns per user exit: the user-exit hooks' programs */
	double pair[ROUNDS];	/* the same of the kernel-exit pair's programs */
	double other[ROUNDS];	/* the same of the rest (keys) */
	int nr_cpu, nr_bpf;
	struct prog_sum progs[MAX_PROGS];
	int nr_progs;
};

struct tracer {
	pid_t pid;
	FILE *out;		/* its stderr (stdout for bpftrace), read until the marker */
	int fds[MAX_PROGS];
	struct bpf_prog_info before[MAX_PROGS];
	int nr;
};

static int rounds = 11;
static int exits = EXITS;	/* VMEXIT_BENCH_EXITS */
/* Whether vmexit's start-up check was still waiting for exits once it was attached. */
static bool check_kept;
/* vmexit's -v hooks lines at its first start (plain stat's, then --by key's): the output's. */
static char hook_lines[2][1024];
static int hook_case = -1;	/* which of them tracer_start fills: 0, 1, or none */
static int guest_cpu = -1;	/* VMEXIT_BENCH_CPU */
static char vmexit_bin[PATH_MAX], guest_bin[PATH_MAX], floor_bin[PATH_MAX];
/* vmexit's hooks (its -v lines), for the floor and bpftrace. */
static char run_hook[16] = "fpu", exit_hook[16] = "classic", user_hook[16] = "classic";
static const char *bpftrace_bin;

/* The timing-alone programs are BTF-enabled ones only (floor_progs --timed), as vmexit's mostly. */
static bool timed_hooks(void)
{
	return !strcmp(user_hook, "btf") && (!strcmp(run_hook, "fentry") ||
					     !strcmp(run_hook, "fpu-btf"));
}

/*
 * Timing + key: the key is read at kvm_fpu's put, and the vCPU typed by a vmlinux type (Linux
 * 6.2+, struct kvm_vcpu in vmlinux's BTF): a kernel that refuses the program leaves the case
 * out, with its reason.
 */
static bool keyed_refused;

static bool keyed_hooks(void)
{
	return timed_hooks() && !strcmp(run_hook, "fpu-btf") && !keyed_refused;
}

/* The bpftrace script: VMM time as a histogram, ended at the hook vmexit ends it at. */
static const char *bpftrace_script(void)
{
	if (!strcmp(run_hook, "fentry"))
		return "tracepoint:kvm:kvm_userspace_exit { @s[tid] = nsecs; }\n"
		       "kfunc:kvm_arch_vcpu_ioctl_run /@s[tid]/ { @h = hist(nsecs - @s[tid]); "
		       "delete(@s[tid]); }";
	if (!strcmp(run_hook, "ioctl"))
		return "tracepoint:kvm:kvm_userspace_exit { @s[tid] = nsecs; }\n"
		       "tracepoint:syscalls:sys_enter_ioctl /args->cmd == 0xae80 && @s[tid]/ "
		       "{ @h = hist(nsecs - @s[tid]); delete(@s[tid]); }";
	return "tracepoint:kvm:kvm_userspace_exit { @s[tid] = nsecs; }\n"
	       "tracepoint:kvm:kvm_fpu /args->load && @s[tid]/ { @h = hist(nsecs - @s[tid]); "
	       "delete(@s[tid]); }";
}

/*
 * Starts argv with the stream it reports on in a pipe; returns once a line has held marker and
 * one has held also (if given), in either order.
 */
/* The last line a tracer printed while starting: why it did not, when it did not. */
static char tracer_last[512];

static int tracer_start(struct tracer *t, char *const argv[], bool on_stdout, const char *marker,
			const char *also)
{
	bool seen_marker = false, seen_also = !also;
	char line[512];
	int p[2];

	memset(t, 0, sizeof(*t));
	if (pipe(p))
		return -errno;
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (!t->pid) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(p[1], on_stdout ? 1 : 2);
		dup2(devnull, on_stdout ? 2 : 1);
		close(p[0]);
		close(p[1]);
		execv(argv[0], argv);
		fprintf(on_stdout ? stdout : stderr, "cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	t->out = fdopen(p[0], "r");
	while (t->out && fgets(line, sizeof(line), t->out)) {
		const char *h = strstr(line, "hooks: KVM_RUN ");

		if (strstr(line, "hooks: userspace exit "))
			snprintf(user_hook, sizeof(user_hook), "%s",
				 strstr(line, "tp_btf") ? "btf" : "classic");
		if (strstr(line, "hooks: kvm_exit "))
			snprintf(exit_hook, sizeof(exit_hook), "%s",
				 strstr(line, "tp_btf") ? "fast" : "classic");
		if (h) {
			h += strlen("hooks: KVM_RUN ");
			if (!strncmp(h, "fentry", 6))
				snprintf(run_hook, sizeof(run_hook), "fentry");
			else if (!strncmp(h, "tp_btf/kvm_fpu", 14))
				snprintf(run_hook, sizeof(run_hook), "fpu-btf");
			else if (!strncmp(h, "kvm:kvm_fpu", 11))
				snprintf(run_hook, sizeof(run_hook), "fpu");
			else if (!strncmp(h, "syscalls", 8))
				snprintf(run_hook, sizeof(run_hook), "ioctl");
		}
		if (hook_case >= 0 && strstr(line, "vmexit: hooks: ")) {
			char *l = hook_lines[hook_case];
			size_t n = strlen(l);

			snprintf(l + n, sizeof(hook_lines[0]) - n, "    %s", line);
		}
		if (strstr(line, "start-up check kept until exits begin"))
			check_kept = true;
		snprintf(tracer_last, sizeof(tracer_last), "%s", line);
		seen_marker |= strstr(line, marker) != NULL;
		seen_also |= also && strstr(line, also);
		if (seen_marker && seen_also)
			return 0;
	}
	fprintf(stderr, "bench_user_exits: %s did not start\n", argv[0]);
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	return -1;
}

static int tracer_stop(struct tracer *t)
{
	char buf[4096];
	int st;

	struct pollfd p = { .fd = fileno(t->out), .events = POLLIN };
	int quiet = 0;

	for (int i = 0; i < t->nr; i++)
		close(t->fds[i]);
	kill(t->pid, SIGINT);
	/*
	 * Whatever it prints at the end (bpftrace's histogram), then EOF. bpftrace 0.17 once slept
	 * on through the SIGINT (2026-12-01, this host): after 10 s of silence it is sent again,
	 * and after 30 s the tracer is killed and the case fails. What stdio buffered is dropped.
	 */
	for (;;) {
		int n = poll(&p, 1, 10000);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && ++quiet < 3) {
			kill(t->pid, SIGINT);
			continue;
		}
		if (n <= 0 || read(p.fd, buf, sizeof(buf)) <= 0)
			break;
	}
	if (quiet >= 3) {
		fprintf(stderr, "bench_user_exits: pid %d did not end within 30 s of SIGINT: killed\n",
			(int)t->pid);
		kill(t->pid, SIGKILL);
	}
	fclose(t->out);
	if (waitpid(t->pid, &st, 0) != t->pid)
		return -1;
	return quiet < 3 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* The BPF programs the tracer holds, from its fds (/proc/PID/fdinfo says prog_id). */
static void tracer_progs(struct tracer *t)
{
	char dir[64], path[320], line[128];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", t->pid);
	d = opendir(dir);
	while (d && (e = readdir(d)) && t->nr < MAX_PROGS) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned int id;
			int fd;

			if (sscanf(line, "prog_id: %u", &id) != 1)
				continue;
			/* Gone meanwhile: vmexit drops its start-up check's programs. */
			fd = bpf_prog_get_fd_by_id(id);
			for (int i = 0; fd >= 0 && i < t->nr; i++) {
				struct bpf_prog_info a = {};

				if (!bpf_prog_info_read(t->fds[i], &a) && a.id == id) {
					close(fd);
					fd = -1;
				}
			}
			if (fd >= 0)
				t->fds[t->nr++] = fd;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

/* Starts the guest with args after its binary's name (NULL-ended): its pid, or -1. */
static pid_t guest_start(char *const args[])
{
	char *argv[16] = { guest_bin };
	pid_t pid;

	for (int i = 0; args[i] && i < 14; i++)
		argv[i + 1] = args[i];
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		/* Its summary line on stderr, once per run, would bury the figures. */
		if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
			_exit(127);
		if (guest_cpu >= 0) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(guest_cpu, &set);
			if (sched_setaffinity(0, sizeof(set), &set))
				_exit(126);
		}
		execv(guest_bin, argv);
		_exit(127);
	}
	return pid;
}

/*
 * The warm-up VM while a tracer starts: an IO exit each 2 ms of its VMM's sleep, enough for
 * vmexit's start-up check (hooks.h wants 100 exits) without taking the CPU from the tracer.
 */
static pid_t warm_start(void)
{
	char *args[] = { "--vcpus", "1", "--io", "5", "--io-sleep-us", "2000", "--seconds", "1800",
			 NULL };

	return guest_start(args);
}

static void warm_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Runs the guest: its CPU ns per exit, or < 0. */
static double guest_run(void)
{
	char io[16];
	char *args[] = { "--vcpus", "1", "--io", io, NULL };
	struct rusage ru;
	pid_t pid;
	int st;

	snprintf(io, sizeof(io), "%d", exits);
	pid = guest_start(args);
	if (pid < 0)
		return -1;
	if (wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_user_exits: %s --vcpus 1 --io %s failed: run it alone to see "
			"why\n", guest_bin, io);
		return -1;
	}
	/* io exits and the done port's */
	return ((ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
		(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3) / (exits + 1);
}

static bool is_user_exit_prog(const char *name)
{
	return !strncmp(name, "kvm_userspace", 13) || !strncmp(name, "floor_user_exit", 15);
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * The user-exit hooks' programs: kvm_userspace_exit's and the KVM_RUN hook's that ends the exit,
 * vmexit's (kvm_run_*), the floor's (floor_run_*) and bpftrace's, which names a program after
 * its probe's last part, cut to 15 characters (kvm_fpu, kvm_arch_vcpu_i, sys_enter_ioctl).
 */
static bool is_user_hook_prog(const char *name)
{
	return is_user_exit_prog(name) || starts(name, "kvm_run_") || starts(name, "floor_run_") ||
	       !strcmp(name, "kvm_fpu") || starts(name, "kvm_arch_vcpu_i") ||
	       !strcmp(name, "sys_enter_ioctl");
}

/*
 * Programs on kvm_exit and kvm_entry (vmexit's and the floor's: bpftrace's script has none) run
 * for the guest's exits too where those fire (not on every host): apart from the user-exit sum.
 */
static bool is_kernel_exit_prog(const char *name)
{
	return !strncmp(name, "kvm_exit", 8) || !strncmp(name, "kvm_entry", 9) ||
	       !strncmp(name, "floor_exit", 10) || !strncmp(name, "floor_entry", 11);
}

static struct prog_sum *prog_sum_get(struct case_res *r, const char *name)
{
	for (int i = 0; i < r->nr_progs; i++)
		if (!strcmp(r->progs[i].name, name))
			return &r->progs[i];
	if (r->nr_progs == MAX_PROGS)
		return NULL;
	snprintf(r->progs[r->nr_progs].name, BPF_OBJ_NAME_LEN, "%s", name);
	return &r->progs[r->nr_progs++];
}

/* A stats run: the guest again, the tracer's programs' run time over it. */
static int stats_run(struct tracer *t, struct case_res *r, int round)
{
	struct bpf_prog_info after[MAX_PROGS];
	double user = 0, pair = 0, other = 0, user_runs = 0;
	int stats = bpf_run_stats_enable();

	if (stats < 0) {
		fprintf(stderr, "bench_user_exits: cannot turn on BPF run-time statistics: %s\n",
			strerror(-stats));
		return -1;
	}
	for (int i = 0; i < t->nr; i++)
		bpf_prog_info_read(t->fds[i], &t->before[i]);
	if (guest_run() < 0) {
		if (stats > 0)
			close(stats);
		return -1;
	}
	for (int i = 0; i < t->nr; i++)
		bpf_prog_info_read(t->fds[i], &after[i]);
	if (stats > 0)
		close(stats);
	for (int i = 0; i < t->nr; i++) {
		double ns = after[i].run_time_ns - t->before[i].run_time_ns;

		if (is_kernel_exit_prog(after[i].name))
			pair += ns;
		else if (is_user_hook_prog(after[i].name))
			user += ns;
		else
			other += ns;
		if (is_user_exit_prog(after[i].name))
			user_runs += after[i].run_cnt - t->before[i].run_cnt;
	}
	if (user_runs < exits) {
		fprintf(stderr, "bench_user_exits: the user-exit program ran %.0f times for %d exits\n",
			user_runs, exits + 1);
		return -1;
	}
	for (int i = 0; i < t->nr; i++) {
		double runs = after[i].run_cnt - t->before[i].run_cnt;
		struct prog_sum *p;

		if (!runs)
			continue;
		p = prog_sum_get(r, after[i].name);
		if (!p)
			continue;
		p->ns_per_exit[round] = (after[i].run_time_ns - t->before[i].run_time_ns) / user_runs;
		p->runs_per_exit[round] = runs / user_runs;
	}
	r->pair[r->nr_bpf] = pair / user_runs;
	r->other[r->nr_bpf] = other / user_runs;
	r->bpf[r->nr_bpf++] = user / user_runs;
	return 0;
}

static int start_case(enum bench_case c, struct tracer *t)
{
	char *vmexit_argv[] = { vmexit_bin, "stat", "-v", "3600", NULL };
	char *keys_argv[] = { vmexit_bin, "stat", "-v", "--by", "key", "3600", NULL };
	char *floor_argv[] = { floor_bin, "--exit", exit_hook, "--run", run_hook, "--user",
			       user_hook, NULL, NULL };
	char *bpftrace_argv[] = { (char *)bpftrace_bin, "-e", (char *)bpftrace_script(), NULL };

	switch (c) {
	case C_VMEXIT:
	case C_KEYS:
		hook_case = c == C_KEYS;
		if (hook_lines[hook_case][0])
			hook_case = -1;
		/*
		 * -v says "detached" once only vmexit's own programs are attached (the warm-up VM's
		 * kvm_exits judged the fast path), or "kept until exits begin" on a host whose
		 * kvm_exit made none: the check then waits on kvm_exit, which costs a user exit
		 * nothing. Its hooks' lines may come before or after.
		 */
		return tracer_start(t, c == C_KEYS ? keys_argv : vmexit_argv, false,
				    "start-up check ", "hooks: userspace exit ");
	case C_TIMED:
	case C_TIMED_KEY:
		floor_argv[7] = c == C_TIMED ? "--timed" : "--timed-key";
		/* fall through */
	case C_FLOOR:
		hook_case = -1;
		return tracer_start(t, floor_argv, false, "floor: attached", NULL);
	case C_BPFTRACE:
		hook_case = -1;
		return tracer_start(t, bpftrace_argv, true, "Attaching", NULL);
	default:
		return 0;
	}
}

static int run_case(enum bench_case c, struct case_res *r, int round)
{
	pid_t warm = warm_start();
	struct tracer t;
	double cpu;
	int err = 0;

	if (warm < 0) {
		fprintf(stderr, "bench_user_exits: cannot start the warm-up guest %s\n", guest_bin);
		return -1;
	}
	err = start_case(c, &t);
	warm_stop(warm);
	if (err && c == C_TIMED_KEY) {
		keyed_refused = true;
		printf("note: no timing + key case on this kernel: %s", tracer_last);
		return 0;
	}
	if (err)
		return -1;
	if (c != C_ALONE) {
		/* Settled: bpftrace's and the floor's first runs out of the way. */
		usleep(300 * 1000);
		tracer_progs(&t);
	}
	cpu = guest_run();
	if (cpu < 0)
		err = -1;
	else
		r->cpu[r->nr_cpu++] = cpu;
	if (c != C_ALONE) {
		if (!err)
			err = stats_run(&t, r, round);
		if (tracer_stop(&t) && !err) {
			fprintf(stderr, "bench_user_exits: %s failed at its end\n", case_name[c]);
			err = -1;
		}
	}
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[ROUNDS];

	if (!n)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The q-th quartile (1, 2, 3) of v: the median of the values below or above the median. */
static double quartile(const double *v, int n, int q)
{
	double s[ROUNDS];

	if (!n)
		return 0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	if (q == 2 || n < 3)
		return median(s, n);
	return q == 1 ? median(s, n / 2) : median(s + (n + 1) / 2, n / 2);
}

/* Each round's CPU time per exit over the same round's alone, as quartiles q1, median, q3. */
static void e2e_paired(const struct case_res *r, const struct case_res *alone, double q[3])
{
	double d[ROUNDS];
	int n = r->nr_cpu < alone->nr_cpu ? r->nr_cpu : alone->nr_cpu;

	for (int i = 0; i < n; i++)
		d[i] = r->cpu[i] - alone->cpu[i];
	for (int i = 0; i < 3; i++)
		q[i] = quartile(d, n, i + 1);
}

static double least(const double *v, int n)
{
	double m = n ? v[0] : 0;

	for (int i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* a/b, or 0 when b is not positive (noise hid the overhead). */
static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/*
 * Whether the end-to-end target holds whatever the noise: against the quartiles of both cases'
 * differences (the middle half of the rounds), not only their medians.
 */
static void e2e_judge(const double v[3], const double b[3])
{
	const char *verdict = "cannot be told on this host (the quartile ranges straddle it)";

	if (b[0] > 0 && v[2] <= TARGET_E2E * b[0])
		verdict = "met beyond the noise";
	else if (v[0] > TARGET_E2E * b[2])
		verdict = "missed beyond the noise";
	printf("  end to end, vmexit's upper quartile against %.2fx bpftrace's lower: %s\n",
	       TARGET_E2E, verdict);
}

/* An optional number from the environment, in [lo, hi]; -1 with a message when it is not. */
static int env_int(const char *name, int lo, int hi, int *v)
{
	const char *s = getenv(name);
	char *end;
	long n;

	if (!s || !*s)
		return 0;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n < lo || n > hi) {
		fprintf(stderr, "bench_user_exits: %s=%s: want a number from %d to %d\n", name, s,
			lo, hi);
		return -1;
	}
	*v = (int)n;
	return 0;
}

/* Turned on host-wide by someone else: then they are on in the end-to-end runs too. */
static bool stats_already_on(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int on = 0;

	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = 0;
		fclose(f);
	}
	return on;
}

/* A file next to vmexit in its build directory; false when the path does not fit. */
static bool sibling(char *out, const char *dir, const char *name)
{
	return snprintf(out, PATH_MAX, "%s/%s", dir, name) < PATH_MAX;
}

int main(int argc, char **argv)
{
	const char *bin = getenv("VMEXIT_BIN") ? getenv("VMEXIT_BIN") : ".output/vmexit";
	static struct case_res res[NR_CASES];
	double alone, alone_min, bpf[NR_CASES], pair[NR_CASES], other[NR_CASES], e2e[NR_CASES];
	double e2e_min[NR_CASES];
	double q[NR_CASES][3] = {};
	char dir[PATH_MAX - 32], *slash;

	bench_args(argc, argv, "bench/bench_user_exits.c");

	/* One round suffices where the clock counts instructions (the VMX bed's Bochs). */
	if (env_int("VMEXIT_BENCH_ROUNDS", 1, ROUNDS, &rounds) ||
	    env_int("VMEXIT_BENCH_EXITS", 100, 1000000, &exits) ||
	    env_int("VMEXIT_BENCH_CPU", 0, CPU_SETSIZE - 1, &guest_cpu))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "bench_user_exits: needs root to load BPF programs\n");
		return 77;
	}
	snprintf(vmexit_bin, sizeof(vmexit_bin), "%s", bin);
	snprintf(dir, sizeof(dir), "%s", bin);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	if (!sibling(guest_bin, dir, "vmexit-guest") || !sibling(floor_bin, dir, "bench/floor_progs") ||
	    access(guest_bin, X_OK) || access(floor_bin, X_OK)) {
		fprintf(stderr, "bench_user_exits: no %s or %s: run make bench\n", guest_bin,
			floor_bin);
		return 1;
	}
	if (access("/dev/kvm", R_OK | W_OK)) {
		fprintf(stderr, "bench_user_exits: no /dev/kvm: the guest cannot run here\n");
		return 77;
	}
	bpftrace_bin = getenv("BPFTRACE");
	if (!bpftrace_bin && !access("/usr/bin/bpftrace", X_OK))
		bpftrace_bin = "/usr/bin/bpftrace";
	if (!bpftrace_bin && !access("/usr/local/bin/bpftrace", X_OK))
		bpftrace_bin = "/usr/local/bin/bpftrace";
	if (stats_already_on())
		printf("note: kernel.bpf_stats_enabled is on: the end-to-end figures include the "
		       "statistics' two clock reads per program run\n");
	/* vmexit first in the first round: it says which KVM_RUN hook the others use. */
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < NR_CASES; k++) {
			enum bench_case c = (C_VMEXIT + r + k) % NR_CASES;

			if ((c == C_BPFTRACE && !bpftrace_bin) || (c == C_TIMED && !timed_hooks()) ||
			    (c == C_TIMED_KEY && !keyed_hooks()))
				continue;
			if (run_case(c, &res[c], r))
				return 1;
		}
	}
	alone = median(res[C_ALONE].cpu, res[C_ALONE].nr_cpu);
	alone_min = least(res[C_ALONE].cpu, res[C_ALONE].nr_cpu);
	printf("user exits: the guest's %d KVM_EXIT_IO exits (1 vCPU", exits + 1);
	if (guest_cpu >= 0)
		printf(" pinned to CPU %d", guest_cpu);
	printf("), %d rounds of the cases in turn; hooks: KVM_RUN %s, kvm_userspace_exit %s, "
	       "kvm_exit/kvm_entry %s (vmexit's -v; the floor's the same)\n", rounds, run_hook,
	       user_hook, exit_hook);
	printf("  vmexit stat -v, its first start:\n%s  vmexit stat --by key -v:\n%s",
	       hook_lines[0], hook_lines[1]);
	if (check_kept)
		printf("note: vmexit's start-up check waited for kvm_exits (none during its start): "
		       "the kernel-exit pair is its classic one until the first timed guest's\n");
	printf("BPF ns per user exit, medians of the rounds: user hooks = kvm_userspace_exit's "
	       "and the KVM_RUN hook's programs (bpftrace's script has these alone: the "
	       "comparison with it); pair = kvm_exit/kvm_entry's (fire on every exit, a user exit's "
	       "too, where KVM traces them); other = the rest (keys' raw tracepoints)\n");
	printf("  %-16s %10s %8s %8s %10s %10s %19s\n", "case", "user hooks", "pair", "other",
	       "e2e ns", "(least)", "(quartiles)");
	for (int c = 0; c < NR_CASES; c++) {
		struct case_res *r = &res[c];

		if (!r->nr_cpu)
			continue;
		bpf[c] = median(r->bpf, r->nr_bpf);
		pair[c] = median(r->pair, r->nr_bpf);
		other[c] = median(r->other, r->nr_bpf);
		e2e_paired(r, &res[C_ALONE], q[c]);
		e2e[c] = q[c][1];
		e2e_min[c] = least(r->cpu, r->nr_cpu) - alone_min;
		if (c == C_ALONE)
			printf("  %-16s %10s %8s %8s %10.0f %10.0f   guest CPU ns per exit\n",
			       case_name[c], "-", "-", "-", alone, alone_min);
		else
			printf("  %-16s %10.0f %8.0f %8.0f %+10.0f %+10.0f %+9.0f..%+.0f\n",
			       case_name[c], bpf[c], pair[c], other[c], e2e[c], e2e_min[c], q[c][0],
			       q[c][2]);
		for (int i = 0; i < r->nr_progs; i++) {
			struct prog_sum *p = &r->progs[i];
			double ns = median(p->ns_per_exit, r->nr_bpf);
			double runs = median(p->runs_per_exit, r->nr_bpf);

			printf("      %-16s %6.0f ns per user exit, %.2f runs per user exit, %.0f ns "
			       "per run (%s)\n", p->name, ns, runs, runs > 0 ? ns / runs : 0,
			       is_kernel_exit_prog(p->name) ? "pair" :
			       is_user_hook_prog(p->name) ? "user hooks" : "other");
		}
	}
	/* End to end every program a tracer has counts: bpftrace has no kernel-exit pair. */
	printf("  (e2e: the guest's CPU time per exit over alone, statistics off: median, least, "
	       "quartiles of the rounds; it includes every program of the tracer, so where the "
	       "pair's ran (pair > 0 above) vmexit's e2e carries it and bpftrace's does not)\n");
	printf("  vmexit / empty programs: BPF user hooks %.2fx, pair %.2fx, end to end %.2fx\n",
	       ratio(bpf[C_VMEXIT], bpf[C_FLOOR]), ratio(pair[C_VMEXIT], pair[C_FLOOR]),
	       ratio(e2e[C_VMEXIT], e2e[C_FLOOR]));
	/* What --by key adds on user exits: all of its programs against all of plain stat's. */
	printf("  stat --by key / stat, BPF per user exit: all programs %.2fx (target <= 1.30) -> "
	       "%s; user hooks + other %.2fx, pair %.2fx; end to end %.2fx\n",
	       ratio(bpf[C_KEYS] + pair[C_KEYS] + other[C_KEYS],
		     bpf[C_VMEXIT] + pair[C_VMEXIT] + other[C_VMEXIT]),
	       ratio(bpf[C_KEYS] + pair[C_KEYS] + other[C_KEYS],
		     bpf[C_VMEXIT] + pair[C_VMEXIT] + other[C_VMEXIT]) <= 1.3 ? "met" : "NOT met",
	       ratio(bpf[C_KEYS] + other[C_KEYS], bpf[C_VMEXIT] + other[C_VMEXIT]),
	       ratio(pair[C_KEYS], pair[C_VMEXIT]), ratio(e2e[C_KEYS], e2e[C_VMEXIT]));
	/* What timing alone costs, before any counting: below it no timing tracer can go. */
	if (res[C_TIMED].nr_cpu)
		printf("  vmexit / timing alone (a clock read at both ends and the exit's start per "
		       "CPU, summed; no reason, no histogram): BPF user hooks %.2fx\n",
		       ratio(bpf[C_VMEXIT], bpf[C_TIMED]));
	else
		printf("  no timing-alone case: vmexit's hooks here are not both BTF-enabled (KVM_RUN "
		       "%s, kvm_userspace_exit %s)\n", run_hook, user_hook);
	/* What a key costs read from kvm_run, against what --by key pays for it now. */
	if (res[C_TIMED].nr_cpu && res[C_TIMED_KEY].nr_cpu)
		printf("  timing + key (each exit's port read from kvm_run at the end of the KVM_RUN "
		       "before it, no program on kvm_pio): %+.0f ns per user exit over timing alone, "
		       "%.2fx; "
		       "--by key adds %+.0f over stat\n", bpf[C_TIMED_KEY] - bpf[C_TIMED],
		       ratio(bpf[C_TIMED_KEY], bpf[C_TIMED]),
		       bpf[C_KEYS] + pair[C_KEYS] + other[C_KEYS] -
		       (bpf[C_VMEXIT] + pair[C_VMEXIT] + other[C_VMEXIT]));
	if (!bpftrace_bin) {
		printf("  no bpftrace here (tools/install-deps.sh): no peer to compare with\n");
		return 0;
	}
	/* Like with like: bpftrace's script has no kvm_exit/kvm_entry program. */
	printf("  vmexit / bpftrace, BPF on the user-exit hooks alone (like with like): %.2fx "
	       "(target <= %.2f) -> %s; with vmexit's pair and other programs too: %.2fx; "
	       "end to end %.2fx (target <= %.2f) -> %s\n",
	       ratio(bpf[C_VMEXIT], bpf[C_BPFTRACE]), TARGET_BPF,
	       bpf[C_BPFTRACE] > 0 && ratio(bpf[C_VMEXIT], bpf[C_BPFTRACE]) <= TARGET_BPF ?
	       "met" : "NOT met",
	       ratio(bpf[C_VMEXIT] + pair[C_VMEXIT] + other[C_VMEXIT], bpf[C_BPFTRACE]),
	       ratio(e2e[C_VMEXIT], e2e[C_BPFTRACE]), TARGET_E2E,
	       e2e[C_BPFTRACE] > 0 && ratio(e2e[C_VMEXIT], e2e[C_BPFTRACE]) <= TARGET_E2E ?
	       "met" : "NOT met");
	e2e_judge(q[C_VMEXIT], q[C_BPFTRACE]);
	printf("  empty programs / bpftrace: BPF user hooks %.2fx, end to end %.2fx\n",
	       ratio(bpf[C_FLOOR], bpf[C_BPFTRACE]), ratio(e2e[C_FLOOR], e2e[C_BPFTRACE]));
	if (!res[C_TIMED].nr_cpu)
		return 0;
	printf("  timing alone / bpftrace: BPF user hooks %.2fx\n",
	       ratio(bpf[C_TIMED], bpf[C_BPFTRACE]));
	/* vmexit times each exit and counts it: it cannot cost less than timing alone. */
	if (ratio(bpf[C_TIMED], bpf[C_BPFTRACE]) >= TARGET_BPF)
		printf("  note: timing alone already costs %.2fx bpftrace's here, at or above the "
		       "%.2f target: vmexit, which times each exit to the VMM and counts it, cannot "
		       "meet it on this host\n", ratio(bpf[C_TIMED], bpf[C_BPFTRACE]), TARGET_BPF);
	return 0;
}
