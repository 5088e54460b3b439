/* SPDX-License-Identifier: GPL-2.0 */
/* --qmp's I/O: each guest's QEMU asked its memory map over QMP (model/qmp_names.h keeps it). */
#ifndef VMEXIT_QMP_ASK_H
#define VMEXIT_QMP_ASK_H

#include "qmp_names.h"

/*
 * On the owner's tick (now: seconds, any monotonic base): asks the guests of names not asked
 * yet, and those due again; says a note on stderr for each guest whose QMP fails the first
 * time; forgets the guests names forgot. Blocks at most QMP_TIMEOUT_MS per guest asked.
 */
void qmp_names_tick(struct qmp_names *q, struct name_cache *names, double now);

#endif /* VMEXIT_QMP_ASK_H */
