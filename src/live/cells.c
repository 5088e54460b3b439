// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "cells.h"
#include "proc_names.h"

int cells_walk(const struct cell *cells, __u32 nr,
	       int (*fn)(void *ctx, __u32 i, const struct cell *c), void *ctx)
{
	for (__u32 i = 0; i < nr; i++) {
		int err;

		if (!cell_ready(&cells[i]))
			continue;
		err = fn(ctx, i, &cells[i]);
		if (err)
			return err;
	}
	return 0;
}

__s32 cell_key_vcpu(const struct cell_key *k)
{
	char comm[sizeof(k->comm) + 1];

	if (k->vcpu >= 0)
		return k->vcpu;
	memcpy(comm, k->comm, sizeof(k->comm));
	comm[sizeof(k->comm)] = 0;
	return vcpu_from_thread_name(comm);
}

void inflight_of_cell(struct inflight_exit *e, const struct cell_key *k, __s32 vcpu,
		      __u64 start_ns)
{
	memset(e, 0, sizeof(*e));
	e->tgid = k->tgid;
	e->tid = k->tid;
	e->proc_start = k->proc_start;
	e->vcpu = vcpu;
	e->isa = k->isa;
	e->reason = k->reason;
	e->start_ns = start_ns;
	e->nr = 1;
}
