// SPDX-License-Identifier: GPL-2.0
/* Per-guest exit latencies in powers of two (exit_times.h). */
#include <errno.h>
#include <stdlib.h>

#include "array_grow.h"
#include "exit_times.h"

int exit_times_add(struct exit_times *t, const struct vmexit_event *ev)
{
	struct exit_times_vm *vm;
	int k = 0;

	if (ev->type != VMEXIT_EV_EXIT && ev->type != VMEXIT_EV_USER_EXIT)
		return 0;	/* not an exit, or one still in flight (no latency) */
	if (t->last >= t->nr || t->v[t->last].tgid != ev->tgid) {
		for (t->last = 0; t->last < t->nr && t->v[t->last].tgid != ev->tgid; t->last++)
			;
		if (t->last == t->nr) {
			if (array_reserve(t->v, t->nr, t->cap, 4))
				return -ENOMEM;
			t->v[t->nr++] = (struct exit_times_vm){ .tgid = ev->tgid };
		}
	}
	vm = &t->v[t->last];
	if (ev->latency_ns > 1)
		k = 63 - __builtin_clzll(ev->latency_ns);
	vm->bucket[k]++;
	vm->n++;
	return 0;
}

__u64 exit_times_median(const struct exit_times *t, __u32 tgid)
{
	for (size_t i = 0; i < t->nr; i++) {
		const struct exit_times_vm *vm = &t->v[i];
		__u64 seen = 0;

		if (vm->tgid != tgid)
			continue;
		for (int k = 0; k < EXIT_TIMES_BUCKETS; k++) {
			seen += vm->bucket[k];
			if (2 * seen >= vm->n)
				return 1ull << k;
		}
	}
	return 0;
}

void exit_times_free(struct exit_times *t)
{
	free(t->v);
	t->v = NULL;
	t->nr = t->cap = t->last = 0;
}
