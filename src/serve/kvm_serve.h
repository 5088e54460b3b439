/* SPDX-License-Identifier: GPL-2.0 */
/*
 * serve --source kvm: KVM's own statistics exported (kvm_exposition.h), no BPF program. The
 * main thread looks for new VMMs every KVM_SERVE_SCAN_S and reads the values; each scrape reads
 * them afresh. A guest's series stay keep_s after its VMM exits (its stats fds hold the final
 * values until then), then go. The process keeps its privileges: a VMM that starts later is
 * reached with pidfd_getfd() (CAP_SYS_PTRACE, or the VMM's uid).
 */
#ifndef VMEXIT_KVM_SERVE_H
#define VMEXIT_KVM_SERVE_H

#include <stdbool.h>
#include "cli_filters.h"

#define KVM_SERVE_SCAN_S	0.05

struct kvm_serve_opts {
	const struct cli_filters *filters;	/* -p, -g */
	bool by_vcpu;
	double keep_s;
	bool verbose;
};

/* Serves on listen_fd (taken over) until SIGTERM/Ctrl-C; the exit status. */
int kvm_serve(const struct kvm_serve_opts *o, int listen_fd, const char *where);

#endif /* VMEXIT_KVM_SERVE_H */
