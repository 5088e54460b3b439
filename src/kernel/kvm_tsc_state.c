// SPDX-License-Identifier: GPL-2.0
/* Each vCPU's applied TSC offset and scaling from KVM's debugfs (kvm_tsc_state.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#include "kvm_tsc_state.h"

#define KVM_DEBUGFS	"/sys/kernel/debug/kvm"
#define DEBUGFS_MAGIC	0x64626720	/* include/uapi/linux/magic.h */

static const char *kvm_dir(void)
{
	const char *d = getenv("VMEXIT_KVM_DEBUGFS");

	return d && *d ? d : KVM_DEBUGFS;
}

int kvm_tsc_state_check(char *err, size_t errlen)
{
	const char *dir = kvm_dir();
	DIR *d = opendir(dir);
	struct statfs fs;
	int e = errno;

	if (d) {
		closedir(d);
		return 0;
	}
	if (e == ENOENT && !strcmp(dir, KVM_DEBUGFS) &&
	    (statfs("/sys/kernel/debug", &fs) || fs.f_type != DEBUGFS_MAGIC))
		snprintf(err, errlen, "debugfs is not mounted (mount -t debugfs none "
			 "/sys/kernel/debug)");
	else if (e == ENOENT)
		snprintf(err, errlen, "%s is absent (debugfs not mounted: mount -t debugfs none "
			 "/sys/kernel/debug; or KVM not loaded)", dir);
	else
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(e));
	return -e;
}

/* A number as debugfs prints it: tsc-offset signed (%lld), the others unsigned. */
static int read_u64(const char *path, __u64 *v)
{
	FILE *f = fopen(path, "re");
	char buf[32];
	char *end;

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	errno = 0;
	*v = buf[0] == '-' ? (__u64)strtoll(buf, &end, 10) : strtoull(buf, &end, 10);
	return errno || end == buf ? -1 : 0;
}

static int one_vcpu(const char *dir, __u32 tgid, __s32 vcpu, kvm_tsc_state_fn fn, void *ctx)
{
	struct kvm_tsc_state st = { .tgid = tgid, .vcpu = vcpu };
	char path[1100];
	__u64 bits;

	snprintf(path, sizeof(path), "%s/vcpu%d/tsc-offset", dir, vcpu);
	if (read_u64(path, &st.offset))
		return 0;	/* gone meanwhile, or a KVM without the file */
	snprintf(path, sizeof(path), "%s/vcpu%d/tsc-scaling-ratio", dir, vcpu);
	if (!read_u64(path, &st.ratio)) {
		snprintf(path, sizeof(path), "%s/vcpu%d/tsc-scaling-ratio-frac-bits", dir, vcpu);
		if (read_u64(path, &bits) || bits >= 64)
			st.ratio = 0;
		else
			st.frac_bits = (__u32)bits;
	}
	return fn(ctx, &st);
}

static int one_vm(const char *dir, __u32 tgid, __s32 vcpu, kvm_tsc_state_fn fn, void *ctx)
{
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (vcpu >= 0)
		return one_vcpu(dir, tgid, vcpu, fn, ctx);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		int v;
		char c;

		if (sscanf(e->d_name, "vcpu%d%c", &v, &c) == 1 && v >= 0)
			ret = one_vcpu(dir, tgid, v, fn, ctx);
	}
	closedir(d);
	return ret;
}

int kvm_tsc_state_each(__u32 tgid, __s32 vcpu, kvm_tsc_state_fn fn, void *ctx)
{
	const char *top = kvm_dir();
	char dir[1024];
	DIR *d = opendir(top);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0;
	/* A VMM may hold several VMs (one directory each): each is read. */
	while (!ret && (e = readdir(d))) {
		unsigned int pid, fd;
		char c;

		if (sscanf(e->d_name, "%u-%u%c", &pid, &fd, &c) != 2 || (tgid && pid != tgid))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", top, e->d_name);
		ret = one_vm(dir, pid, vcpu, fn, ctx);
	}
	closedir(d);
	return ret;
}
