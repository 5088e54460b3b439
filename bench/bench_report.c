// SPDX-License-Identifier: GPL-2.0
/*
 * `vmexit report` throughput on a 10-million-event recording: the stat table, the default
 * event line, a --format rules file, --events --json, each to /dev/null, and --perfetto in
 * both formats (Chrome JSON, protobuf) into a pipe that counts the output's bytes per event,
 * run as the real .output/vmexit binary (report needs no root). Figures are printed, not
 * asserted.
 *
 * The recording is synthetic but made by the real writer (rec_writer_*): 16 VMs (12 VMX, 4
 * SVM) x 8 vCPUs, a weighted mix of kernel and userspace exit reasons, log-spread latencies
 * from 200 ns to about 0.5 ms, 1 M exits/s of capture time, each vCPU's TSC offset, and a lost
 * record now and then so that the loss markers are exercised. It is about 800 MB, cached
 * under /tmp (named after the format version) and regenerated when missing or unreadable.
 *
 * Environment: VMEXIT_BIN (default: ../vmexit next to this program), VMEXIT_BENCH_FORMATS
 * (default docs/examples/default.formats), VMEXIT_BENCH_REPORT_FILE (the cached recording).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include "record_file.h"
#include "../tests/xorshift64.h"
#include "bench_args.h"

#define NR_EVENTS	10000000ull
#define NR_VMS		16
#define NR_SVM_VMS	4		/* the last ones: SVM reason codes */
#define NR_VCPUS	8
#define MIN_FREE	(3ull << 30)	/* the file plus room to spare */
#define EVENT_GAP_NS	1000		/* 1 M exits per second of capture */
#define GEN_VERSION	2		/* in the cache's name: bump when the content changes */

struct mix {
	__u16 isa;
	__u32 reason;
	__u32 weight;
	__u32 base_ns;		/* latency scale: the median is a few times this */
};

/* What a busy host shows: memory faults, I/O, interrupts, halts, MSRs, a few VMM exits. */
static const struct mix vmx_mix[] = {
	{ VMEXIT_ISA_VMX, 48, 30, 800 },	/* EPT_VIOLATION */
	{ VMEXIT_ISA_VMX, 30, 15, 1500 },	/* IO_INSTRUCTION */
	{ VMEXIT_ISA_VMX, 1, 15, 300 },		/* EXTERNAL_INTERRUPT */
	{ VMEXIT_ISA_VMX, 12, 10, 4000 },	/* HLT */
	{ VMEXIT_ISA_VMX, 32, 10, 400 },	/* MSR_WRITE */
	{ VMEXIT_ISA_VMX, 49, 5, 1200 },	/* EPT_MISCONFIG */
	{ VMEXIT_ISA_VMX, 10, 3, 200 },		/* CPUID */
	{ VMEXIT_ISA_VMX, 28, 2, 300 },		/* CR_ACCESS */
	{ VMEXIT_ISA_VMX, 52, 2, 250 },		/* PREEMPTION_TIMER */
	{ VMEXIT_ISA_USER, 2, 5, 5000 },	/* KVM_EXIT_IO */
	{ VMEXIT_ISA_USER, 6, 3, 8000 },	/* KVM_EXIT_MMIO */
};

static const struct mix svm_mix[] = {
	{ VMEXIT_ISA_SVM, 0x400, 30, 900 },	/* npf */
	{ VMEXIT_ISA_SVM, 0x7b, 15, 1500 },	/* ioio */
	{ VMEXIT_ISA_SVM, 0x60, 15, 300 },	/* intr */
	{ VMEXIT_ISA_SVM, 0x78, 10, 4000 },	/* hlt */
	{ VMEXIT_ISA_SVM, 0x7c, 10, 400 },	/* msr */
	{ VMEXIT_ISA_SVM, 0x72, 3, 200 },	/* cpuid */
	{ VMEXIT_ISA_SVM, 0x81, 2, 600 },	/* vmmcall */
	{ VMEXIT_ISA_USER, 2, 5, 5000 },	/* KVM_EXIT_IO */
	{ VMEXIT_ISA_USER, 6, 3, 8000 },	/* KVM_EXIT_MMIO */
};

static __u64 rng = XORSHIFT64_SEED;

static __u64 rnd(void)
{
	return xorshift64(&rng);
}

static const struct mix *pick(const struct mix *m, size_t n)
{
	__u32 total = 0, r;

	for (size_t i = 0; i < n; i++)
		total += m[i].weight;
	r = rnd() % total;
	for (size_t i = 0; i < n; i++) {
		if (r < m[i].weight)
			return &m[i];
		r -= m[i].weight;
	}
	return &m[n - 1];
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int generate(const char *path)
{
	char tmp[PATH_MAX + 8], err[512];
	__u64 zero[NR_LOST] = {}, lost[NR_LOST] = {};
	struct rec_writer *w;
	struct rec_meta meta;
	struct vmexit_event ev;
	__u64 ts;
	double t0 = now_s();
	int ret = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	rec_meta_now(&meta);
	meta.tsc_mhz = 2100;
	/* Written aside and renamed: an interrupted run leaves no truncated cache behind. */
	w = rec_writer_open(tmp, true, &meta, err, sizeof(err));
	if (!w) {
		fprintf(stderr, "bench_report: %s\n", err);
		return -1;
	}
	for (int vm = 0; vm < NR_VMS && !ret; vm++) {
		char name[64];

		/* Some long names: the line renderer pads and the JSON writer escapes them. */
		if (vm % 5 == 4)
			snprintf(name, sizeof(name), "tenant-%02d.production.example.org", vm);
		else
			snprintf(name, sizeof(name), "vm%02d", vm);
		/* Each VMM started before the recording, as record writes it (format 1.3). */
		ret = rec_writer_add_guest(w, 20000 + vm * 100, meta.mono_ns - (vm + 1) * 1000000000ull,
					   name);
	}
	ts = meta.mono_ns;
	if (!ret)
		ret = rec_writer_add_lost(w, ts, zero);
	/* Each vCPU's guest TSC offset, as QEMU writes it when the vCPU starts. */
	for (int vm = 0; vm < NR_VMS && !ret; vm++) {
		for (int v = 0; v < NR_VCPUS && !ret; v++) {
			memset(&ev, 0, sizeof(ev));
			ev.type = VMEXIT_EV_TSC_OFFSET;
			ev.isa = VMEXIT_ISA_USER;
			ev.ts_ns = ts;
			ev.tgid = 20000 + vm * 100;
			ev.tid = ev.tgid + 1 + v;
			ev.vcpu = v;
			ev.info2 = -(__u64)(ts * 21 / 10) + v;
			ret = rec_writer_add_event(w, &ev);
		}
	}
	for (__u64 i = 0; i < NR_EVENTS && !ret; i++) {
		__u64 r = rnd();
		int vm = r % NR_VMS, v = (r >> 8) % NR_VCPUS;
		bool svm = vm >= NR_VMS - NR_SVM_VMS;
		const struct mix *m = svm ? pick(svm_mix, sizeof(svm_mix) / sizeof(svm_mix[0])) :
					    pick(vmx_mix, sizeof(vmx_mix) / sizeof(vmx_mix[0]));

		memset(&ev, 0, sizeof(ev));
		ts += EVENT_GAP_NS;
		ev.ts_ns = ts;
		/* Log-spread: base x 2^(0..5) x (1..2), up to about half a ms. */
		ev.latency_ns = (m->base_ns << ((r >> 16) % 6)) * (1024 + (r >> 24) % 1024) / 1024;
		ev.tgid = 20000 + vm * 100;
		ev.tid = ev.tgid + 1 + v;
		ev.vcpu = v;
		ev.cpu = (r >> 40) % 64;
		ev.isa = m->isa;
		ev.reason = m->reason;
		if (m->isa == VMEXIT_ISA_USER) {
			ev.type = VMEXIT_EV_USER_EXIT;
		} else {
			ev.type = VMEXIT_EV_EXIT;
			ev.rip = 0xffffffff81000000ull + ((r >> 20) & 0xfffff0);
			ev.info1 = (r >> 32) & 0xfff;
			ev.info2 = 0xfee00000 + ((r >> 44) & 0xff0);
		}
		ret = rec_writer_add_event(w, &ev);
		/* A burst the ring buffer could not take, now and then. */
		if (!ret && i % 1000000 == 999999) {
			lost[LOST_RINGBUF_FULL] = 1 + r % 500;
			ret = rec_writer_add_lost(w, ts, lost);
		}
	}
	if (!ret)
		ret = rec_writer_add_lost(w, ts, zero);
	if (ret)
		fprintf(stderr, "bench_report: %s\n", rec_writer_error(w));
	if (rec_writer_close(w) && !ret)
		ret = -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret) {
		unlink(tmp);
		return -1;
	}
	printf("generated %s: %llu events in %.1f s with rec_writer\n", path,
	       (unsigned long long)NR_EVENTS, now_s() - t0);
	return 0;
}

/* The cache is usable when the reader takes its header (same format major, not damaged). */
static bool cache_ok(const char *path)
{
	char err[512];
	struct rec_reader *r = rec_reader_open(path, err, sizeof(err));

	if (!r)
		return false;
	rec_reader_close(r);
	return true;
}

/* Reads the file once so that every timed run starts with it in the page cache. */
static int warm(const char *path)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0 ? -errno : 0;
}

/*
 * Runs argv with its standard output to /dev/null, or (sized) into a pipe this process reads
 * and counts: the output's bytes per event, for the formats whose size matters (--perfetto).
 */
static int run(const char *what, char *const argv[], double mb, bool sized)
{
	unsigned long long bytes = 0;
	struct rusage ru;
	double t0, secs, cpu;
	char per[32] = "-";
	int status, pfd[2] = { -1, -1 };
	pid_t pid;

	fflush(stdout);
	if (sized && pipe(pfd))
		return -errno;
	t0 = now_s();
	pid = fork();
	if (pid < 0)
		return -errno;
	if (!pid) {
		int fd = sized ? pfd[1] : open("/dev/null", O_WRONLY);

		dup2(fd, STDOUT_FILENO);
		if (sized)
			close(pfd[0]);
		execv(argv[0], argv);
		fprintf(stderr, "bench_report: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (sized) {
		static char buf[1 << 16];
		ssize_t n;

		close(pfd[1]);
		while ((n = read(pfd[0], buf, sizeof(buf))) > 0)
			bytes += n;
		close(pfd[0]);
		snprintf(per, sizeof(per), "%.1f", (double)bytes / NR_EVENTS);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	secs = now_s() - t0;
	cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	      ru.ru_stime.tv_usec / 1e6;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("%-44s FAILED (status 0x%x)\n", what, status);
		return -1;
	}
	printf("%-44s %7.2f %7.2f %12.0f %8.1f %9s\n", what, secs, cpu, NR_EVENTS / secs, mb / secs,
	       per);
	return 0;
}

int main(int argc, char **argv)
{
	char bin[PATH_MAX], self[PATH_MAX], path[PATH_MAX], *fmt;
	const char *env;
	struct statvfs vfs;
	struct stat st;
	double mb;
	ssize_t n;
	int rc = 0;

	bench_args(argc, argv, "bench/bench_report.c");
	setvbuf(stdout, NULL, _IOLBF, 0);
	env = getenv("VMEXIT_BIN");
	if (env) {
		snprintf(bin, sizeof(bin), "%s", env);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0)
			snprintf(self, sizeof(self), "%s", argv[0]);
		else
			self[n] = 0;
		/* .output/bench/bench_report -> .output/vmexit */
		snprintf(bin, sizeof(bin), "%s/../vmexit", dirname(self));
	}
	if (access(bin, X_OK)) {
		printf("bench_report: SKIP: no vmexit binary at %s (make, or set VMEXIT_BIN)\n", bin);
		return 0;
	}
	env = getenv("VMEXIT_BENCH_REPORT_FILE");
	if (env)
		snprintf(path, sizeof(path), "%s", env);
	else
		snprintf(path, sizeof(path), "/tmp/vmexit-bench-report-v%d.%d-g%d-10M.vmexit",
			 REC_FORMAT_MAJOR, REC_FORMAT_MINOR, GEN_VERSION);
	fmt = getenv("VMEXIT_BENCH_FORMATS");
	if (!fmt)
		fmt = "docs/examples/default.formats";

	if (!cache_ok(path)) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%s", path);
		if (statvfs(dirname(dir), &vfs)) {
			printf("bench_report: SKIP: cannot stat the file system of %s: %s\n", path,
			       strerror(errno));
			return 0;
		}
		if ((__u64)vfs.f_bavail * vfs.f_frsize < MIN_FREE) {
			printf("*** bench_report: SKIP: %.1f GB free under %s, the 10 M-event "
			       "recording needs %.0f GB\n",
			       (double)vfs.f_bavail * vfs.f_frsize / 1e9, path, MIN_FREE / 1e9);
			return 0;
		}
		if (generate(path))
			return 1;
	} else {
		printf("using the cached %s\n", path);
	}
	if (stat(path, &st) || warm(path)) {
		fprintf(stderr, "bench_report: cannot read %s\n", path);
		return 1;
	}
	mb = st.st_size / 1e6;

	printf("vmexit report on %llu events (%.0f MB, in the page cache), output to /dev/null; "
	       "one run each\n", (unsigned long long)NR_EVENTS, mb);
	printf("%-44s %7s %7s %12s %8s %9s\n", "output", "wall-s", "cpu-s", "events/s", "in-MB/s",
	       "out-B/ev");
	{
		char *stat_argv[] = { bin, "report", "-i", path, NULL };
		char *lines_argv[] = { bin, "report", "-i", path, "--events", NULL };
		char *fmt_argv[] = { bin, "report", "-i", path, "--format", fmt, NULL };
		char *json_argv[] = { bin, "report", "-i", path, "--events", "--json", NULL };
		char *pf_argv[] = { bin, "report", "-i", path, "--perfetto", "-", NULL };
		char *pb_argv[] = { bin, "report", "-i", path, "--perfetto", "-",
				    "--perfetto-format", "proto", NULL };
		char label[PATH_MAX + 32];

		rc |= run("stat table (default)", stat_argv, mb, false);
		rc |= run("--events (default line)", lines_argv, mb, false);
		snprintf(label, sizeof(label), "--format %s", fmt);
		if (access(fmt, R_OK))
			printf("%-44s SKIP: cannot read %s (set VMEXIT_BENCH_FORMATS)\n", label, fmt);
		else
			rc |= run(label, fmt_argv, mb, false);
		rc |= run("--events --json", json_argv, mb, false);
		/* Both Perfetto formats through a pipe, sized: what a minute of exits costs. */
		rc |= run("--perfetto - (Chrome JSON)", pf_argv, mb, true);
		rc |= run("--perfetto - --perfetto-format proto", pb_argv, mb, true);
	}
	return rc ? 1 : 0;
}
