// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/kvm.h>
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

/* Link target of /proc/PID/fd/FD: -1 kvm-vm, N >= 0 kvm-vcpu:N, -2 anything else. */
static int kvm_fd_kind(int pid, int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return -2;
	link[n] = 0;
	if (!strcmp(link, "anon_inode:kvm-vm"))
		return -1;
	if (!strncmp(link, "anon_inode:kvm-vcpu:", 20) && isdigit((unsigned char)link[20]))
		return atoi(link + 20);
	return -2;
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

static int stats_of(int pidfd, int fd, struct kvm_stats_fd *out)
{
	int copy = sys_pidfd_getfd(pidfd, fd), sfd, err;

	if (copy < 0)
		return -errno;
	sfd = ioctl(copy, KVM_GET_STATS_FD, NULL);
	err = sfd < 0 ? -errno : 0;
	/* The stats fd holds its own reference on the VM: the copy is not needed. */
	close(copy);
	if (err)
		return err;
	return kvm_stats_fd_open(out, sfd);
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

/* One pass over /proc/PID/fd: VMs first (a vCPU's stats name their VM), then vCPUs. */
static int scan_fds(struct kvm_vmm_stats *v, int pidfd)
{
	char path[64];
	int err = 0;

	for (int pass = 0; pass < 2 && !err; pass++) {
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/fd", v->pid);
		d = opendir(path);
		if (!d)
			return -errno == -ENOENT ? -ESRCH : -errno;
		while (!err && (e = readdir(d))) {
			int fd, kind;
			struct kvm_stats_fd f;

			if (!isdigit((unsigned char)e->d_name[0]))
				continue;
			fd = atoi(e->d_name);
			kind = kvm_fd_kind(v->pid, fd);
			if (pass == 0 && kind == -1 && !vm_known(v, fd)) {
				struct kvm_vm_stats *vm;

				err = stats_of(pidfd, fd, &f);
				if (err == -EBADF)	/* closed meanwhile */
					err = 0;
				else if (!err && !(vm = vm_add(v, fd)))
					err = -ENOMEM;
				else if (!err)
					vm->f = f;
			} else if (pass == 1 && kind >= 0) {
				err = stats_of(pidfd, fd, &f);
				if (err == -EBADF) {
					err = 0;
					continue;
				}
				if (err)
					break;
				if (vcpu_known(v, kind, f.id)) {
					kvm_stats_fd_close(&f);
					continue;
				}
				err = vcpu_add(v, kind, &f);
				if (err)
					kvm_stats_fd_close(&f);
			}
		}
		closedir(d);
	}
	return err;
}

/* debugfs: kvm/<pid>-<fd>/<stat>, one number per file. */
static int debugfs_read_vm(struct kvm_vmm_stats *v, struct kvm_vm_stats *vm, bool descs)
{
	char path[128];
	struct dirent *e;
	DIR *d;
	__u32 n = 0;

	snprintf(path, sizeof(path), DEBUGFS_KVM "/%d-%d", v->pid, vm->vm_fd);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char file[512];
		struct stat st;
		unsigned long long val;
		FILE *f;

		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (e->d_name[0] == '.' || stat(file, &st) || !S_ISREG(st.st_mode) ||
		    strlen(e->d_name) >= KVM_STAT_NAME_MAX)
			continue;
		f = fopen(file, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &val) != 1) {
			fclose(f);
			continue;
		}
		fclose(f);
		if (descs) {
			struct kvm_stat_desc *nd = realloc(vm->f.descs, (n + 1) * sizeof(*nd));
			__u64 *dd = realloc(vm->f.data, (n + 1) * sizeof(*dd));

			if (nd)
				vm->f.descs = nd;
			if (dd)
				vm->f.data = dd;
			if (!nd || !dd) {
				closedir(d);
				return -ENOMEM;
			}
			memset(&nd[n], 0, sizeof(nd[n]));
			snprintf(nd[n].name, sizeof(nd[n].name), "%s", e->d_name);
			/* Clearable files (write 0) are the cumulative and peak ones. */
			nd[n].type = st.st_mode & 0200 ? KVM_STAT_CUMULATIVE : KVM_STAT_INSTANT;
			nd[n].size = 1;
			nd[n].index = n;
			vm->f.data[n] = val;
			vm->f.nr_descs = vm->f.nr_data = ++n;
		} else {
			const struct kvm_stat_desc *sd = kvm_stats_fd_find(&vm->f, e->d_name);

			if (sd)
				vm->f.data[sd->index] = val;
		}
	}
	closedir(d);
	if (descs) {
		vm->f.base = calloc(n ? n : 1, sizeof(__u64));
		vm->f.prev = calloc(n ? n : 1, sizeof(__u64));
		if (!vm->f.base || !vm->f.prev)
			return -ENOMEM;
	}
	return 0;
}

static int open_debugfs(struct kvm_vmm_stats *v)
{
	char path[64];
	struct dirent *e;
	int err = -ENOENT;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", v->pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		struct kvm_vm_stats *vm;
		int fd;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		fd = atoi(e->d_name);
		if (kvm_fd_kind(v->pid, fd) != -1 || vm_known(v, fd))
			continue;
		vm = vm_add(v, fd);
		if (!vm) {
			err = -ENOMEM;
			break;
		}
		snprintf(vm->f.id, sizeof(vm->f.id), "kvm-%d", v->pid);
		err = debugfs_read_vm(v, vm, true);
		if (err) {
			v->nr_vms--;
			break;
		}
	}
	closedir(d);
	if (!err && !v->nr_vms)
		err = -ENOENT;
	v->debugfs = !err;
	return err;
}

int kvm_vmm_stats_open(struct kvm_vmm_stats *v, int pid, char *why, size_t why_len)
{
	int pidfd, err;

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
	err = scan_fds(v, pidfd);
	close(pidfd);
	if ((err == -EPERM || err == -EACCES) && !open_debugfs(v))
		return 0;
	if (!err && !v->nr_vms)
		err = -ENOENT;
	if (err && why) {
		if (err == -EPERM || err == -EACCES)
			snprintf(why, why_len, "pid %d: cannot copy its KVM fds (pidfd_getfd: %s): "
				 "run as its user or with CAP_SYS_PTRACE, or as root with debugfs "
				 "mounted at /sys/kernel/debug", pid, strerror(-err));
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
	int pidfd, err;

	if (v->debugfs || kvm_vmm_proc_start(v->pid) != v->start)
		return 0;
	pidfd = sys_pidfd_open(v->pid);
	if (pidfd < 0)
		return -errno;
	err = scan_fds(v, pidfd);
	close(pidfd);
	return err;
}

int kvm_vmm_stats_read(struct kvm_vmm_stats *v)
{
	for (int i = 0; i < v->nr_vms; i++) {
		struct kvm_vm_stats *vm = &v->vms[i];
		int err = v->debugfs ? debugfs_read_vm(v, vm, false) : kvm_stats_fd_read(&vm->f);

		/* debugfs' directory goes with the VM: its last values stay. */
		if (err && !v->debugfs)
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
	for (int i = 0; i < v->nr_vms; i++) {
		for (int j = 0; j < v->vms[i].nr_vcpus; j++)
			kvm_stats_fd_close(&v->vms[i].vcpus[j].f);
		free(v->vms[i].vcpus);
		kvm_stats_fd_close(&v->vms[i].f);
	}
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
			    kvm_fd_kind(atoi(p->d_name), atoi(e->d_name)) == -1) {
				pids[n++] = atoi(p->d_name);
				break;
			}
		}
		closedir(fds);
	}
	closedir(d);
	return n;
}
