// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kvm_source.h"
#include "proc_names.h"

void kvm_source_init(struct kvm_source *ks, const int *pids, int nr_pids,
		     const char *const *names, int nr_names)
{
	const char *skew = getenv("VMEXIT_TEST_KVM_STATS_SKEW");

	memset(ks, 0, sizeof(*ks));
	ks->pids = pids;
	ks->nr_pids = nr_pids;
	ks->names = names;
	ks->nr_names = nr_names;
	if (skew && strchr(skew, ':')) {
		snprintf(ks->skew_name, sizeof(ks->skew_name), "%.*s",
			 (int)(strchr(skew, ':') - skew), skew);
		ks->skew = atoll(strchr(skew, ':') + 1);
	}
}

struct kvm_stats_fd *kvm_guest_fd(struct kvm_guest *g, int i, int *vcpu)
{
	for (int m = 0; m < g->v.nr_vms; m++) {
		struct kvm_vm_stats *vm = &g->v.vms[m];

		if (i == 0) {
			*vcpu = -1;
			return &vm->f;
		}
		if (i <= vm->nr_vcpus) {
			*vcpu = vm->vcpus[i - 1].vcpu;
			return &vm->vcpus[i - 1].f;
		}
		i -= 1 + vm->nr_vcpus;
	}
	return NULL;
}

static int count_fds(const struct kvm_guest *g)
{
	int n = 0;

	for (int m = 0; m < g->v.nr_vms; m++)
		n += 1 + g->v.vms[m].nr_vcpus;
	return n;
}

static void guest_free(struct kvm_guest *g)
{
	kvm_vmm_stats_close(&g->v);
}

static bool wanted_pid(const struct kvm_source *ks, int pid)
{
	if (!ks->nr_pids && !ks->nr_names)
		return true;
	for (int i = 0; i < ks->nr_pids; i++)
		if (ks->pids[i] == pid)
			return true;
	return false;
}

static bool wanted_name(const struct kvm_source *ks, const char *name)
{
	for (int i = 0; i < ks->nr_names; i++)
		if (!strcmp(ks->names[i], name))
			return true;
	return false;
}

static struct kvm_guest *find(struct kvm_source *ks, int pid, unsigned long long start)
{
	for (int i = 0; i < ks->nr; i++)
		if (ks->guests[i].v.pid == pid && ks->guests[i].v.start == start)
			return &ks->guests[i];
	return NULL;
}

static void apply_skew(struct kvm_source *ks, struct kvm_guest *g)
{
	int vcpu = -1;

	if (!ks->skew_name[0])
		return;
	for (int i = 0; i < g->nr_fds; i++) {
		struct kvm_stats_fd *f = kvm_guest_fd(g, i, &vcpu);
		const struct kvm_stat_desc *d = kvm_stats_fd_find(f, ks->skew_name);

		/* The first fd that has it (a vCPU's, or debugfs' VM sums): the guest's total is
		 * off by skew. */
		if (d) {
			f->data[d->index] += ks->skew;
			return;
		}
	}
}

static int add(struct kvm_source *ks, int pid, const char *name)
{
	struct kvm_guest *g;
	char why[256];
	int err;

	if (ks->nr == ks->cap) {
		int cap = ks->cap ? 2 * ks->cap : 16;
		struct kvm_guest *n = realloc(ks->guests, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ks->guests = n;
		ks->cap = cap;
	}
	g = &ks->guests[ks->nr];
	memset(g, 0, sizeof(*g));
	err = kvm_vmm_stats_open(&g->v, pid, why, sizeof(why));
	if (err == -ENOMEM)
		return err;
	if (err) {
		bool perm = err == -EPERM || err == -EACCES;

		/*
		 * -ENOENT, -ESRCH: no VM (yet, or any more), the process gone: the next scan (said
		 * each time with -v). A refusal stays one: said once, -v or not.
		 */
		if (perm ? !ks->said_perm : (err != -ENOENT && err != -ESRCH) || ks->verbose)
			fprintf(stderr, "vmexit: %s\n", why);
		ks->said_perm |= perm;
		return 0;
	}
	snprintf(g->name, sizeof(g->name), "%s", name);
	err = kvm_vmm_stats_read(&g->v);
	if (err) {
		fprintf(stderr, "vmexit: pid %d: cannot read KVM's statistics: %s\n", pid,
			strerror(-err));
		guest_free(g);
		return 0;
	}
	g->nr_fds = count_fds(g);
	/* Running before the start: counted from here. */
	for (int i = 0; !ks->started && i < g->nr_fds; i++) {
		int vcpu;
		struct kvm_stats_fd *f = kvm_guest_fd(g, i, &vcpu);

		memcpy(f->base, f->data, f->nr_data * sizeof(__u64));
		memcpy(f->prev, f->data, f->nr_data * sizeof(__u64));
	}
	ks->nr++;
	apply_skew(ks, g);
	if (ks->verbose) {
		int vcpus = 0;

		for (int m = 0; m < g->v.nr_vms; m++)
			vcpus += g->v.vms[m].nr_vcpus;
		fprintf(stderr, "vmexit: pid %d (%s): KVM statistics from %s: %d VM%s, %d vCPU "
			"file%s, %u statistics\n", pid, name, g->v.debugfs ? "debugfs" :
			"its stats fds", g->v.nr_vms, g->v.nr_vms == 1 ? "" : "s", vcpus,
			vcpus == 1 ? "" : "s", g->v.nr_vms ? g->v.vms[0].f.nr_descs : 0);
	}
	return 0;
}

bool kvm_source_refused(const struct kvm_source *ks)
{
	return ks->said_perm && !ks->nr;
}

static int scan(struct kvm_source *ks)
{
	int pids[4096], n = kvm_vmm_pids(pids, 4096);

	for (int i = 0; i < n; i++) {
		char name[KVM_SOURCE_NAME_MAX];
		unsigned long long start = kvm_vmm_proc_start(pids[i]);
		int err;

		if (!start || find(ks, pids[i], start))
			continue;
		if (guest_name_for_pid(pids[i], name, sizeof(name)))
			continue;
		if (!wanted_pid(ks, pids[i]) && !wanted_name(ks, name))
			continue;
		err = add(ks, pids[i], name);
		if (err)
			return err;
	}
	/*
	 * A -p VMM whose open files we may not list (another user's) is in no scan: try it, so
	 * that its refusal is said (once) instead of nothing read, and silently.
	 */
	for (int i = 0; i < ks->nr_pids; i++) {
		int pid = ks->pids[i], err;
		unsigned long long start = kvm_vmm_proc_start(pid);
		char path[64], name[KVM_SOURCE_NAME_MAX];
		DIR *d;

		if (!start || find(ks, pid, start) || ks->said_perm)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		d = opendir(path);
		if (d) {
			closedir(d);
			continue;
		}
		if ((errno != EACCES && errno != EPERM) || guest_name_for_pid(pid, name, sizeof(name)))
			continue;
		err = add(ks, pid, name);
		if (err)
			return err;
	}
	return 0;
}

int kvm_source_update(struct kvm_source *ks, double now)
{
	int err = scan(ks);

	ks->started = true;
	if (err)
		return err;
	for (int i = 0; i < ks->nr; i++) {
		struct kvm_guest *g = &ks->guests[i];

		if (g->ended)
			continue;
		/* Gone, or its pid another process's: these values are the last. */
		if (kvm_vmm_proc_start(g->v.pid) != g->v.start) {
			g->ended = true;
			g->ended_at = now;
		} else {
			kvm_vmm_stats_rescan(&g->v);
		}
		/* A failed read keeps the last values: read again at the next update. */
		if (kvm_vmm_stats_read(&g->v))
			continue;
		g->nr_fds = count_fds(g);
		apply_skew(ks, g);
	}
	return 0;
}

void kvm_source_mark(struct kvm_source *ks)
{
	int vcpu = -1;

	for (int i = 0; i < ks->nr; i++) {
		struct kvm_guest *g = &ks->guests[i];

		for (int j = 0; j < g->nr_fds; j++) {
			struct kvm_stats_fd *f = kvm_guest_fd(g, j, &vcpu);

			memcpy(f->prev, f->data, f->nr_data * sizeof(__u64));
		}
	}
}

void kvm_source_forget(struct kvm_source *ks, double now, double keep_s)
{
	int n = 0;

	for (int i = 0; i < ks->nr; i++) {
		if (ks->guests[i].ended && now - ks->guests[i].ended_at > keep_s) {
			guest_free(&ks->guests[i]);
			continue;
		}
		ks->guests[n++] = ks->guests[i];
	}
	ks->nr = n;
}

void kvm_source_free(struct kvm_source *ks)
{
	for (int i = 0; i < ks->nr; i++)
		guest_free(&ks->guests[i]);
	free(ks->guests);
	ks->guests = NULL;
	ks->nr = ks->cap = 0;
}

__u64 kvm_guest_value(const struct kvm_guest *g, int i, const struct kvm_stat_desc *d, __u32 item)
{
	int vcpu = -1;
	const struct kvm_stats_fd *f = kvm_guest_fd((struct kvm_guest *)g, i, &vcpu);

	return f->data[d->index + item];
}

__u64 kvm_guest_since_base(const struct kvm_guest *g, int i, const struct kvm_stat_desc *d,
			   __u32 item)
{
	int vcpu = -1;
	const struct kvm_stats_fd *f = kvm_guest_fd((struct kvm_guest *)g, i, &vcpu);

	return f->data[d->index + item] - f->base[d->index + item];
}

__u64 kvm_guest_since_mark(const struct kvm_guest *g, int i, const struct kvm_stat_desc *d,
			   __u32 item)
{
	int vcpu = -1;
	const struct kvm_stats_fd *f = kvm_guest_fd((struct kvm_guest *)g, i, &vcpu);

	return f->data[d->index + item] - f->prev[d->index + item];
}

__u64 kvm_guest_total(struct kvm_guest *g, const char *name, bool *found)
{
	__u64 sum = 0;
	int vcpu = -1;

	*found = false;
	for (int i = 0; i < g->nr_fds; i++) {
		struct kvm_stats_fd *f = kvm_guest_fd(g, i, &vcpu);
		const struct kvm_stat_desc *d = kvm_stats_fd_find(f, name);

		if (!d || d->type != KVM_STAT_CUMULATIVE)
			continue;
		*found = true;
		sum += kvm_guest_since_base(g, i, d, 0);
	}
	return sum;
}

__u64 kvm_guest_hist_total(struct kvm_guest *g, const char *name, bool *found)
{
	__u64 sum = 0;
	int vcpu = -1;

	*found = false;
	for (int i = 0; i < g->nr_fds; i++) {
		struct kvm_stats_fd *f = kvm_guest_fd(g, i, &vcpu);
		const struct kvm_stat_desc *d = kvm_stats_fd_find(f, name);

		if (!d || (d->type != KVM_STAT_LOG_HIST && d->type != KVM_STAT_LINEAR_HIST))
			continue;
		*found = true;
		for (__u32 item = 0; item < d->size; item++)
			sum += kvm_guest_since_base(g, i, d, item);
	}
	return sum;
}
