/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's memory of guest names by VMM pid: each asked once (the kernel's copy of the
 * command line, else /proc through guest_names.h) while the process lives, kept after it
 * exits, or learnt from a record file. guest_names.h is the stateless /proc side.
 */
#ifndef VMEXIT_VM_NAMES_H
#define VMEXIT_VM_NAMES_H

#include <stdbool.h>
#include "hashmap.h"
#include "vmexit.h"

struct vm_name {
	__u32 tgid;
	char name[64];
};

DEFINE_HASHMAP(vm_name_index, __u32, __u32)

struct vm_names {
	struct vm_name *v;		/* in the order first seen */
	__u32 nr;
	__u32 cap;
	struct vm_name_index index;	/* tgid -> its place in v */
	bool resolve;		/* read /proc; off when names come from a file or a test */
	/* The command line the kernel kept for tgid (NUL-separated); its length, or < 0. */
	int (*args)(void *ctx, __u32 tgid, char *buf, size_t len);
	void *args_ctx;
};

/* The guest's name; the pid as text when nothing better is known. */
const char *vm_names_get(struct vm_names *n, __u32 tgid);
/* Records a name learnt elsewhere (a record file). */
int vm_names_set(struct vm_names *n, __u32 tgid, const char *name);
void vm_names_free(struct vm_names *n);

#endif /* VMEXIT_VM_NAMES_H */
