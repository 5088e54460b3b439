/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmexit explain`: the drill-down an expert runs on one guest's exits, as findings with their
 * figures. Reasons by time -> the top reason's keys -> its time split into on CPU, blocked and
 * waiting for a CPU -> the kernel stacks of the blocked part -> the guest RIPs of kernel exits;
 * then the cause in one word (enum explain_cause) and what the data could not show.
 */
#ifndef VMEXIT_EXPLAIN_FINDINGS_H
#define VMEXIT_EXPLAIN_FINDINGS_H

#include <stdbool.h>
#include "run_profile.h"

/* Below this share of vCPU time in exits (other than idle HLT), nothing stands out. */
#define EXPLAIN_QUIET_SHARE	0.05
/* Of the top reason's time asleep, from which its handling is slow because it waits. */
#define EXPLAIN_BLOCKED_SHARE	(1.0 / 3)
/* Of the top reason's time waiting for a CPU, from which the vCPU is starved. */
#define EXPLAIN_STARVED_SHARE	0.25
/* A p50 below this is a short exit: many of them are a rate problem, not a slow handler. */
#define EXPLAIN_SHORT_NS	100000
#define EXPLAIN_TOP		3	/* reasons, keys, stacks, RIPs listed per step */

#define EXPLAIN_CAUSES(X)                                                                    \
	X(NOTHING, "nothing_stands_out", "nothing stands out")                               \
	X(IDLE, "idle", "nothing stands out: its exit time is HLT, an idle vCPU waiting "      \
	  "for work, which is no problem")                                                    \
	X(EXIT_RATE, "exit_rate", "too many exits: each is short and handled on CPU")         \
	X(SLOW_HANDLER, "slow_handler", "slow exit handling: the time is blocked (asleep)")  \
	X(BUSY_HANDLER, "busy_handler", "slow exit handling: the time is spent on CPU")       \
	X(STARVED, "starved", "vCPU starved: its exits wait for a CPU that another task holds")     \
	X(USERFAULTFD, "userfaultfd", "faults served late by userfaultfd")

#define EXPLAIN_CAUSE_ENUM(id, key, words) EXPLAIN_##id,
enum explain_cause { EXPLAIN_CAUSES(EXPLAIN_CAUSE_ENUM) NR_EXPLAIN_CAUSES };
#undef EXPLAIN_CAUSE_ENUM

const char *explain_cause_key(enum explain_cause c);	/* "starved" */
const char *explain_cause_words(enum explain_cause c);

struct explain_item {
	const struct prof_row *row;	/* its figures */
	const struct prof_stack *stack;	/* a stacks step's */
	double share;			/* of the step's whole: the reason's exit time, ... */
};

enum explain_part { PART_ONCPU, PART_BLOCKED, PART_RUNQ, NR_PARTS };

struct explain {
	const struct run_profile *p;
	__u32 guest;
	double guest_s;			/* vCPU seconds */
	double exit_share;		/* of vCPU time in exits, all reasons */
	double idle_share;		/* ... in HLT / WFx exits */
	struct explain_item reasons[EXPLAIN_TOP];	/* share: of the exit time */
	__u32 nr_reasons;
	const struct prof_row *top;	/* the reason drilled into (not idle); NULL: none */
	struct explain_item keys[EXPLAIN_TOP];		/* share: of top's time */
	__u32 nr_keys;
	double part[NR_PARTS];		/* top's time split; all 0 without --split */
	enum explain_part main_part;
	struct explain_item stacks[EXPLAIN_TOP];	/* share: of top's off-CPU time */
	__u32 nr_stacks;
	struct explain_item rips[EXPLAIN_TOP];		/* share: of top's exits */
	__u32 nr_rips;
	bool nested;			/* guest exits seen: exits to the VMM lie inside them */
	enum explain_cause cause;
	/* What the data could not show, each a flag: said in words by the output. */
	bool no_kernel_exits, no_split, no_keys, no_stacks;
};

/* The findings for guest g of p. */
void explain_guest(const struct run_profile *p, __u32 g, struct explain *e);
/* Is this the reason of an idle vCPU (HLT, WFx)? */
bool explain_reason_idle(__u32 isa, __u32 reason);

#endif /* VMEXIT_EXPLAIN_FINDINGS_H */
