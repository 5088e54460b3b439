/* SPDX-License-Identifier: GPL-2.0 */
/* `vmexit explain` output: the answer in words with its evidence, or the same as JSON. */
#ifndef VMEXIT_EXPLAIN_OUTPUT_H
#define VMEXIT_EXPLAIN_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include "explain_findings.h"
#include "guest_symbols.h"

struct explain_source {
	const char *what;	/* "FILE (recording)", "live, 2 s" */
	bool live;
	/* Live: the stacks step's traced seconds (0: it did not run) and its -r REASON. */
	double stacks_s;
	const char *stacks_reason;
	const struct guest_symbols *syms;	/* --guest-symbols: names of guest RIPs; may be NULL */
};

/* One guest's findings; json: one object per line. 0, or -errno of the failed write. */
int explain_print(const struct explain *e, const struct explain_source *src, bool json, FILE *f);
/* The frame a blocked stack waits in: its innermost one past the scheduler's, "+0x.." cut. */
const char *explain_wait_frame(const char *folded, char *buf, size_t len);

#endif /* VMEXIT_EXPLAIN_OUTPUT_H */
