/* SPDX-License-Identifier: GPL-2.0 */
/* Names of the kernel's loss counters (enum vmexit_lost), one table for every output. */
#ifndef VMEXIT_LOST_CAUSES_H
#define VMEXIT_LOST_CAUSES_H

/* JSON/CSV key: "ringbuf_full". */
const char *lost_cause_key(int cause);
/* Short phrase for lines: "ring buffer full". */
const char *lost_cause_text(int cause);
/* A sentence for the table footer, with the fix where there is one. */
const char *lost_cause_help(int cause);

#endif /* VMEXIT_LOST_CAUSES_H */
