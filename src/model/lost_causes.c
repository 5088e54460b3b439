// SPDX-License-Identifier: GPL-2.0
#include "lost_causes.h"
#include "vmexit.h"

static const struct {
	const char *key;
	const char *text;
	const char *help;
} causes[NR_LOST] = {
	[LOST_CELLS_FULL] = { "cells_full", "statistics cells full",
			      "exits not counted: statistics cells full (raise --max-cells)" },
	[LOST_THREADS_FULL] = { "threads_full", "per-thread state full",
				"exits not counted: no per-thread state" },
	[LOST_UNMATCHED_ENTRY] = { "unmatched_entry", "entries without an exit",
				   "entries without a recorded exit (a vCPU's first run, or one "
				   "in flight at start)" },
	[LOST_OVERWRITTEN_EXIT] = { "overwritten_exit", "exit never completed",
				    "exits that never saw their entry (latency unknown)" },
	[LOST_UNMATCHED_RUN] = { "unmatched_run", "userspace exit never completed",
				 "userspace exits not followed by KVM_RUN (latency unknown)" },
	[LOST_RINGBUF_FULL] = { "ringbuf_full", "ring buffer full",
				"stream records dropped: ring buffer full (raise --ringbuf-kb)" },
	[LOST_BPF_SKIPPED] = { "bpf_skipped", "events the kernel skipped",
			       "events the kernel did not run vmexit's programs for (another BPF "
			       "program, or a bpf() syscall, held that CPU)" },
	[LOST_STACK_COLLISION] = { "stack_collision", "stacks not kept (collision)",
				   "off-CPU periods not charged to a stack: its slot in the stack "
				   "map was taken (raise --max-stacks)" },
	[LOST_STACKS_FULL] = { "stacks_full", "stack table full",
			       "off-CPU periods not charged to a stack: stack table full (raise "
			       "--max-stacks)" },
	[LOST_KEYS_FULL] = { "keys_full", "key table full",
			     "exits charged to a key row `other`: key table full (raise --max-keys)" },
};

const char *lost_cause_key(int cause)
{
	return cause >= 0 && cause < NR_LOST ? causes[cause].key : "?";
}

const char *lost_cause_text(int cause)
{
	return cause >= 0 && cause < NR_LOST ? causes[cause].text : "?";
}

const char *lost_cause_help(int cause)
{
	return cause >= 0 && cause < NR_LOST ? causes[cause].help : "?";
}
