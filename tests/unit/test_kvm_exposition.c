// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_exposition: serve --source kvm's series from KVM statistics files laid out as the
 * kernel's (memfds): one VM with its own statistics and two vCPUs, per VM and per vCPU.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>
#include "check.h"
#include "kvm_exposition.h"

#define NAME_SIZE	48
#define DESC_SIZE	(sizeof(struct kvm_stats_desc) + NAME_SIZE)

struct fake {
	const char *name;
	__u32 flags;
	__s16 exponent;
	__u16 size;
	__u64 v[4];
};

static int make_file(const char *id, const struct fake *f, int n)
{
	struct kvm_stats_header h = { .name_size = NAME_SIZE, .num_desc = n,
				      .id_offset = sizeof(h) };
	static char buf[8192];
	__u32 off = 0;
	int fd = memfd_create("kvm-stats", 0);

	memset(buf, 0, sizeof(buf));
	h.desc_offset = h.id_offset + NAME_SIZE;
	h.data_offset = h.desc_offset + n * DESC_SIZE;
	strcpy(buf + h.id_offset, id);
	for (int i = 0; i < n; i++) {
		struct kvm_stats_desc *d = (void *)(buf + h.desc_offset + i * DESC_SIZE);

		d->flags = f[i].flags;
		d->exponent = f[i].exponent;
		d->size = f[i].size;
		d->offset = off;
		strcpy(d->name, f[i].name);
		memcpy(buf + h.data_offset + off, f[i].v, 8 * f[i].size);
		off += 8 * f[i].size;
	}
	memcpy(buf, &h, sizeof(h));
	if (fd < 0 || write(fd, buf, h.data_offset + off) != (ssize_t)(h.data_offset + off))
		return -1;
	return fd;
}

#define CUM	(KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_BASE_POW10)
#define NS	(KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)

static void vcpu_file(struct kvm_vcpu_stats *c, int vcpu, __u64 io, __u64 hlt)
{
	const struct fake f[] = {
		{ "exits", CUM, 0, 1, { io + hlt + 7 } },
		{ "io_exits", CUM, 0, 1, { io } },
		{ "halt_exits", CUM, 0, 1, { hlt } },
		{ "halt_wait_ns", CUM | NS, -9, 1, { 1500000000ull } },
		{ "halt_wait_hist", KVM_STATS_TYPE_LOG_HIST | NS, -9, 4, { 1, 2, 3, 4 } },
	};
	char id[32];

	snprintf(id, sizeof(id), "kvm-77/vcpu-%d", vcpu);
	c->vcpu = vcpu;
	CHECK(!kvm_stats_fd_open(&c->f, make_file(id, f, 5)));
	CHECK(!kvm_stats_fd_read(&c->f));
}

static bool has(const struct expo_buf *b, const char *line)
{
	char *p = strstr(b->p, line);

	if (!p)
		fprintf(stderr, "no line: %s", line);
	return p;
}

int main(void)
{
	const struct fake vmf[] = {
		{ "pages_4k", KVM_STATS_TYPE_INSTANT, 0, 1, { 300 } },
		{ "max_mmu_page_hash_collisions", KVM_STATS_TYPE_PEAK, 0, 1, { 9 } },
	};
	struct kvm_source ks;
	struct kvm_guest *g = calloc(1, sizeof(*g));
	struct kvm_vm_stats *vm = calloc(1, sizeof(*vm));
	struct expo_buf b = {};

	kvm_source_init(&ks, NULL, 0, NULL, 0);
	ks.guests = g;
	ks.nr = ks.cap = 1;
	snprintf(g->name, sizeof(g->name), "web\"01");
	g->v.pid = 77;
	g->v.vms = vm;
	g->v.nr_vms = 1;
	CHECK(!kvm_stats_fd_open(&vm->f, make_file("kvm-77", vmf, 2)));
	CHECK(!kvm_stats_fd_read(&vm->f));
	vm->vcpus = calloc(2, sizeof(*vm->vcpus));
	vm->nr_vcpus = 2;
	vcpu_file(&vm->vcpus[0], 0, 100, 5);
	vcpu_file(&vm->vcpus[1], 1, 40, 2);
	g->nr_fds = 3;

	/* Per vCPU: the exit counters under the BPF names, the rest under KVM's. */
	CHECK(!kvm_expo_render(&ks, true, EXPO_TEXT, &b));
	if (getenv("DUMP"))
		fputs(b.p, stderr);
	CHECK(has(&b, "vmexit_kvm_guests 1\n"));
	CHECK(has(&b, "# TYPE vmexit_exits_total counter\n"));
	CHECK(has(&b, "vmexit_exits_total{guest=\"web\\\"01\",pid=\"77\",vcpu=\"0\",kind=\"kernel\","
		  "isa=\"kvm\",reason=\"IO\"} 100\n"));
	CHECK(has(&b, "vmexit_exits_total{guest=\"web\\\"01\",pid=\"77\",vcpu=\"1\",kind=\"kernel\","
		  "isa=\"kvm\",reason=\"HLT\"} 2\n"));
	/* exits counts every VM exit: its own family, not summed with the reasons. */
	CHECK(has(&b, "vmexit_kvm_exits_total{guest=\"web\\\"01\",pid=\"77\",vcpu=\"0\"} 112\n"));
	CHECK(has(&b, "# TYPE vmexit_kvm_halt_wait_seconds_total counter\n"));
	CHECK(has(&b, "vmexit_kvm_halt_wait_seconds_total{guest=\"web\\\"01\",pid=\"77\",vcpu=\"1\"}"
		  " 1.5\n"));
	/* Log histogram: bucket i holds [2^(i-1), 2^i), le its top in seconds, cumulative. */
	CHECK(has(&b, "# TYPE vmexit_kvm_halt_wait_seconds histogram\n"));
	CHECK(has(&b, "vmexit_kvm_halt_wait_seconds_bucket{guest=\"web\\\"01\",pid=\"77\",vcpu=\"0\","
		  "le=\"0\"} 1\n"));
	CHECK(has(&b, "vmexit_kvm_halt_wait_seconds_bucket{guest=\"web\\\"01\",pid=\"77\",vcpu=\"0\","
		  "le=\"0.000000003\"} 6\n"));
	CHECK(has(&b, "vmexit_kvm_halt_wait_seconds_bucket{guest=\"web\\\"01\",pid=\"77\",vcpu=\"0\","
		  "le=\"+Inf\"} 10\n"));
	CHECK(has(&b, "vmexit_kvm_halt_wait_seconds_count{guest=\"web\\\"01\",pid=\"77\",vcpu=\"0\"}"
		  " 10\n"));
	CHECK(has(&b, "# TYPE vmexit_kvm_pages_4k gauge\nvmexit_kvm_pages_4k{guest=\"web\\\"01\","
		  "pid=\"77\"} 300\n"));
	CHECK(!strstr(b.p, "# EOF"));

	/* Per VM: the vCPUs summed (a peak: the highest), OpenMetrics' family names. */
	b.len = 0;
	CHECK(!kvm_expo_render(&ks, false, EXPO_OPENMETRICS, &b));
	CHECK(has(&b, "# TYPE vmexit_exits counter\n"));
	CHECK(has(&b, "vmexit_exits_total{guest=\"web\\\"01\",pid=\"77\",kind=\"kernel\",isa=\"kvm\","
		  "reason=\"IO\"} 140\n"));
	CHECK(has(&b, "vmexit_kvm_exits_total{guest=\"web\\\"01\",pid=\"77\"} 161\n"));
	CHECK(has(&b, "vmexit_kvm_halt_wait_seconds_count{guest=\"web\\\"01\",pid=\"77\"} 20\n"));
	CHECK(has(&b, "vmexit_kvm_max_mmu_page_hash_collisions{guest=\"web\\\"01\",pid=\"77\"} 9\n"));
	CHECK(!strstr(b.p, "vcpu=\""));
	CHECK(b.len > 6 && !strcmp(b.p + b.len - 6, "# EOF\n"));
	expo_buf_free(&b);
	kvm_source_free(&ks);
	CHECK_DONE("kvm_exposition");
}
