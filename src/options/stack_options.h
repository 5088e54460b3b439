/* SPDX-License-Identifier: GPL-2.0 */
/* --stacks, --stack-min, --max-stacks: the options of stat, top and record that trace stacks. */
#ifndef VMEXIT_STACK_OPTIONS_H
#define VMEXIT_STACK_OPTIONS_H

#include "cmd_options.h"
#include "session.h"

struct stack_opts {
	bool stacks;
	bool folded;		/* stat's own --folded: folded lines at the end, no tables */
	bool min_given, max_given;
	__u64 min_ns;
	__u32 max;
};

/* Input: struct stack_opts. */
extern const struct cmd_options stack_options;
/*
 * Once every option is in: --stacks without --split, or a stack option (--folded too) without
 * --stacks, is a usage error; else the session gets them.
 */
void stack_opts_apply(const struct stack_opts *so, struct session_opts *o,
		      struct argp_state *state);

#endif /* VMEXIT_STACK_OPTIONS_H */
