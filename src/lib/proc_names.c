// SPDX-License-Identifier: GPL-2.0
/*
 * Guest and vCPU names from /proc.
 *
 * The guest name is what operators gave the VMM (QEMU's -name, which libvirt always sets to the
 * domain name); vCPU indexes come from the thread names, which every common VMM sets and which
 * are the only userspace-visible link between a thread and a vCPU.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_names.h"
#include "qemu_opts.h"
#include "text_escape.h"

/* /proc/PID/cmdline is bounded by the argument limits; more than this is not a VMM's. */
#define CMDLINE_MAX	(4u << 20)

/* Whole file into a malloc'd buffer (NUL-terminated, *len without it); NULL with errno set. */
static char *read_proc_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = NULL, *tmp;
	ssize_t r;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (!buf || n + 1 >= cap) {
			if (buf)
				cap *= 2;
			if (cap > CMDLINE_MAX) {
				err = E2BIG;
				goto fail;
			}
			tmp = realloc(buf, cap);
			if (!tmp) {
				err = ENOMEM;
				goto fail;
			}
			buf = tmp;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto fail;
		}
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

/* One line of a small /proc file (comm), without its newline. 0 or -errno. */
static int read_proc_line(const char *path, char *out, size_t outlen)
{
	char *buf;
	size_t len;

	buf = read_proc_file(path, &len);
	if (!buf)
		return -errno;
	buf[strcspn(buf, "\n")] = '\0';
	snprintf(out, outlen, "%s", buf);
	free(buf);
	return 0;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The guest name in a QEMU -name value: NAME or guest=NAME. false if no non-empty name. */
static bool qemu_name_value(const char *val, char *out, size_t outlen)
{
	return qemu_opts_get(val, "guest", "guest", out, outlen) && *out;
}

const char *cmdline_next_arg(const char *arg, const char *end, size_t *alen)
{
	const char *nul = memchr(arg, '\0', end - arg);

	/* The last NUL may be missing (a truncated read). */
	*alen = nul ? (size_t)(nul - arg) : (size_t)(end - arg);
	return nul ? nul + 1 : end;
}

int guest_name_from_cmdline(const char *args, size_t len, char *out, size_t outlen)
{
	const char *end, *arg, *next, *base;
	bool found = false, firecracker;
	char name[256], tmp[256], val[4096];
	size_t alen, i;

	if (!args || !len || !outlen)
		return -ENOENT;
	end = args + len;
	next = cmdline_next_arg(args, end, &alen);
	/* firecracker's --id is a generic option name: only trust it from firecracker. */
	for (base = args, i = 0; i < alen; i++)
		if (args[i] == '/')
			base = args + i + 1;
	firecracker = memmem(base, args + alen - base, "firecracker", 11) != NULL;

	for (arg = next; arg < end; arg = next) {
		next = cmdline_next_arg(arg, end, &alen);
		/* QEMU takes "-opt" and "--opt", the value in the next argument. */
		if ((alen == 5 && !memcmp(arg, "-name", 5)) ||
		    (alen == 6 && !memcmp(arg, "--name", 6))) {
			if (next >= end)
				break;
			arg = next;
			next = cmdline_next_arg(arg, end, &alen);
			snprintf(val, sizeof(val), "%.*s", (int)alen, arg);
			/* The last guest name wins, as in QEMU (which merges repeated -name). */
			if (qemu_name_value(val, tmp, sizeof(tmp))) {
				memcpy(name, tmp, sizeof(name));
				found = true;
			}
		} else if (firecracker && alen == 4 && !memcmp(arg, "--id", 4)) {
			if (next >= end)
				break;
			arg = next;
			next = cmdline_next_arg(arg, end, &alen);
			if (alen) {
				snprintf(name, sizeof(name), "%.*s", (int)alen, arg);
				found = true;
			}
		} else if (firecracker && alen > 5 && !memcmp(arg, "--id=", 5)) {
			snprintf(name, sizeof(name), "%.*s", (int)alen - 5, arg + 5);
			found = true;
		}
	}
	if (!found)
		return -ENOENT;
	utf8_copy(out, outlen, name);
	return 0;
}

char *proc_cmdline(int pid, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	return read_proc_file(path, len);
}

int guest_cmdline_name(int pid, char *out, size_t outlen)
{
	char *args;
	size_t len;
	int err;

	args = proc_cmdline(pid, &len);
	if (!args)
		return errno == ENOENT ? -ESRCH : -errno;
	err = guest_name_from_cmdline(args, len, out, outlen);
	free(args);
	return err;
}

int guest_name_for_pid(int pid, char *out, size_t outlen)
{
	char path[64];
	int err = guest_cmdline_name(pid, out, outlen);

	if (err != -ENOENT)
		return err == -ESRCH ? -ENOENT : err;
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	return read_proc_line(path, out, outlen);
}

/* Up to 9 digits and nothing after them; -1 otherwise. */
static int parse_index(const char *s, const char *stop)
{
	int v = 0, digits = 0;

	for (; *s && s != stop; s++) {
		if (!isdigit((unsigned char)*s) || ++digits > 9)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return digits ? v : -1;
}

int vcpu_from_thread_name(const char *comm)
{
	size_t len;
	const char *p;

	if (!comm)
		return -1;
	len = strcspn(comm, "\n");
	/* QEMU: "CPU <index>/<accelerator>". */
	if (!strncmp(comm, "CPU ", 4)) {
		const char *slash = memchr(comm, '/', len);

		return slash ? parse_index(comm + 4, slash) : -1;
	}
	/* "vcpu" at the start or after a separator, an optional separator, then the index. */
	for (p = comm; (p = strcasestr(p, "vcpu")) && (size_t)(p - comm) < len; p++) {
		const char *num = p + 4;

		if (p != comm && !strchr("_- ", p[-1]))
			continue;
		if (*num && strchr("_- ", *num))
			num++;
		if (isdigit((unsigned char)*num))
			return parse_index(num, comm + len);
	}
	return -1;
}

int vcpu_for_thread(int tgid, int tid)
{
	char path[64], comm[64];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", tgid, tid);
	if (read_proc_line(path, comm, sizeof(comm)))
		return -1;
	return vcpu_from_thread_name(comm);
}

/* Whether pid holds /dev/kvm or a KVM VM fd: every KVM VMM does, whatever its binary's name. */
/* 1: pid has /dev/kvm or a VM open; 0: not; -1: its open files are not ours to read. */
int holds_kvm(int pid)
{
	char path[64], link[64];
	struct dirent *de;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	dir = opendir(path);
	if (!dir)
		return errno == EACCES || errno == EPERM ? -1 : 0;
	while (!found && (de = readdir(dir))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		found = !strcmp(link, "/dev/kvm") || !strncmp(link, "anon_inode:kvm-vm", 17);
	}
	closedir(dir);
	return found;
}

static bool vmm_binary(const char *argv0)
{
	static const char *const names[] = {
		"kvm", "lkvm", "firecracker", "cloud-hypervisor", "crosvm",
	};
	const char *base = basename_of(argv0);
	size_t i;

	/* qemu-system-x86_64, qemu-kvm, and distro wrappers around them. */
	if (strstr(base, "qemu"))
		return true;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(base, names[i]))
			return true;
	return false;
}

/*
 * Calls fn(pid, name, ctx) for every process that looks like a VMM, with its guest name (its
 * comm if the command line has none). With want set, only for VMMs whose command-line name is
 * want, which also spares the fd scan of every other process. Stops when fn returns non-zero.
 * *unreadable (if given): processes that could not be checked (not ours to read).
 */
static int for_each_vmm(const char *want, int (*fn)(int pid, const char *name, void *ctx),
			void *ctx, int *unreadable)
{
	struct dirent *de;
	DIR *proc;
	int ret = 0;

	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while (!ret && (de = readdir(proc))) {
		char path[64], name[256], *args;
		bool named;
		size_t len;
		int pid;

		pid = parse_index(de->d_name, NULL);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		args = read_proc_file(path, &len);
		if (!args)
			continue;	/* gone, or not ours to read */
		named = len && !guest_name_from_cmdline(args, len, name, sizeof(name));
		if (want && (!named || strcmp(name, want)))
			goto next;
		/* args starts with argv[0]; a len of 0 is a kernel thread or a zombie. */
		if (!len)
			goto next;
		if (!(named && vmm_binary(args))) {
			int held = holds_kvm(pid);

			if (held < 0 && unreadable)
				(*unreadable)++;
			if (held <= 0)
				goto next;
		}
		if (!named) {
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if (read_proc_line(path, name, sizeof(name)))
				goto next;
		}
		ret = fn(pid, name, ctx);
next:
		free(args);
	}
	closedir(proc);
	return ret < 0 ? ret : 0;
}

struct find_ctx {
	int *pids;
	int max;
	int n;
};

static int find_one(int pid, const char *name, void *ctx)
{
	struct find_ctx *c = ctx;

	(void)name;
	c->pids[c->n++] = pid;
	return c->n >= c->max;
}

int guests_find(const char *name, int *pids, int max)
{
	struct find_ctx c = { .pids = pids, .max = max };
	int err;

	if (!name || !*name || max <= 0)
		return 0;
	err = for_each_vmm(name, find_one, &c, NULL);
	return err ? err : c.n;
}

struct print_ctx {
	FILE *f;
	int count;
};

static int print_one(int pid, const char *name, void *ctx)
{
	struct print_ctx *c = ctx;
	char nb[TEXT_NAME_MAX];

	fprintf(c->f, "  %7d  %s\n", pid, text_esc(nb, name));
	c->count++;
	return 0;
}

int guests_list_print(FILE *f)
{
	struct print_ctx c = { .f = f };
	int unreadable = 0;

	int err = for_each_vmm(NULL, print_one, &c, &unreadable);

	if (err) {
		fprintf(stderr, "vmexit: cannot list the processes in /proc: %s\n", strerror(-err));
		return -1;
	}
	if (!c.count && !unreadable)
		fprintf(f, "  (none found)\n");
	/* Not "none": a VMM whose binary has no known name is found by its open /dev/kvm. */
	if (unreadable)
		fprintf(stderr, "vmexit: cannot read the open files of %d processes of other "
			"users: run as root to list every guest\n", unreadable);
	return unreadable;
}
