// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include "stack_read.h"
#include "vmexit.skel.h"

#define FRAME_NAME_MAX	160

/*
 * The frames of the tracing machinery itself (our program, the tracepoint's dispatch), on top
 * of every stack taken at sched_switch: the stack the thread left with starts below them.
 */
static bool machinery(const char *name)
{
	static const char *const prefixes[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
						"__traceiter_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	}
	return false;
}

/* One row: the key's stack out of the stack map, named. */
static int row_add(int stack_fd, const struct stack_key *k, const struct stack_val *v,
		   const struct symbol_map *ksyms, struct stack_table *t)
{
	static char names[STACK_DEPTH_MAX][FRAME_NAME_MAX];
	__u64 ips[STACK_DEPTH_MAX] = {};
	char *frames[STACK_DEPTH_MAX];
	struct stack_row r = { .tgid = k->tgid, .isa = k->isa, .reason = k->reason,
			       .proc_start = k->proc_start, .ns = v->ns, .count = v->count,
			       .frames = frames };
	__u32 id = (__u32)k->stack_id, n = 0, skip = 0;

	/* Its stack gone would be a bug: the kernel never deletes from the stack map. */
	if (bpf_map_lookup_elem(stack_fd, &id, ips))
		return -errno;
	for (; n < STACK_DEPTH_MAX && ips[n]; n++) {
		symbol_map_lookup(ksyms, ips[n], names[n], FRAME_NAME_MAX);
		if (skip == n && machinery(names[n]))
			skip++;
	}
	for (__u32 i = skip; i < n; i++)
		frames[r.nr_frames++] = names[i];
	return stack_table_add(t, &r);
}

int stack_read(struct session *s, const struct symbol_map *ksyms, struct stack_table *t)
{
	int time_fd = bpf_map__fd(s->skel->maps.stack_time);
	int stack_fd = bpf_map__fd(s->skel->maps.stack_map);
	struct stack_key k, next;
	struct stack_val v;
	int err = 0;
	void *prev = NULL;

	while (!err && !bpf_map_get_next_key(time_fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(time_fd, &k, &v))
			continue;	/* not deleted by anyone; be safe */
		err = row_add(stack_fd, &k, &v, ksyms, t);
	}
	if (err)
		fprintf(stderr, "vmexit: cannot read the kernel stacks: %s\n", strerror(-err));
	return err;
}
