/* SPDX-License-Identifier: GPL-2.0 */
/* --source bpf|kvm (stat, serve): vmexit's BPF programs, or KVM's own statistics alone. */
#ifndef VMEXIT_SOURCE_OPTION_H
#define VMEXIT_SOURCE_OPTION_H

#include "cmd_options.h"

enum exit_source { SOURCE_BPF, SOURCE_KVM };

OPT_STORE(opt_source, enum exit_source);

#define SOURCE_OPTION(type, member, grp)                                                      \
	{ "source", 0, "bpf|kvm", 0, "Where counts come from: bpf (default: vmexit's programs "  \
	  "on KVM's tracepoints, latencies and all) or kvm (KVM's own per-VM and per-vCPU "     \
	  "statistics, KVM_GET_STATS_FD: counts only, no BPF, nothing per exit; needs "         \
	  "CAP_SYS_PTRACE or the VMMs' uid)", grp, OPT_TO(type, member, opt_source) }

#endif /* VMEXIT_SOURCE_OPTION_H */
