// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_stats_fd: KVM's binary statistics read from a file laid out as the kernel lays out a
 * stats fd (header, id, descriptors of name_size-byte names, data), in a memfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>
#include "check.h"
#include "kvm_stats_fd.h"

#define NAME_SIZE	48	/* the kernel's KVM_STATS_NAME_SIZE */
#define DESC_SIZE	(sizeof(struct kvm_stats_desc) + NAME_SIZE)

struct fake_desc {
	const char *name;
	__u32 flags;
	__s16 exponent;
	__u16 size;
	__u32 bucket_size;
};

static const struct fake_desc descs[] = {
	{ "exits", KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10, 0, 1, 0 },
	{ "halt_wait_ns", KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_SECONDS |
	  KVM_STATS_BASE_POW10, -9, 1, 0 },
	{ "halt_wait_hist", KVM_STATS_TYPE_LOG_HIST | KVM_STATS_UNIT_SECONDS |
	  KVM_STATS_BASE_POW10, -9, 32, 0 },
	/* A type from a kernel newer than this build: skipped, not misread. */
	{ "future_thing", 0xe, 0, 1, 0 },
	{ "linear", KVM_STATS_TYPE_LINEAR_HIST | KVM_STATS_UNIT_NONE, 0, 4, 10 },
	{ "pages_4k", KVM_STATS_TYPE_INSTANT | KVM_STATS_UNIT_NONE, 0, 1, 0 },
	{ "max_mmu_rmap_size", KVM_STATS_TYPE_PEAK | KVM_STATS_UNIT_BYTES | KVM_STATS_BASE_POW2,
	  10, 1, 0 },
};
#define NR_DESCS	(sizeof(descs) / sizeof(descs[0]))

/* A stats file of descs, data item i = 1000 + i + bump; its fd. */
static int make_file(__u64 bump, __u32 nr_desc, size_t cut)
{
	struct kvm_stats_header h = { .name_size = NAME_SIZE, .num_desc = nr_desc,
				      .id_offset = sizeof(h) };
	static char buf[65536];
	__u32 off = 0;
	size_t len;
	int fd = memfd_create("kvm-stats", 0);

	memset(buf, 0, sizeof(buf));
	h.desc_offset = h.id_offset + NAME_SIZE;
	h.data_offset = h.desc_offset + NR_DESCS * DESC_SIZE;
	strcpy(buf + h.id_offset, "kvm-4242/vcpu-3");
	for (__u32 i = 0; i < NR_DESCS; i++) {
		struct kvm_stats_desc *d = (void *)(buf + h.desc_offset + i * DESC_SIZE);

		d->flags = descs[i].flags;
		d->exponent = descs[i].exponent;
		d->size = descs[i].size;
		d->offset = off;
		d->bucket_size = descs[i].bucket_size;
		strcpy(d->name, descs[i].name);
		off += 8 * descs[i].size;
	}
	for (__u32 i = 0; i < off / 8; i++)
		((__u64 *)(buf + h.data_offset))[i] = 1000 + i + bump;
	memcpy(buf, &h, sizeof(h));
	len = h.data_offset + off;
	if (cut)
		len = cut;
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len) {
		perror("memfd");
		return -1;
	}
	return fd;
}

static void test_read(void)
{
	struct kvm_stats_fd s;
	const struct kvm_stat_desc *d;
	int fd = make_file(0, NR_DESCS, 0);

	CHECK(fd >= 0);
	CHECK_EQ_U64(kvm_stats_fd_open(&s, fd), 0);
	CHECK_STR(s.id, "kvm-4242/vcpu-3");
	CHECK_EQ_U64(s.nr_descs, NR_DESCS - 1);
	CHECK(!kvm_stats_fd_find(&s, "future_thing"));
	CHECK_EQ_U64(kvm_stats_fd_read(&s), 0);

	d = kvm_stats_fd_find(&s, "exits");
	CHECK(d && d->type == KVM_STAT_CUMULATIVE && d->unit == KVM_STAT_UNIT_NONE);
	CHECK(d && s.data[d->index] == 1000);
	d = kvm_stats_fd_find(&s, "halt_wait_ns");
	CHECK(d && d->unit == KVM_STAT_UNIT_SECONDS && d->exponent == -9 && !d->pow2);
	CHECK(d && s.data[d->index] == 1001);
	CHECK(d && fabs(kvm_stat_scale(d, 1e9) - 1.0) < 1e-12);
	d = kvm_stats_fd_find(&s, "halt_wait_hist");
	CHECK(d && d->type == KVM_STAT_LOG_HIST && d->size == 32);
	/* Items after the hist: its 32 items were not mistaken for one. */
	CHECK(d && s.data[d->index + 31] == 1002 + 31);
	CHECK(d && kvm_stat_bucket_le(d, 0) == 0 && kvm_stat_bucket_le(d, 1) == 1 &&
	      kvm_stat_bucket_le(d, 2) == 3 && kvm_stat_bucket_le(d, 10) == 1023);
	CHECK(d && isinf(kvm_stat_bucket_le(d, 31)));
	/* The skipped descriptor's item still has its place: offsets, not positions. */
	d = kvm_stats_fd_find(&s, "linear");
	CHECK(d && d->type == KVM_STAT_LINEAR_HIST && d->bucket_size == 10 && d->size == 4);
	CHECK(d && s.data[d->index] == 1000 + 1 + 1 + 32 + 1);
	CHECK(d && kvm_stat_bucket_le(d, 0) == 9 && kvm_stat_bucket_le(d, 2) == 29);
	CHECK(d && isinf(kvm_stat_bucket_le(d, 3)));
	d = kvm_stats_fd_find(&s, "pages_4k");
	CHECK(d && d->type == KVM_STAT_INSTANT);
	d = kvm_stats_fd_find(&s, "max_mmu_rmap_size");
	CHECK(d && d->type == KVM_STAT_PEAK && d->pow2 && d->unit == KVM_STAT_UNIT_BYTES);
	CHECK(d && kvm_stat_scale(d, 3) == 3072);
	CHECK_STR(kvm_stat_type_name(KVM_STAT_LOG_HIST), "log_hist");

	/* Values change under the same descriptors: a read takes them afresh. */
	{
		int fd2 = make_file(500, NR_DESCS, 0);
		char blk[65536];
		ssize_t n = pread(fd2, blk, sizeof(blk), 0);

		CHECK(n > 0 && pwrite(s.fd, blk, n, 0) == n);
		close(fd2);
	}
	CHECK_EQ_U64(kvm_stats_fd_read(&s), 0);
	d = kvm_stats_fd_find(&s, "exits");
	CHECK(d && s.data[d->index] == 1500);
	kvm_stats_fd_close(&s);
}

static void test_bad(void)
{
	struct kvm_stats_fd s;
	/* Cut inside the descriptors: the header promises more than the file holds. */
	int fd = make_file(0, NR_DESCS, sizeof(struct kvm_stats_header) + NAME_SIZE + DESC_SIZE);

	CHECK_EQ_U64(kvm_stats_fd_open(&s, fd), (__u64)-EPROTO);
	/* The fd was closed: a second close fails. */
	CHECK(close(fd) < 0 && errno == EBADF);
	/* An empty file has no header. */
	fd = memfd_create("empty", 0);
	CHECK_EQ_U64(kvm_stats_fd_open(&s, fd), (__u64)-EPROTO);
	/* Not a file that can be read from offset 0 at all. */
	CHECK(kvm_stats_fd_open(&s, -1) < 0);
}

int main(void)
{
	test_read();
	test_bad();
	CHECK_DONE("kvm_stats_fd");
}
