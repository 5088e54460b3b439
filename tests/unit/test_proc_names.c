// SPDX-License-Identifier: GPL-2.0
/*
 * Guest and vCPU naming: command-line parsing on hand-built argv blocks, thread names, and
 * guests_find()/guests_list_print() on real processes: this binary re-executed as a fake VMM
 * ("qemu-system-x86_64 -name guest=..."), a decoy with the same -name that is not a VMM
 * (like `find -name`), and, when /dev/kvm can be opened, an oddly named process holding it.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "check.h"
#include "proc_names.h"

/* A literal with embedded NULs, its length without the literal's own terminating NUL. */
#define ARGS(lit)	lit, sizeof(lit) - 1

static void name_is(int line, const char *args, size_t len, const char *want)
{
	char out[256] = "(untouched)";
	int r = guest_name_from_cmdline(args, len, out, sizeof(out));

	if (r || strcmp(out, want)) {
		fprintf(stderr, "%s:%d: got %d \"%s\", expected \"%s\"\n", __FILE__, line, r, out,
			want);
		check_failures++;
	}
}

static void no_name(int line, const char *args, size_t len)
{
	char out[256] = "";
	int r = guest_name_from_cmdline(args, len, out, sizeof(out));

	if (r != -ENOENT) {
		fprintf(stderr, "%s:%d: got %d \"%s\", expected -ENOENT\n", __FILE__, line, r, out);
		check_failures++;
	}
}

/* Variadic so that ARGS() expands into two arguments first. */
#define NAME_IS(...)	name_is(__LINE__, __VA_ARGS__)
#define NO_NAME(...)	no_name(__LINE__, __VA_ARGS__)

static void test_cmdline(void)
{
	char small[4];

	/* QEMU's forms of -name. */
	NAME_IS(ARGS("qemu-system-x86_64\0-m\0001G\0-name\0vm1\0"), "vm1");
	NAME_IS(ARGS("qemu-system-x86_64\0-name\0guest=web,debug-threads=on\0"), "web");
	NAME_IS(ARGS("qemu-kvm\0-name\0db,process=qemu-db\0-S\0"), "db");
	NAME_IS(ARGS("qemu\0-name\0process=p,guest=g\0"), "g");
	NAME_IS(ARGS("qemu\0-name\0debug-threads=on,guest=x\0"), "x");
	NAME_IS(ARGS("qemu\0--name\0dashdash\0"), "dashdash");
	/* libvirt's exact shape. */
	NAME_IS(ARGS("/usr/bin/qemu-system-x86_64\0-name\0guest=rhel9,debug-threads=on\0-S\0"
		     "-object\0{\"qom-type\":\"secret\"}\0"), "rhel9");

	/* ",," is a literal comma, in the implied and the guest= form. */
	NAME_IS(ARGS("qemu\0-name\0a,,b\0"), "a,b");
	NAME_IS(ARGS("qemu\0-name\0guest=a,,b,debug-threads=on\0"), "a,b");
	NAME_IS(ARGS("qemu\0-name\0guest=x,,,,y\0"), "x,,y");
	NAME_IS(ARGS("qemu\0-name\0a,,b=c\0"), "a,b=c");

	/* Spaces and UTF-8 are kept as given. */
	NAME_IS(ARGS("qemu\0-name\0my vm \xc3\xa9\0"), "my vm \xc3\xa9");

	/* The last -name with a guest name wins, as QEMU merges repeated -name. */
	NAME_IS(ARGS("qemu\0-name\0a\0-name\0b\0"), "b");
	NAME_IS(ARGS("qemu\0-name\0a\0-name\0process=x\0"), "a");
	NAME_IS(ARGS("qemu\0-name\0a\0-name\0guest=\0"), "a");

	/* The read may miss the final NUL. */
	NAME_IS("qemu\0-name\0vmz", 14, "vmz");
	/* A shorter len cuts the block: the name ends where len does. */
	NAME_IS("qemu\0-name\0vmzzz\0", 14, "vmz");

	/* No name. */
	NO_NAME(ARGS("qemu-system-x86_64\0-m\0001G\0"));
	NO_NAME(ARGS("qemu\0-name\0"));			/* -name as the last argument */
	NO_NAME("qemu\0-name", 10);				/* ... without its NUL */
	NO_NAME(ARGS("qemu\0-name\0\0"));			/* empty value */
	NO_NAME(ARGS("qemu\0-name\0guest=\0"));
	NO_NAME(ARGS("qemu\0-name\0process=p,debug-threads=on\0"));
	NO_NAME(ARGS("qemu\0-namex\0foo\0"));
	NO_NAME(ARGS("qemu\0-name=foo\0"));		/* QEMU has no -opt=value form */
	NO_NAME(ARGS("-name\0foo"));				/* "-name" is argv[0] here */
	NO_NAME("", 0);
	NO_NAME(ARGS("\0"));
	NO_NAME(NULL, 0);

	/* firecracker's --id, only from firecracker. */
	NAME_IS(ARGS("/usr/bin/firecracker\0--id\0fc1\0--api-sock\0/run/fc.sock\0"), "fc1");
	NAME_IS(ARGS("firecracker\0--id=fc2\0"), "fc2");
	NO_NAME(ARGS("firecracker\0--id\0"));
	NO_NAME(ARGS("other-tool\0--id\0x\0"));

	/* Truncated to the buffer, still terminated. */
	CHECK_EQ_U64(guest_name_from_cmdline(ARGS("qemu\0-name\0abcdef\0"), small, sizeof(small)),
		     0);
	CHECK_STR(small, "abc");
	/* Cut at a character: "xy" and 40 two-byte characters into the name cache's 64 bytes
	 * keep 30 of them (62 bytes), not the first byte of the 31st. */
	{
		char args[128] = "qemu\0-name\0guest=xy", out[64];
		size_t len = 5 + 6 + 8;

		for (int i = 0; i < 40; i++, len += 2)
			memcpy(args + len, "\xc3\xa9", 2);
		args[len++] = '\0';
		CHECK_EQ_U64(guest_name_from_cmdline(args, len, out, sizeof(out)), 0);
		CHECK_EQ_U64(strlen(out), 62);
		CHECK(!memcmp(out, args + 17, 62));
	}
}

static void test_thread_names(void)
{
	CHECK_EQ_U64(vcpu_from_thread_name("CPU 0/KVM"), 0);
	CHECK_EQ_U64(vcpu_from_thread_name("CPU 3/KVM"), 3);
	CHECK_EQ_U64(vcpu_from_thread_name("CPU 123/KVM"), 123);
	CHECK_EQ_U64(vcpu_from_thread_name("CPU 3/KVM\n"), 3);
	CHECK_EQ_U64(vcpu_from_thread_name("vcpu3"), 3);		/* cloud-hypervisor */
	CHECK_EQ_U64(vcpu_from_thread_name("vcpu 4"), 4);
	CHECK_EQ_U64(vcpu_from_thread_name("vcpu_12"), 12);
	CHECK_EQ_U64(vcpu_from_thread_name("crosvm_vcpu7"), 7);
	CHECK_EQ_U64(vcpu_from_thread_name("fc_vcpu 0"), 0);		/* firecracker */
	CHECK_EQ_U64(vcpu_from_thread_name("kvm-vcpu-5"), 5);		/* kvmtool */
	CHECK_EQ_U64(vcpu_from_thread_name("VCPU2"), 2);

	CHECK_EQ_U64(vcpu_from_thread_name("CPU /KVM"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("CPU x/KVM"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("CPU 3"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("vcpu"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("vcpu3x"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("myvcpu3"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("vcpu9999999999"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("qemu-system-x86"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name("IO mon_iothread"), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name(""), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_from_thread_name(NULL), (unsigned long long)-1);
}

static void test_self(void)
{
	char old[32], name[64];
	pid_t tid = syscall(SYS_gettid);
	pid_t child;

	/* Our own thread name, set the way QEMU sets a vCPU thread's. */
	prctl(PR_GET_NAME, old);
	prctl(PR_SET_NAME, "CPU 7/KVM");
	CHECK_EQ_U64(vcpu_for_thread(getpid(), tid), 7);
	prctl(PR_SET_NAME, "fc_vcpu 2");
	CHECK_EQ_U64(vcpu_for_thread(getpid(), tid), 2);

	/* No -name on our command line: the name is comm. */
	prctl(PR_SET_NAME, "gn-self");
	CHECK_EQ_U64(guest_name_for_pid(getpid(), name, sizeof(name)), 0);
	CHECK_STR(name, "gn-self");
	prctl(PR_SET_NAME, old);

	/* Gone processes and threads. */
	child = fork();
	if (!child)
		_exit(0);
	waitpid(child, NULL, 0);
	CHECK_EQ_U64(guest_name_for_pid(child, name, sizeof(name)), (unsigned long long)-ENOENT);
	CHECK_EQ_U64(vcpu_for_thread(getpid(), child), (unsigned long long)-1);
	CHECK_EQ_U64(vcpu_for_thread(child, child), (unsigned long long)-1);
}

/* This binary as another process: argv[0] is what the test wants /proc to show. */
static pid_t spawn(char *const argv[])
{
	pid_t pid = fork();

	if (!pid) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	return pid;
}

/* Waits until pid's cmdline starts with argv0, i.e. it has exec'ed. */
static int wait_exec(pid_t pid, const char *argv0)
{
	char path[64], buf[256];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		size_t n = 0;

		if (f) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		if (n && !strcmp(buf, argv0))
			return 0;
		usleep(10000);
	}
	return -1;
}

/* Child side: sleep as a fake VMM until the parent kills us (bounded, in case it does not). */
static int fake_vmm(int argc, char **argv)
{
	int fd = -1;

	if (argc > 3 && !strcmp(argv[3], "--open-kvm")) {
		fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return 1;
		/* Tell the parent the fd is open: it checks /proc/PID/fd only after this. */
		prctl(PR_SET_NAME, "kvm-open");
	}
	sleep(20);
	if (fd >= 0)
		close(fd);
	return 0;
}

static int wait_comm(pid_t pid, const char *want)
{
	char path[64], buf[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");

		if (f) {
			if (fgets(buf, sizeof(buf), f) && !strncmp(buf, want, strlen(want))) {
				fclose(f);
				return 0;
			}
			fclose(f);
		}
		usleep(10000);
	}
	return -1;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

static void test_processes(void)
{
	char guest[64], arg[96], kguest[80], karg[96], line[128], name[64];
	char *list = NULL;
	size_t size = 0;
	pid_t vmm, decoy, kvm = -1;
	int pids[4], n;
	FILE *f;

	/* Unique per run so that other test runs on the host do not match. */
	snprintf(guest, sizeof(guest), "vmexit-test-%d-%ld", getpid(), (long)time(NULL));
	snprintf(arg, sizeof(arg), "guest=%s,debug-threads=on", guest);
	vmm = spawn((char *[]){ "qemu-system-x86_64", "-name", arg, NULL });
	decoy = spawn((char *[]){ "find", "-name", arg, NULL });
	CHECK(!wait_exec(vmm, "qemu-system-x86_64"));
	CHECK(!wait_exec(decoy, "find"));

	n = guests_find(guest, pids, 4);
	CHECK_EQ_U64(n, 1);				/* the decoy is not a VMM */
	CHECK_EQ_U64(pids[0], vmm);
	CHECK_EQ_U64(guests_find("vmexit-test-no-such-guest", pids, 4), 0);
	CHECK_EQ_U64(guests_find(guest, pids, 0), 0);
	CHECK_EQ_U64(guest_name_for_pid(vmm, name, sizeof(name)), 0);
	CHECK_STR(name, guest);

	/* A process with an unknown binary name counts as a VMM once it holds /dev/kvm. */
	snprintf(kguest, sizeof(kguest), "%s-kvm", guest);
	snprintf(karg, sizeof(karg), "guest=%s", kguest);
	if (access("/dev/kvm", R_OK | W_OK)) {
		printf("SKIP: /dev/kvm not accessible, fd-based VMM detection not tested\n");
	} else {
		kvm = spawn((char *[]){ "custom-vmm", "-name", karg, "--open-kvm", NULL });
		CHECK(!wait_comm(kvm, "kvm-open"));
		CHECK_EQ_U64(guests_find(kguest, pids, 4), 1);
		CHECK_EQ_U64(pids[0], kvm);
	}

	f = open_memstream(&list, &size);
	guests_list_print(f);
	fclose(f);
	snprintf(line, sizeof(line), "  %7d  %s\n", vmm, guest);
	CHECK(strstr(list, line) != NULL);
	snprintf(line, sizeof(line), "  %7d  ", decoy);
	CHECK(strstr(list, line) == NULL);
	if (kvm > 0) {
		snprintf(line, sizeof(line), "  %7d  %s\n", kvm, kguest);
		CHECK(strstr(list, line) != NULL);
	}
	if (check_failures)
		fprintf(stderr, "guests_list_print:\n%s", list);
	free(list);

	stop(vmm);
	stop(decoy);
	stop(kvm);
	CHECK_EQ_U64(guests_find(guest, pids, 4), 0);
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "-name"))
		return fake_vmm(argc, argv);
	test_cmdline();
	test_thread_names();
	test_self();
	test_processes();
	CHECK_DONE("proc_names");
}
