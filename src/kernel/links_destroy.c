// SPDX-License-Identifier: GPL-2.0
/* BPF links destroyed together, one thread each (links_destroy.h). */
#include <pthread.h>
#include <stdbool.h>
#include <bpf/libbpf.h>
#include "links_destroy.h"

#define THREADS_MAX	64

static void *destroy_one(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

void links_destroy(struct bpf_link **links[], int n)
{
	pthread_t th[THREADS_MAX];
	bool started[THREADS_MAX] = { false };

	for (int i = 0; i < n; i++) {
		struct bpf_link *l = *links[i];

		*links[i] = NULL;
		if (!l)
			continue;
		if (i < THREADS_MAX && !pthread_create(&th[i], NULL, destroy_one, l))
			started[i] = true;
		else
			bpf_link__destroy(l);	/* no thread: it waits alone */
	}
	for (int i = 0; i < n && i < THREADS_MAX; i++) {
		if (started[i])
			pthread_join(th[i], NULL);
	}
}
