// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "kvm_vmm_stats.h"

#define DEBUGFS_KVM	"/sys/kernel/debug/kvm"

static int sys_pidfd_open(int pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_getfd(int pidfd, int fd)
{
	return syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

/* What /proc/PID/fd/FD links to. */
enum { FD_OTHER = -2, FD_VM = -1, FD_VM_STATS = -3, FD_VCPU_STATS = -4 };

/* FD_* or, for "anon_inode:kvm-vcpu:N", N. */
static int kvm_fd_kind(int pid, int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return FD_OTHER;
	link[n] = 0;
	if (strncmp(link, "anon_inode:kvm-", 15))
		return FD_OTHER;
	if (!strcmp(link + 15, "vm"))
		return FD_VM;
	if (!strcmp(link + 15, "vm-stats"))
		return FD_VM_STATS;
	/* "kvm-vcpu-stats:N" (its vCPU id; the id inside the file says it too). */
	if (!strncmp(link + 15, "vcpu-stats", 10))
		return FD_VCPU_STATS;
	if (!strncmp(link + 15, "vcpu:", 5) && isdigit((unsigned char)link[20]))
		return atoi(link + 20);
	return FD_OTHER;
}

unsigned long long kvm_vmm_proc_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long t = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

/*
 * A stats fd the VMM holds, copied. KVM_GET_STATS_FD itself cannot be asked of another
 * process's VM or vCPU fd: KVM answers -EIO to any ioctl from outside the VM's mm.
 */
static int stats_of(int pidfd, int fd, struct kvm_stats_fd *out)
{
	int copy = sys_pidfd_getfd(pidfd, fd);

	if (copy < 0)
		return -errno;
	return kvm_stats_fd_open(out, copy);
}

static struct kvm_vm_stats *vm_add(struct kvm_vmm_stats *v, int vm_fd)
{
	struct kvm_vm_stats *n = realloc(v->vms, (v->nr_vms + 1) * sizeof(*n));

	if (!n)
		return NULL;
	v->vms = n;
	n = &v->vms[v->nr_vms++];
	memset(n, 0, sizeof(*n));
	n->vm_fd = vm_fd;
	n->f.fd = -1;
	return n;
}

static bool vcpu_known(const struct kvm_vmm_stats *v, int vcpu, const char *id)
{
	for (int i = 0; i < v->nr_vms; i++)
		for (int j = 0; j < v->vms[i].nr_vcpus; j++)
			if (v->vms[i].vcpus[j].vcpu == vcpu && !strcmp(v->vms[i].vcpus[j].f.id, id))
				return true;
	return false;
}

/* The VM a vCPU's stats belong to: its id "kvm-PID/vcpu-N" starts with the VM's "kvm-PID". With
 * several VMs in one process the ids do not tell them apart: the first VM takes them. */
static struct kvm_vm_stats *vm_of_vcpu(struct kvm_vmm_stats *v, const char *id)
{
	for (int i = 0; i < v->nr_vms; i++) {
		size_t n = strlen(v->vms[i].f.id);

		if (n && !strncmp(id, v->vms[i].f.id, n))
			return &v->vms[i];
	}
	return v->nr_vms ? &v->vms[0] : NULL;
}

static int vcpu_add(struct kvm_vmm_stats *v, int vcpu, struct kvm_stats_fd *f)
{
	struct kvm_vm_stats *vm = vm_of_vcpu(v, f->id);
	struct kvm_vcpu_stats *n;

	if (!vm || vm->nr_vcpus >= KVM_VMM_MAX_VCPUS)
		return -E2BIG;
	n = realloc(vm->vcpus, (vm->nr_vcpus + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	vm->vcpus = n;
	n[vm->nr_vcpus].vcpu = vcpu;
	n[vm->nr_vcpus].f = *f;
	vm->nr_vcpus++;
	return 0;
}

static bool vm_known(const struct kvm_vmm_stats *v, int fd)
{
	for (int i = 0; i < v->nr_vms; i++)
		if (v->vms[i].vm_fd == fd)
			return true;
	return false;
}

/* N of a vCPU stats id "kvm-PID/vcpu-N"; -1 if it is not one. */
static int vcpu_of_id(const char *id)
{
	const char *p = strstr(id, "/vcpu-");

	return p && isdigit((unsigned char)p[6]) ? atoi(p + 6) : -1;
}

/*
 * One pass over /proc/PID/fd for the stats fds the VMM holds: VMs' first (a vCPU's stats name
 * their VM), then vCPUs'. *vm_fds: how many VM fds it has besides (for debugfs).
 */
static int scan_fds(struct kvm_vmm_stats *v, int pidfd, int *vm_fds)
{
	char path[64];
	int err = 0;

	*vm_fds = 0;
	for (int pass = 0; pass < 2 && !err; pass++) {
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/fd", v->pid);
		d = opendir(path);
		if (!d) {
			v->fds_refused = errno == EACCES || errno == EPERM;
			return errno == ENOENT ? -ESRCH : -errno;
		}
		while (!err && (e = readdir(d))) {
			struct kvm_stats_fd f;
			int fd, kind, vcpu;

			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			fd = atoi(e->d_name);
			kind = kvm_fd_kind(v->pid, fd);
			*vm_fds += pass == 0 && kind == FD_VM;
			if (!(pass == 0 && kind == FD_VM_STATS && !vm_known(v, fd)) &&
			    !(pass == 1 && kind == FD_VCPU_STATS))
				continue;
			err = stats_of(pidfd, fd, &f);
			if (err == -EBADF) {		/* closed meanwhile */
				err = 0;
				continue;
			}
			if (err)
				break;
			if (pass == 0) {
				struct kvm_vm_stats *vm = vm_add(v, fd);

				if (!vm) {
					kvm_stats_fd_close(&f);
					err = -ENOMEM;
				} else {
					vm->f = f;
				}
				continue;
			}
			vcpu = vcpu_of_id(f.id);
			if (vcpu < 0 || vcpu_known(v, vcpu, f.id)) {
				kvm_stats_fd_close(&f);
				continue;
			}
			err = vcpu_add(v, vcpu, &f);
			if (err)
				kvm_stats_fd_close(&f);
		}
		closedir(d);
	}
	return err;
}

/* The files a debugfs VM keeps open: one per statistic, ~90 per VM. */
static void raise_nofile(void)
{
	static bool done;
	struct rlimit r;

	if (done || getrlimit(RLIMIT_NOFILE, &r))
		return;
	done = true;
	r.rlim_cur = r.rlim_max;
	setrlimit(RLIMIT_NOFILE, &r);
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/*
 * debugfs kvm/<pid>-<fd>/: one file per statistic, the VM's own and its vCPUs' summed, each
 * opened once and held: an open file holds a reference on the VM, so its values stay readable
 * after the VMM exits, as a stats fd's do. Histograms are skipped (a file shows their first
 * bucket only); the file mode tells cumulative and peak (0644, clearable) from instant (0444).
 */
static int debugfs_open_vm(struct kvm_vmm_stats *v, struct kvm_vm_stats *vm)
{
	char path[128];
	struct dirent *e;
	__u32 n = 0, cap = 0, refused = 0;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), DEBUGFS_KVM "/%d-%d", v->pid, vm->vm_fd);
	vm->dir_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (vm->dir_fd < 0)
		return -errno;
	d = opendir(path);
	if (!d)
		return -errno;
	raise_nofile();
	while ((e = readdir(d))) {
		struct stat st;
		int fd;

		if (e->d_name[0] == '.' || strlen(e->d_name) >= KVM_STAT_NAME_MAX ||
		    ends_with(e->d_name, "_hist"))
			continue;
		fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			err = -errno;
			break;
		}
		/*
		 * A file the directory lists and that root may not open: kernel lockdown (its
		 * "debugfs access is restricted" in dmesg) refuses the writable ones, which are
		 * the cumulative counters; reading the rest would show those as zeros.
		 */
		refused += fd < 0 && (errno == EPERM || errno == EACCES);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			continue;
		}
		if (n == cap) {
			__u32 c = cap ? 2 * cap : 128;
			struct kvm_stat_desc *nd = realloc(vm->f.descs, c * sizeof(*nd));
			int *nf;

			if (nd)
				vm->f.descs = nd;
			nf = nd ? realloc(vm->dfds, c * sizeof(*nf)) : NULL;
			if (!nf) {
				close(fd);
				err = -ENOMEM;
				break;
			}
			vm->dfds = nf;
			cap = c;
		}
		memset(&vm->f.descs[n], 0, sizeof(vm->f.descs[n]));
		snprintf(vm->f.descs[n].name, KVM_STAT_NAME_MAX, "%s", e->d_name);
		vm->f.descs[n].type = st.st_mode & 0200 ? KVM_STAT_CUMULATIVE : KVM_STAT_INSTANT;
		vm->f.descs[n].size = 1;
		vm->f.descs[n].index = n;
		vm->dfds[n] = fd;
		vm->f.nr_descs = ++n;
	}
	closedir(d);
	if (!err && refused) {
		v->debugfs_refused = true;
		err = -EPERM;
	}
	vm->f.nr_data = n;
	vm->f.data = calloc(n ? n : 1, sizeof(__u64));
	vm->f.base = calloc(n ? n : 1, sizeof(__u64));
	vm->f.prev = calloc(n ? n : 1, sizeof(__u64));
	if (!err && (!vm->f.data || !vm->f.base || !vm->f.prev))
		err = -ENOMEM;
	return err;
}

/*
 * A debugfs attribute file prints its value afresh at offset 0. Where it refuses pread (no
 * llseek), the file is opened again by name in the held directory: the held file keeps the VM.
 */
static int debugfs_read_vm(struct kvm_vm_stats *vm)
{
	for (__u32 i = 0; i < vm->f.nr_descs; i++) {
		char buf[32];
		ssize_t n = pread(vm->dfds[i], buf, sizeof(buf) - 1, 0);

		if (n < 0 && errno == ESPIPE) {
			int fd = openat(vm->dir_fd, vm->f.descs[i].name, O_RDONLY | O_CLOEXEC);

			n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
			if (fd >= 0)
				close(fd);
		}
		if (n < 0)
			return -errno;
		buf[n] = 0;
		vm->f.data[i] = strtoull(buf, NULL, 10);
	}
	return 0;
}

static void vm_close(struct kvm_vm_stats *vm)
{
	for (int j = 0; j < vm->nr_vcpus; j++)
		kvm_stats_fd_close(&vm->vcpus[j].f);
	free(vm->vcpus);
	for (__u32 i = 0; vm->dfds && i < vm->f.nr_descs; i++)
		close(vm->dfds[i]);
	free(vm->dfds);
	if (vm->dir_fd > 0)
		close(vm->dir_fd);
	kvm_stats_fd_close(&vm->f);
}

static int open_debugfs(struct kvm_vmm_stats *v)
{
	char path[64];
	struct dirent *e;
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", v->pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		struct kvm_vm_stats *vm;
		int fd;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		fd = atoi(e->d_name);
		if (kvm_fd_kind(v->pid, fd) != FD_VM || vm_known(v, fd))
			continue;
		vm = vm_add(v, fd);
		if (!vm) {
			err = -ENOMEM;
			break;
		}
		snprintf(vm->f.id, sizeof(vm->f.id), "kvm-%d", v->pid);
		err = debugfs_open_vm(v, vm);
		if (err) {
			vm_close(vm);
			v->nr_vms--;
			break;
		}
	}
	closedir(d);
	if (!err)
		v->debugfs = v->nr_vms > 0;
	return err;
}

static bool debugfs_mounted(void)
{
	return !access(DEBUGFS_KVM, R_OK | X_OK);
}

int kvm_vmm_stats_open(struct kvm_vmm_stats *v, int pid, char *why, size_t why_len)
{
	int pidfd, err, vm_fds = 0;

	memset(v, 0, sizeof(*v));
	v->pid = pid;
	v->start = kvm_vmm_proc_start(pid);
	pidfd = sys_pidfd_open(pid);
	if (pidfd < 0) {
		err = -errno;
		if (why)
			snprintf(why, why_len, "pid %d: pidfd_open: %s", pid, strerror(-err));
		return err;
	}
	err = scan_fds(v, pidfd, &vm_fds);
	close(pidfd);
	/* No stats fds of its own (most VMMs): debugfs, where it is mounted and readable. */
	if ((!err && !v->nr_vms && vm_fds) || ((err == -EPERM || err == -EACCES) && vm_fds)) {
		int derr = debugfs_mounted() ? open_debugfs(v) : -ENOENT;

		if (!derr && v->nr_vms)
			return 0;
		if (!err)
			err = derr == -ENOENT ? -ENOTSUP : derr;
	}
	if (!err && !v->nr_vms)
		err = -ENOENT;
	if (err && why) {
		if (v->debugfs_refused)
			snprintf(why, why_len, "pid %d: debugfs refuses KVM's statistics files "
				 "(kernel lockdown restricts debugfs: see dmesg) and the VMM holds no "
				 "stats fds: have it hold them (KVM_GET_STATS_FD), which vmexit copies, "
				 "or run without lockdown", pid);
		else if (v->fds_refused)
			snprintf(why, why_len, "pid %d: cannot list its open files (/proc/%d/fd: %s), "
				 "where its VM and its KVM stats fds are: run as its user, or as root "
				 "(CAP_DAC_READ_SEARCH and CAP_SYS_PTRACE)", pid, pid, strerror(-err));
		else if (err == -EPERM || err == -EACCES)
			snprintf(why, why_len, "pid %d: cannot copy its KVM stats fds (pidfd_getfd: %s) "
				 "nor read debugfs: run as its user or with CAP_SYS_PTRACE, or as root "
				 "with debugfs mounted at /sys/kernel/debug", pid, strerror(-err));
		else if (err == -ENOTSUP)
			snprintf(why, why_len, "pid %d: KVM's statistics of its VM are not reachable: "
				 "mount debugfs (mount -t debugfs none /sys/kernel/debug) and run as "
				 "root, or have the VMM hold its stats fds (KVM_GET_STATS_FD)", pid);
		else if (err == -ENOENT)
			snprintf(why, why_len, "pid %d holds no KVM VM", pid);
		else
			snprintf(why, why_len, "pid %d: KVM statistics: %s", pid, strerror(-err));
	}
	if (err)
		kvm_vmm_stats_close(v);
	return err;
}

int kvm_vmm_stats_rescan(struct kvm_vmm_stats *v)
{
	int pidfd, err, vm_fds;

	if (kvm_vmm_proc_start(v->pid) != v->start)
		return 0;
	if (v->debugfs)
		return open_debugfs(v);
	pidfd = sys_pidfd_open(v->pid);
	if (pidfd < 0)
		return -errno;
	err = scan_fds(v, pidfd, &vm_fds);
	close(pidfd);
	return err;
}

int kvm_vmm_stats_read(struct kvm_vmm_stats *v)
{
	for (int i = 0; i < v->nr_vms; i++) {
		struct kvm_vm_stats *vm = &v->vms[i];
		int err = v->debugfs ? debugfs_read_vm(vm) : kvm_stats_fd_read(&vm->f);

		if (err)
			return err;
		for (int j = 0; j < vm->nr_vcpus; j++) {
			err = kvm_stats_fd_read(&vm->vcpus[j].f);
			if (err)
				return err;
		}
	}
	return 0;
}

void kvm_vmm_stats_close(struct kvm_vmm_stats *v)
{
	for (int i = 0; i < v->nr_vms; i++)
		vm_close(&v->vms[i]);
	free(v->vms);
	v->vms = NULL;
	v->nr_vms = 0;
}

int kvm_vmm_pids(int *pids, int max)
{
	struct dirent *p;
	DIR *d = opendir("/proc");
	int n = 0;

	if (!d)
		return -errno;
	while (n < max && (p = readdir(d))) {
		char path[64];
		struct dirent *e;
		DIR *fds;

		if (!isdigit((unsigned char)p->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", atoi(p->d_name));
		fds = opendir(path);
		if (!fds)
			continue;
		while ((e = readdir(fds))) {
			if (isdigit((unsigned char)e->d_name[0]) &&
			    kvm_fd_kind(atoi(p->d_name), atoi(e->d_name)) == FD_VM) {
				pids[n++] = atoi(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(d);
	return n;
}
