/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the BPF tests (tests/bpf) and benchmarks (bench/) share: a member's offset from a BPF
 * object's own BTF (no copy of a kernel-side layout in userspace), and a libbpf print callback
 * that keeps warnings but drops the debug chatter.
 */
#ifndef VMEXIT_BPF_TEST_UTIL_H
#define VMEXIT_BPF_TEST_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* Byte offset of MEMBER in struct STRUCT_NAME as OBJ's BTF lays it out; -1 if there is none. */
static inline long btf_struct_member_offset(const struct bpf_object *obj, const char *struct_name,
					    const char *member)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_member *m;
	const struct btf_type *t;
	int id = btf ? btf__find_by_name_kind(btf, struct_name, BTF_KIND_STRUCT) : -1;

	if (id < 0)
		return -1;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		if (!strcmp(btf__name_by_offset(btf, m->name_off), member))
			return btf_member_bit_offset(t, i) / 8;
	}
	return -1;
}

/* libbpf_set_print() callback: warnings and errors only. */
static inline int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* The entries of map m (keys of up to 64 bytes), counted from userspace. */
static inline unsigned int map_count(struct bpf_map *m)
{
	char key[64], next[64];
	void *prev = NULL;
	unsigned int n = 0;

	while (!bpf_map__get_next_key(m, prev, next, bpf_map__key_size(m))) {
		memcpy(key, next, sizeof(key));
		prev = key;
		n++;
	}
	return n;
}

#endif /* VMEXIT_BPF_TEST_UTIL_H */
