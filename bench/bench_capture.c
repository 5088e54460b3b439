// SPDX-License-Identifier: GPL-2.0
/*
 * Per-event capture against its peer, `perf record -e kvm:kvm_userspace_exit`: the bundled
 * guest makes N KVM_EXIT_IO exits untraced, under perf record, under `vmexit record`, `vmexit
 * stream` (the default lines) and `vmexit stream --json`, in turn, ROUNDS times. Per tracer:
 * what it costs the guest per exit (its vCPU loop's time, from its own --json line, and the
 * guest's CPU time, which holds the tracer's kernel work on its exits and, unlike time, not
 * the waits for a CPU of a busy host; each against the untraced run of the same round), the
 * tracer's CPU time while the guest ran and until it had written everything (from the moment
 * the guest is let go to the tracer's exit), and how many exits it captured against the count
 * the guest made (exits.IO) and the loss it reported. Then the same with one vCPU per CPU,
 * flat out, for the loss at the highest rate the guest reaches. Medians; ratios to perf's
 * figures of the same runs.
 *
 * Each tracer attaches with -p to the guest, stopped before its exec, and the guest is let go
 * once the tracer is tracing: perf started with its events disabled and enabled through its
 * control fifo (the ack says they are on); vmexit once it catches SIGTERM (bench_proc.h). So
 * neither's start-up (vmexit's verification) is in its figures. Outputs go to files in /tmp,
 * as a user's would. Figures are printed, not asserted; the exit status is 1 when a tracer
 * failed, or captured fewer exits than the guest made without reporting the rest as lost.
 * Needs perf (linux-perf). $VMEXIT_BIN as bench/run.sh sets it; the guest next to it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench_proc.h"
#include "bench_args.h"

#define ROUNDS		5
#define ROUNDS_MAX_RATE	3
#define IO_EXITS	100000
#define WAIT_S		60		/* for a tracer to attach */

enum tracer { T_NONE, T_PERF, T_RECORD, T_STREAM, T_JSON, NR_TRACERS };

static const char *const tracer_names[NR_TRACERS] = {
	[T_NONE] = "untraced", [T_PERF] = "perf record", [T_RECORD] = "vmexit record",
	[T_STREAM] = "vmexit stream", [T_JSON] = "stream --json",
};

struct run {
	double guest_s;			/* the slowest vCPU's loop */
	double guest_cpu_s;		/* the guest's CPU time, its exits' kernel work included */
	double cpu_s;			/* the tracer's, from the guest's start to its own end */
	long long made, captured, lost;
};

static char vmexit_bin[PATH_MAX], guest_bin[PATH_MAX], dir[64];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void path_in(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* CPU time of every thread of pid so far (ns), from /proc/PID/task/TID/schedstat. */
static long long cpu_ns(pid_t pid)
{
	char path[64], sub[384];
	long long sum = 0, ns;
	struct dirent *d;
	DIR *td;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	td = opendir(path);
	if (!td)
		return -1;
	while ((d = readdir(td))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s/schedstat", path, d->d_name);
		f = fopen(sub, "r");
		if (f && fscanf(f, "%lld", &ns) == 1)
			sum += ns;
		if (f)
			fclose(f);
	}
	closedir(td);
	return sum;
}

static bool alive(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == 0;
}

/* perf's events are on once it acks "enable" on its control fifo. */
static int perf_enable(pid_t perf)
{
	char ctl[96], ack[96], buf[16] = "";
	struct pollfd p;
	double t0 = now_s();
	int fd = -1, afd;

	path_in(ctl, sizeof(ctl), "ctl");
	path_in(ack, sizeof(ack), "ack");
	/* The ack fifo read-write: no hang-up before perf opens its end. */
	afd = open(ack, O_RDWR | O_CLOEXEC);
	if (afd < 0)
		return -1;
	while (fd < 0 && now_s() - t0 < WAIT_S && alive(perf)) {
		fd = open(ctl, O_WRONLY | O_NONBLOCK | O_CLOEXEC);	/* ENXIO: no reader yet */
		if (fd < 0)
			usleep(1000);
	}
	if (fd < 0 || write(fd, "enable\n", 7) != 7) {
		if (fd >= 0)
			close(fd);
		close(afd);
		return -1;
	}
	close(fd);
	p = (struct pollfd){ .fd = afd, .events = POLLIN };
	if (poll(&p, 1, WAIT_S * 1000) != 1 || read(afd, buf, sizeof(buf) - 1) <= 0 ||
	    strncmp(buf, "ack", 3)) {
		close(afd);
		return -1;
	}
	close(afd);
	return 0;
}

static int vmexit_tracing(pid_t pid)
{
	double t0 = now_s();

	while (now_s() - t0 < WAIT_S && alive(pid)) {
		if (catches_sigterm(pid) == 1)
			return 0;
		usleep(1000);
	}
	return -1;
}

/* The guest, stopped before its exec: its pid is the VMM's. Its stdout on *out. */
static pid_t guest_stopped(int vcpus, int *out)
{
	char io[24], nv[16];
	int fd[2], st;
	pid_t pid;

	if (pipe(fd))
		return -1;
	snprintf(io, sizeof(io), "%d", IO_EXITS);
	snprintf(nv, sizeof(nv), "%d", vcpus);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		raise(SIGSTOP);
		execl(guest_bin, guest_bin, "--io", io, "--vcpus", nv, "--json", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	*out = fd[0];
	if (waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
		close(fd[0]);
		return -1;
	}
	return pid;
}

static pid_t tracer_start(enum tracer t, pid_t guest)
{
	char gp[16], out[96], err[96], ctl[96], ack[96], control[220];
	const char *argv[16];
	int n = 0;
	pid_t pid;

	snprintf(gp, sizeof(gp), "%d", (int)guest);
	path_in(out, sizeof(out), "out");
	path_in(err, sizeof(err), "err");
	path_in(ctl, sizeof(ctl), "ctl");
	path_in(ack, sizeof(ack), "ack");
	snprintf(control, sizeof(control), "fifo:%s,%s", ctl, ack);
	if (t == T_PERF) {
		const char *a[] = { "perf", "record", "-D", "-1", "--control", control, "-e",
				    "kvm:kvm_userspace_exit", "-p", gp, "-o", out };

		memcpy(argv, a, sizeof(a));
		n = sizeof(a) / sizeof(a[0]);
	} else {
		argv[n++] = vmexit_bin;
		argv[n++] = t == T_RECORD ? "record" : "stream";
		if (t == T_RECORD) {
			argv[n++] = "--force";
			argv[n++] = "-o";
			argv[n++] = out;
		}
		if (t == T_JSON)
			argv[n++] = "--json";
		argv[n++] = "-p";
		argv[n++] = gp;
	}
	argv[n] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(t == T_STREAM || t == T_JSON ? out : "/dev/null",
			     O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0)
			_exit(127);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Sums `"KEY":<n>` in s (max instead of sum with take_max). */
static long long json_nums(const char *s, const char *key, bool take_max)
{
	long long v = 0;
	size_t kl = strlen(key);

	for (const char *p = strstr(s, key); p; p = strstr(p + kl, key)) {
		long long x = atoll(p + kl);

		v = take_max ? (x > v ? x : v) : v + x;
	}
	return v;
}

/* Lines of path with every needle in them. */
static long long count_lines(FILE *f, const char *a, const char *b)
{
	char line[4096];
	long long n = 0;

	while (fgets(line, sizeof(line), f))
		n += strstr(line, a) && (!b || strstr(line, b));
	return n;
}

/* The number that ends right before the first `what` in text. */
static int number_before(const char *text, const char *what, long long *n)
{
	const char *p = strstr(text, what);

	if (!p)
		return -1;
	while (p > text && p[-1] >= '0' && p[-1] <= '9')
		p--;
	*n = atoll(p);
	return 0;
}

/* The exits t captured (user exits, IO) and the loss it reported. */
static int captured(enum tracer t, struct run *r)
{
	char out[96], err[96], cmd[PATH_MAX + 160], text[4096] = "";
	FILE *f;
	size_t len;

	path_in(out, sizeof(out), "out");
	path_in(err, sizeof(err), "err");
	f = fopen(err, "r");
	if (!f)
		return -1;
	len = fread(text, 1, sizeof(text) - 1, f);
	text[len] = '\0';
	fclose(f);
	if (t == T_PERF) {
		/* "[ perf record: Captured and wrote 8.1 MB FILE (100001 samples) ]" */
		if (number_before(text, " samples)", &r->captured))
			return -1;
		r->lost = r->made - r->captured;
		return 0;
	}
	/* "vmexit: 100002 events, 0 lost" */
	if (number_before(text, " lost", &r->lost))
		return -1;
	if (t == T_RECORD) {
		snprintf(cmd, sizeof(cmd), "'%s' report -i '%s' --events --json", vmexit_bin, out);
		f = popen(cmd, "r");
	} else {
		f = fopen(out, "r");
	}
	if (!f)
		return -1;
	/* Only IO exits to the VMM: not the TSC offset writes of vCPU creation. */
	if (t == T_STREAM)
		r->captured = count_lines(f, " IO ", NULL);
	else
		r->captured = count_lines(f, "\"type\":\"user_exit\"", "\"reason_name\":\"IO\"");
	if (t == T_RECORD ? pclose(f) != 0 : fclose(f) != 0)
		return -1;
	return 0;
}

static double rusage_s(const struct rusage *ru)
{
	return ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 + ru->ru_stime.tv_sec +
	       ru->ru_stime.tv_usec * 1e-6;
}

static int run_once(enum tracer t, int vcpus, struct run *r)
{
	char buf[65536];
	size_t len = 0;
	long long cpu0 = 0;
	pid_t guest, tracer = 0;
	struct rusage ru;
	int out, st;
	ssize_t n;

	memset(r, 0, sizeof(*r));
	guest = guest_stopped(vcpus, &out);
	if (guest < 0)
		return -1;
	if (t != T_NONE) {
		tracer = tracer_start(t, guest);
		if (tracer < 0 || (t == T_PERF ? perf_enable(tracer) : vmexit_tracing(tracer))) {
			fprintf(stderr, "bench_capture: %s did not start (see %s/err)\n",
				tracer_names[t], dir);
			kill(guest, SIGKILL);
			kill(guest, SIGCONT);
			waitpid(guest, NULL, 0);
			if (tracer > 0) {
				kill(tracer, SIGKILL);
				waitpid(tracer, NULL, 0);
			}
			close(out);
			return -1;
		}
		cpu0 = cpu_ns(tracer);
	}
	kill(guest, SIGCONT);
	while ((n = read(out, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(out);
	if (wait4(guest, &st, 0, &ru) != guest || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_capture: the guest failed under %s\n", tracer_names[t]);
		return -1;
	}
	r->guest_s = json_nums(buf, "\"ns\":", true) / 1e9;
	r->guest_cpu_s = rusage_s(&ru);
	r->made = json_nums(buf, "\"IO\":", false);
	if (t == T_NONE)
		return 0;
	/* perf record -p ends with its target; vmexit's -p waits for Ctrl-C. */
	if (t != T_PERF)
		kill(tracer, SIGINT);
	if (wait4(tracer, &st, 0, &ru) != tracer || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_capture: %s failed (see %s/err)\n", tracer_names[t], dir);
		return -1;
	}
	r->cpu_s = rusage_s(&ru) - cpu0 * 1e-9;
	if (captured(t, r)) {
		fprintf(stderr, "bench_capture: cannot read what %s captured (%s)\n",
			tracer_names[t], dir);
		return -1;
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(v[0]), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "%.2f" of x / perf, or "-" when perf's figure is lost in the noise (not above 0). */
static const char *ratio(char *buf, size_t len, double x, double perf)
{
	if (perf > 0)
		snprintf(buf, len, "%.2f", x / perf);
	else
		snprintf(buf, len, "-");
	return buf;
}

/* The median over rounds of a run's figure; against the untraced run of each round with
 * minus_untraced (the host's load drifts), per exit with per. */
static double med_of(struct run runs[NR_TRACERS][ROUNDS], int t, int rounds, size_t field,
		     bool minus_untraced, double per)
{
	double v[ROUNDS];

	for (int i = 0; i < rounds; i++) {
		v[i] = *(double *)((char *)&runs[t][i] + field);
		if (minus_untraced)
			v[i] -= *(double *)((char *)&runs[T_NONE][i] + field);
		v[i] /= per;
	}
	return median(v, rounds);
}

/* ROUNDS of every tracer in turn (rotated, so that none always follows the same one). */
static int bench(int vcpus, int rounds)
{
	struct run runs[NR_TRACERS][ROUNDS];
	double wall[NR_TRACERS], over[NR_TRACERS], gcpu[NR_TRACERS], cpu[NR_TRACERS];
	long long exits = (long long)vcpus * (IO_EXITS + 1);
	char r1[16], r2[16], r3[16];
	int bad = 0;

	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < NR_TRACERS; k++) {
			enum tracer t = (k + i) % NR_TRACERS;

			if (run_once(t, vcpus, &runs[t][i]))
				return -1;
		}
	}
	for (int t = 0; t < NR_TRACERS; t++) {
		wall[t] = med_of(runs, t, rounds, offsetof(struct run, guest_s), false, IO_EXITS);
		over[t] = med_of(runs, t, rounds, offsetof(struct run, guest_s), true, IO_EXITS);
		gcpu[t] = med_of(runs, t, rounds, offsetof(struct run, guest_cpu_s), true,
				 (double)exits);
		cpu[t] = med_of(runs, t, rounds, offsetof(struct run, cpu_s), false, 1);
	}
	printf("\n%d vCPU(s) x %d KVM_EXIT_IO (+1 each), %d rounds; medians; x perf: against "
	       "perf record's figure\n", vcpus, IO_EXITS, rounds);
	printf("  %-14s %8s %8s %6s %9s %6s %9s %6s  %s\n", "tracer", "us/exit", "+us/exit",
	       "x perf", "+CPU us", "x perf", "tracer", "x perf", "captured of made, lost");
	for (int t = 0; t < NR_TRACERS; t++) {
		const struct run *w = &runs[t][0];

		for (int i = 1; i < rounds; i++) {
			if (runs[t][i].captured < w->captured)
				w = &runs[t][i];
		}
		for (int i = 0; i < rounds; i++) {
			const struct run *r = &runs[t][i];

			/* Every exit the guest made, captured or counted as lost. */
			if (t != T_NONE && (r->made != exits || r->captured + r->lost != r->made)) {
				fprintf(stderr, "bench_capture: %s: %lld exits made (expected %lld), "
					"%lld captured, %lld reported lost\n", tracer_names[t],
					r->made, exits, r->captured, r->lost);
				bad = 1;
			}
		}
		if (t == T_NONE) {
			printf("  %-14s %8.3f\n", tracer_names[t], wall[t] * 1e6);
			continue;
		}
		printf("  %-14s %8.3f %8.3f %6s %9.3f %6s %8.3fs %6s  %lld of %lld, %lld lost"
		       " (worst run)\n", tracer_names[t], wall[t] * 1e6, over[t] * 1e6,
		       ratio(r1, sizeof(r1), over[t], over[T_PERF]), gcpu[t] * 1e6,
		       ratio(r2, sizeof(r2), gcpu[t], gcpu[T_PERF]), cpu[t],
		       ratio(r3, sizeof(r3), cpu[t], cpu[T_PERF]), w->captured, w->made, w->lost);
	}
	return bad;
}

int main(int argc, char **argv)
{
	const char *bin = getenv("VMEXIT_BIN") ? getenv("VMEXIT_BIN") : ".output/vmexit";
	char ctl[96], ack[96], cmd[128], *slash;
	int err;

	bench_args(argc, argv, "bench/bench_capture.c");

	if (geteuid() != 0) {
		fprintf(stderr, "bench_capture: needs root to load BPF programs\n");
		return 77;
	}
	if (system("perf --version >/dev/null 2>&1")) {
		fprintf(stderr, "bench_capture: perf not installed (apt-get install linux-perf)\n");
		return 1;
	}
	if (!realpath(bin, vmexit_bin)) {
		fprintf(stderr, "bench_capture: %s: %s\n", bin, strerror(errno));
		return 1;
	}
	snprintf(guest_bin, sizeof(guest_bin), "%s", vmexit_bin);
	slash = strrchr(guest_bin, '/');
	snprintf(slash + 1, sizeof(guest_bin) - (slash + 1 - guest_bin), "vmexit-guest");
	snprintf(dir, sizeof(dir), "/tmp/vmexit-bench-capture.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	path_in(ctl, sizeof(ctl), "ctl");
	path_in(ack, sizeof(ack), "ack");
	if (mkfifo(ctl, 0600) || mkfifo(ack, 0600))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("Per-event capture: the guest's time per exit (its vCPU loop) and its increase "
	       "under each tracer (+us/exit, against the untraced run of the same round); the "
	       "increase of the guest's CPU time per exit (+CPU us: what the tracer's kernel "
	       "work costs the guest, steadier than time on a busy host); the tracer's CPU "
	       "time from the guest's start to its own end; the exits captured.\n");
	err = bench(1, ROUNDS);
	/* Flat out on every CPU: the highest rate the guest reaches, and what is lost there. */
	if (err >= 0) {
		int e = bench((int)sysconf(_SC_NPROCESSORS_ONLN), ROUNDS_MAX_RATE);

		err = e < 0 ? e : err | e;
	}
	if (err < 0) {
		fprintf(stderr, "bench_capture: a run failed; its files are in %s\n", dir);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) || err ? 1 : 0;
}
