// SPDX-License-Identifier: GPL-2.0
/*
 * Start-up (src/hooks.c): has any kvm_exit fired since vmexit started? Attached first, before
 * the BTF work the fast path check needs, so that by the time the check is ready a host with no
 * exits (no VM running) is already known as one and the check window need not wait to see it.
 * It needs no BTF (a raw tracepoint reading nothing, no CO-RE), so it loads in about a
 * millisecond; and its detach at the end waits for no RCU grace period, where a classic
 * tracepoint's last perf event waits for one, serialized with the others' on event_mutex.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TP_PASS		1	/* as in vmexit.bpf.c: never hide events from perf users */

__u64 exits;

SEC("raw_tp/kvm_exit")
int watch_exit(void *ctx)
{
	__sync_fetch_and_add(&exits, 1);
	return TP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
