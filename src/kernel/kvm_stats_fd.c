// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kvm.h>
#include "kvm_stats_fd.h"

/* The uapi layout this file reads; a larger header (a future kernel) keeps these fields first. */
_Static_assert(sizeof(struct kvm_stats_header) == 24, "kvm_stats_header layout");
_Static_assert(sizeof(struct kvm_stats_desc) == 16, "kvm_stats_desc layout");

/* Bounds a corrupt or hostile file cannot push us past: a VM has ~40 statistics today. */
#define MAX_DESCS	4096
#define MAX_NAME_SIZE	4096
#define MAX_DATA	(1u << 20)

static int pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EPROTO;		/* shorter than its header says */
		done += n;
	}
	return 0;
}

static int parse_desc(struct kvm_stat_desc *d, const struct kvm_stats_desc *k, __u32 name_size)
{
	__u32 type = (k->flags & KVM_STATS_TYPE_MASK) >> KVM_STATS_TYPE_SHIFT;
	__u32 unit = (k->flags & KVM_STATS_UNIT_MASK) >> KVM_STATS_UNIT_SHIFT;
	__u32 base = k->flags & KVM_STATS_BASE_MASK;
	size_t len = strnlen(k->name, name_size);

	/* A type or unit a newer kernel adds is skipped by the caller, not misread. */
	if (type >= KVM_STAT_NR_TYPES || unit >= KVM_STAT_NR_UNITS ||
	    (base != KVM_STATS_BASE_POW10 && base != KVM_STATS_BASE_POW2))
		return -EOPNOTSUPP;
	if (!len || len == name_size || len >= sizeof(d->name) || !k->size || k->offset % 8)
		return -EPROTO;
	memcpy(d->name, k->name, len);
	d->name[len] = 0;
	d->type = type;
	d->unit = unit;
	d->pow2 = base == KVM_STATS_BASE_POW2;
	d->exponent = k->exponent;
	d->size = k->size;
	d->bucket_size = k->bucket_size;
	d->index = k->offset / 8;
	return 0;
}

int kvm_stats_fd_open(struct kvm_stats_fd *s, int fd)
{
	struct kvm_stats_header h;
	size_t stride;
	char *table = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	err = pread_all(fd, &h, sizeof(h), 0);
	if (err)
		goto fail;
	err = -EPROTO;
	if (!h.name_size || h.name_size > MAX_NAME_SIZE || h.num_desc > MAX_DESCS ||
	    h.data_offset < h.desc_offset)
		goto fail;
	stride = sizeof(struct kvm_stats_desc) + h.name_size;
	/* The id string is name_size long too. */
	if (h.id_offset) {
		char id[MAX_NAME_SIZE];

		err = pread_all(fd, id, h.name_size, h.id_offset);
		if (err)
			goto fail;
		id[h.name_size - 1] = 0;
		snprintf(s->id, sizeof(s->id), "%.*s", (int)sizeof(s->id) - 1, id);
	}
	table = malloc(stride * (h.num_desc ? h.num_desc : 1));
	s->descs = calloc(h.num_desc ? h.num_desc : 1, sizeof(*s->descs));
	err = -ENOMEM;
	if (!table || !s->descs)
		goto fail;
	err = pread_all(fd, table, stride * h.num_desc, h.desc_offset);
	if (err)
		goto fail;
	for (__u32 i = 0; i < h.num_desc; i++) {
		const struct kvm_stats_desc *k = (const void *)(table + i * stride);
		struct kvm_stat_desc *d = &s->descs[s->nr_descs];
		__u32 end;

		err = parse_desc(d, k, h.name_size);
		if (err == -EOPNOTSUPP)
			continue;
		if (err)
			goto fail;
		end = d->index + d->size;
		if (end > MAX_DATA) {
			err = -EPROTO;
			goto fail;
		}
		if (end > s->nr_data)
			s->nr_data = end;
		s->nr_descs++;
	}
	s->data = calloc(s->nr_data ? s->nr_data : 1, sizeof(*s->data));
	s->base = calloc(s->nr_data ? s->nr_data : 1, sizeof(*s->data));
	s->prev = calloc(s->nr_data ? s->nr_data : 1, sizeof(*s->data));
	if (!s->data || !s->base || !s->prev) {
		free(s->data);
		free(s->base);
		free(s->prev);
		s->data = s->base = s->prev = NULL;
		err = -ENOMEM;
		goto fail;
	}
	s->data_offset = h.data_offset;
	s->fd = fd;
	free(table);
	return 0;
fail:
	free(table);
	free(s->descs);
	s->descs = NULL;
	s->nr_descs = 0;
	close(fd);
	return err;
}

int kvm_stats_fd_read(struct kvm_stats_fd *s)
{
	if (!s->nr_data)
		return 0;
	return pread_all(s->fd, s->data, s->nr_data * sizeof(*s->data), s->data_offset);
}

const struct kvm_stat_desc *kvm_stats_fd_find(const struct kvm_stats_fd *s, const char *name)
{
	for (__u32 i = 0; i < s->nr_descs; i++)
		if (!strcmp(s->descs[i].name, name))
			return &s->descs[i];
	return NULL;
}

void kvm_stats_fd_close(struct kvm_stats_fd *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->descs);
	free(s->data);
	free(s->base);
	free(s->prev);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

const char *kvm_stat_type_name(enum kvm_stat_type t)
{
	static const char *const names[KVM_STAT_NR_TYPES] = {
		[KVM_STAT_CUMULATIVE] = "cumulative", [KVM_STAT_INSTANT] = "instant",
		[KVM_STAT_PEAK] = "peak", [KVM_STAT_LINEAR_HIST] = "linear_hist",
		[KVM_STAT_LOG_HIST] = "log_hist",
	};

	return t < KVM_STAT_NR_TYPES ? names[t] : "?";
}

double kvm_stat_scale(const struct kvm_stat_desc *d, double raw)
{
	return raw * pow(d->pow2 ? 2.0 : 10.0, d->exponent);
}

double kvm_stat_bucket_le(const struct kvm_stat_desc *d, __u32 i)
{
	if (i + 1 >= d->size)
		return INFINITY;
	if (d->type == KVM_STAT_LINEAR_HIST)
		return (double)(i + 1) * d->bucket_size - 1;
	/* Log: bucket 0 holds 0, bucket i values of i bits, up to 2^i - 1. */
	return ldexp(1.0, i) - 1;
}
