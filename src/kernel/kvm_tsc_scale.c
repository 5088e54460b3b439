// SPDX-License-Identifier: GPL-2.0
/* Each vCPU's TSC scaling ratio from KVM's debugfs (kvm_tsc_scale.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "kvm_tsc_scale.h"

#define KVM_DEBUGFS	"/sys/kernel/debug/kvm"

static int read_u64(const char *path, __u64 *v)
{
	FILE *f = fopen(path, "re");
	unsigned long long x;
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = x;
	return ok ? 0 : -1;
}

static int one_vm(const char *dir, __u32 tgid, kvm_tsc_scale_fn fn, void *ctx)
{
	char path[1024];
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		__u64 ratio, bits;
		int vcpu;

		if (sscanf(e->d_name, "vcpu%d", &vcpu) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/tsc-scaling-ratio", dir, e->d_name);
		if (read_u64(path, &ratio))
			continue;
		snprintf(path, sizeof(path), "%s/%s/tsc-scaling-ratio-frac-bits", dir, e->d_name);
		if (read_u64(path, &bits) || bits >= 64 || ratio == 1ull << bits)
			continue;
		ret = fn(ctx, tgid, vcpu, ratio, (__u32)bits);
	}
	closedir(d);
	return ret;
}

int kvm_tsc_scale_each(kvm_tsc_scale_fn fn, void *ctx)
{
	char dir[300];
	DIR *d = opendir(KVM_DEBUGFS);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		unsigned int pid, fd;

		if (sscanf(e->d_name, "%u-%u", &pid, &fd) != 2)
			continue;
		snprintf(dir, sizeof(dir), KVM_DEBUGFS "/%s", e->d_name);
		ret = one_vm(dir, pid, fn, ctx);
	}
	closedir(d);
	return ret;
}
