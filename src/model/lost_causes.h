/* SPDX-License-Identifier: GPL-2.0 */
/* Names of the kernel's loss counters (enum vmexit_lost), one table for every output. */
#ifndef VMEXIT_LOST_CAUSES_H
#define VMEXIT_LOST_CAUSES_H

#include <stdbool.h>

/* What a cause's count means, for the outputs that tell them apart. */
enum lost_effect {
	LOST_EFFECT_EXITS,	/* exits, or their records, are missing from the output */
	LOST_EFFECT_NONE,	/* nothing is missing (an entry whose exit began before attach) */
	LOST_EFFECT_DETAIL,	/* every exit is there; a detail of it (stack, key) was not kept */
};

/*
 * Where the events were taken: a loss is fixed where it happened, so the fix a help sentence
 * names depends on it (vmexit's --ringbuf-kb, trace-cmd record -b, perf record -m).
 */
enum lost_source {
	LOST_SRC_VMEXIT,	/* vmexit's own programs, live or recorded */
	LOST_SRC_TRACE_CMD,	/* report -i trace.dat */
	LOST_SRC_PERF,		/* report -i perf.data */
};

/* JSON/CSV key: "ringbuf_full". */
const char *lost_cause_key(int cause);
/* Short phrase for lines: "ring buffer full". */
const char *lost_cause_text(int cause);
/* A sentence for the table footer, with the fix where there is one (for src's events). */
const char *lost_cause_help(int cause, enum lost_source src);

/* Its effect; a new cause states one in the table, so no output can forget it. */
enum lost_effect lost_cause_effect(int cause);
/* Whether per-event outputs miss records for it (those report it by time). */
bool lost_cause_drops_events(int cause);

#endif /* VMEXIT_LOST_CAUSES_H */
