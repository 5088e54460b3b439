// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "source_option.h"

void opt_source(const char *arg, void *to, struct argp_state *state)
{
	enum exit_source *s = to;

	if (!strcmp(arg, "bpf"))
		*s = SOURCE_BPF;
	else if (!strcmp(arg, "kvm"))
		*s = SOURCE_KVM;
	else
		argp_error(state, "invalid --source '%s': give bpf or kvm", arg);
}
