// SPDX-License-Identifier: GPL-2.0
#include "stack_options.h"

OPT_STATIC_STORE(stack_min, struct stack_opts);
static void stack_min(const char *arg, void *to, struct argp_state *state)
{
	struct stack_opts *so = to;

	opt_stack_min(arg, &so->min_ns, state);
	so->min_given = true;
}

OPT_STATIC_STORE(max_stacks, struct stack_opts);
static void max_stacks(const char *arg, void *to, struct argp_state *state)
{
	struct stack_opts *so = to;

	opt_max_stacks(arg, &so->max, state);
	so->max_given = true;
}

static const struct cmd_option options[] = {
	OPT_HEADER("Kernel stacks of blocked exits (with --split):", 6),
	{ "stacks", 0, NULL, 0, "Charge the time a vCPU thread spends off CPU during an exit "
	  "(blocked and runq) to the kernel stack it left the CPU with, per guest and reason; "
	  "the top stacks follow the summary (top: x on a reason row lists them)", 6,
	  OPT_TO(struct stack_opts, stacks, opt_true) },
	{ "stack-min", 0, "DURATION", 0, "Charge only periods off CPU that end when their exit "
	  "has lasted this long (default 0): exits shorter are never charged", 6,
	  OPT_INPUT(struct stack_opts, stack_min) },
	{ "max-stacks", 0, "N", 0, "Distinct stacks, and (guest, reason, stack) entries, the "
	  "kernel keeps (default 16384); more are counted lost", 6,
	  OPT_INPUT(struct stack_opts, max_stacks) },
	{},
};

const struct cmd_options stack_options = { .options = options };

void stack_opts_apply(const struct stack_opts *so, struct session_opts *o,
		      struct argp_state *state)
{
	if (so->stacks && !o->split)
		argp_error(state, "--stacks needs --split: the stacks are of the time --split "
			   "measures off CPU (add --split)");
	if (!so->stacks && (so->folded || so->min_given || so->max_given))
		argp_error(state, "%s is an option of --stacks (add --split --stacks)",
			   so->folded ? "--folded" : so->min_given ? "--stack-min" : "--max-stacks");
	o->stacks = so->stacks;
	o->stack_min_ns = so->min_ns;
	o->max_stacks = so->max;
}
