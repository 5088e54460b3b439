/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A numeric field of one tracepoint record, decoded by libtraceevent from the format the capture
 * carries: the tp_record field reader of the trace.dat and the perf.data importers.
 */
#ifndef VMEXIT_TEP_FIELD_H
#define VMEXIT_TEP_FIELD_H

#include <stdbool.h>
#include <linux/types.h>

struct tep_event;
struct tep_handle;
struct tep_record;

struct tep_field_ctx {
	struct tep_event *event;
	struct tep_record *rec;
};

/* tp_record.field with a struct tep_field_ctx as ctx: sign-extended when the field is signed. */
bool tep_field(const void *ctx, const char *name, __u64 *val);

/*
 * Whether rec holds the common fields (type, pid) where libtraceevent will read them, unchecked:
 * a damaged format can place them past any record.
 */
bool tep_common_fit(struct tep_handle *tep, const struct tep_record *rec);

#endif /* VMEXIT_TEP_FIELD_H */
