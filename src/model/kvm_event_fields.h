/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMEXIT_KVM_EVENT_FIELDS_H
#define VMEXIT_KVM_EVENT_FIELDS_H

#include <stddef.h>
#include <linux/types.h>

#include "vmexit.h"

/*
 * The named fields of each kvm event: where include/vmexit.h packs them, and how they read.
 * JSON keys, perfetto args and --format field names are these names.
 */
enum kvm_field_fmt { KF_DEC, KF_HEX, KF_STR };

struct kvm_event_field {
	__u8 event;		/* enum vmexit_kvm_event */
	__u8 fmt;		/* enum kvm_field_fmt; KF_STR: kvm_event_access() */
	__u8 slot;		/* private: what kvm_event_field_value() reads */
	const char *name;
};

/* The fields of event id, in display order; *n of them (0 and NULL for an unknown id). */
const struct kvm_event_field *kvm_event_fields(__u32 id, size_t *n);
/* The field called name of event id, or NULL when that event has none. */
const struct kvm_event_field *kvm_event_field_find(__u32 id, const char *name);
/* Its value in ev (a VMEXIT_EV_KVM_EVENT of f->event); KF_STR fields read 0. */
__u64 kvm_event_field_value(const struct kvm_event_field *f, const struct vmexit_event *ev);
/* pio/msr: "read" or "write"; mmio: also "unsatisfied-read"; other events: "". */
const char *kvm_event_access(const struct vmexit_event *ev);

#endif
