/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A run for `vmexit diff` and `vmexit explain`, from any file `vmexit report` reads (a
 * recording, a trace.dat, a perf.data: event_source.h) or from `vmexit stat --json` output
 * (stat_json_read.h), as a run_profile (per guest, reason, key, vCPU, guest RIP; stacks).
 */
#ifndef VMEXIT_RUN_LOAD_H
#define VMEXIT_RUN_LOAD_H

#include <stddef.h>
#include "lost_causes.h"
#include "run_profile.h"

struct run_load_info {
	__u64 events;		/* exits read */
	__u64 lost[NR_LOST];
	bool keyless;		/* a recording made without --keys */
	bool splitless;		/* ... without --split */
};

/* 0, or -1 with one line naming path in err (p then holds what was read before). */
int run_load(const char *path, struct run_profile *p, struct run_load_info *info, char *err,
	     size_t errlen);

#endif /* VMEXIT_RUN_LOAD_H */
