// SPDX-License-Identifier: GPL-2.0
#include "lost_causes.h"
#include "vmexit.h"

/* The effect says how outputs treat a count: a loss to report, a note, or a detail not kept. */
static const struct {
	const char *key;
	const char *text;
	const char *help;
	enum lost_effect effect;
} causes[NR_LOST] = {
#define C(cause, key, text, effect, help) [cause] = { key, text, help, LOST_EFFECT_##effect }
	C(LOST_CELLS_FULL, "cells_full", "statistics cells full", EXITS,
	  "exits not counted: statistics cells full (raise --max-cells)"),
	C(LOST_THREADS_FULL, "threads_full", "per-thread state full", EXITS,
	  "exits not counted: no per-thread state"),
	C(LOST_UNMATCHED_ENTRY, "unmatched_entry", "entries without an exit", NONE,
	  "entries without a recorded exit (a vCPU's first run, or one in flight at start)"),
	C(LOST_OVERWRITTEN_EXIT, "overwritten_exit", "exit never completed", EXITS,
	  "exits that never saw their entry (latency unknown)"),
	C(LOST_UNMATCHED_RUN, "unmatched_run", "userspace exit never completed", EXITS,
	  "userspace exits not followed by KVM_RUN (latency unknown)"),
	C(LOST_RINGBUF_FULL, "ringbuf_full", "ring buffer full", EXITS,
	  "stream records dropped: ring buffer full (raise --ringbuf-kb)"),
	C(LOST_BPF_SKIPPED, "bpf_skipped", "events the kernel skipped", EXITS,
	  "events the kernel did not run vmexit's programs for (another BPF program, or a bpf() "
	  "syscall, held that CPU)"),
	C(LOST_STACK_COLLISION, "stack_collision", "stacks not kept (collision)", DETAIL,
	  "off-CPU periods not charged to a stack: its slot in the stack map was taken (raise "
	  "--max-stacks)"),
	C(LOST_STACKS_FULL, "stacks_full", "stack table full", DETAIL,
	  "off-CPU periods not charged to a stack: stack table full (raise --max-stacks)"),
	C(LOST_KEYS_FULL, "keys_full", "key table full", DETAIL,
	  "exits charged to a key row `other`: key table full (raise --max-keys)"),
	C(LOST_KEY_VECTOR, "key_vector", "interrupt vectors unread", DETAIL,
	  "VMX interrupt or NMI exits charged to the key `none`: KVM had not read their vector "
	  "when they ended (fast path)"),
	C(LOST_KEY_RUN, "key_run", "exits to the VMM keyless (kvm_run unread)", DETAIL,
	  "exits to the VMM charged to the key `none`: their KVM_RUN found no vCPU to read "
	  "kvm_run from"),
#undef C
};

const char *lost_cause_key(int cause)
{
	return cause >= 0 && cause < NR_LOST ? causes[cause].key : "?";
}

const char *lost_cause_text(int cause)
{
	return cause >= 0 && cause < NR_LOST ? causes[cause].text : "?";
}

/* The losses another tool's capture had, fixed in that tool: by cause, then by source. */
static const char *const capture_help[NR_LOST][LOST_SRC_PERF + 1] = {
	[LOST_RINGBUF_FULL] = {
		[LOST_SRC_TRACE_CMD] = "events the capture lost: trace-cmd's ring buffers were full "
				       "(record again with a larger trace-cmd record -b KB)",
		[LOST_SRC_PERF] = "events the capture lost: perf's ring buffers were full (record "
				  "again with a larger perf record -m PAGES)",
	},
};

const char *lost_cause_help(int cause, enum lost_source src)
{
	if (cause < 0 || cause >= NR_LOST)
		return "?";
	if (src > LOST_SRC_VMEXIT && src <= LOST_SRC_PERF && capture_help[cause][src])
		return capture_help[cause][src];
	return causes[cause].help;
}

enum lost_effect lost_cause_effect(int cause)
{
	return cause >= 0 && cause < NR_LOST ? causes[cause].effect : LOST_EFFECT_EXITS;
}

bool lost_cause_drops_events(int cause)
{
	return cause >= 0 && cause < NR_LOST && causes[cause].effect == LOST_EFFECT_EXITS;
}
