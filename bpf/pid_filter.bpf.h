/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guests traced: -p's pids, a command and the VMMs it forks, serve -g's. One definition for
 * both objects that hold it: bpf/vmexit.bpf.c's handlers own the map, bpf/wake.bpf.c shares it
 * (bpf_map__reuse_fd, src/kernel/wake_progs.c) for stream --wake's records.
 */
#ifndef VMEXIT_PID_FILTER_BPF_H
#define VMEXIT_PID_FILTER_BPF_H

const volatile bool filter_pids = false;	/* only tgids in pid_filter */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pid_filter SEC(".maps");

static __always_inline bool pid_wanted(__u32 tgid)
{
	return !filter_pids || bpf_map_lookup_elem(&pid_filter, &tgid);
}

#endif /* VMEXIT_PID_FILTER_BPF_H */
