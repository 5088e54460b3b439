/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The end of a session without the kernel's grace period. The last close of a classic
 * tracepoint's (or a kprobe's) perf event returns only after tracepoint_synchronize_unregister()
 * in perf_trace_event_unreg(): a tasks-trace and a normal RCU grace period, 100-120 ms on the
 * development host, longer on a busy one, and under event_mutex, so threads do not shorten it
 * (links_destroy.h). A run that holds such an event at its end (a run started idle keeps the
 * classic kvm_exit until exits begin: fast_switch.h) took that long from Ctrl-C to the prompt,
 * with everything already printed.
 *
 * Nothing waits for that grace period: the BPF program stops with its link (the perf link's
 * release detaches it from the tracepoint's program array, perf_event_free_bpf_prog()), and the
 * perf event, once detached, only keeps the tracepoint's perf callback registered, which returns
 * at once without a program or a listener. So perf_events_hand_off() gives the process's perf
 * events to a short-lived process of their own ("vmexit-release", a grandchild, so nothing has to
 * reap it), which holds nothing else and closes them in its exit once vmexit has closed its own
 * references (which are then not the last, and return at once).
 *
 * Kernels before 5.15 attach without a perf link (libbpf's fallback, PERF_EVENT_IOC_SET_BPF): the
 * link's fd is the perf event's, and the program stops only with that event. Such fds (links[])
 * stay here and are closed as before, with their wait: a program never runs on in a process
 * nobody reads. The other process also drops its copies of the mappings of BPF maps (the
 * skeleton's global data, the ring buffers), which would otherwise keep those maps alive.
 */
#ifndef VMEXIT_PERF_HAND_OFF_H
#define VMEXIT_PERF_HAND_OFF_H

#include <sys/types.h>

struct perf_hand_off {
	int done_fd;	/* closed by perf_hand_off_done(): the other process may close its own */
	pid_t pid;	/* that process, 0 if it did not start */
};

/*
 * Call once nothing is read any more, before the links are destroyed, and perf_hand_off_done()
 * after; links[] are the fds of the session's links, which are never handed off. Returns how
 * many perf events the other process holds (0: none open, or it could not start, and the
 * closes here wait as before), or -errno.
 */
int perf_events_hand_off(struct perf_hand_off *h, const int *links, int n_links);
void perf_hand_off_done(struct perf_hand_off *h);

#endif /* VMEXIT_PERF_HAND_OFF_H */
