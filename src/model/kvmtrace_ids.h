/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kvmtrace compatibility for the rules language: the event ids of the 2008 kvmtrace_format
 * "formats" files (0x00010001 VMENTRY ... 0x00020013 APIC_ACCESS), which of them describes one
 * of our events, and what that id's words %(1)..%(5) mean for it. docs/formats.md lists them.
 */
#ifndef VMEXIT_KVMTRACE_IDS_H
#define VMEXIT_KVMTRACE_IDS_H

#include <stdbool.h>
#include <linux/types.h>

#include "vmexit.h"

#define KVMTRACE_VMENTRY	0x00010001u
#define KVMTRACE_VMEXIT		0x00010002u
#define KVMTRACE_CLASS_BASE	0x00020000u	/* the per-cause ids, 0x00020001.. */
#define KVMTRACE_NR_CLASS	0x14	/* low bits of the per-cause ids index a class table */
#define KVMTRACE_NR_IDS		21		/* entries of the id table */

/* Where a kvmtrace word comes from in our record. */
enum kvmtrace_word {
	W_ZERO,		/* the kvmtrace word exists but our record does not carry it */
	W_REASON, W_RIP, W_INFO1, W_INFO2, W_INTR_INFO,
	W_PF_ERR,	/* page-fault error code / EPT exit qualification */
	W_PF_ADDR,	/* faulting address when recorded (CR2, SVM GPA), else 0 */
	W_IO_PORT, W_IO_SIZE, W_CR_NUM, W_DR_NUM, W_VECTOR, W_LMSW, W_APIC_OFF,
};

struct kvmtrace_id {
	__u32 id;
	const char *name;
	bool never;	/* no event of ours carries its meaning: accepted, never matches */
	__u8 words[5];	/* enum kvmtrace_word of %(1)..%(5) */
};

/* The words of an event selected other than by a per-cause id: the record's own fields. */
extern const __u8 kvmtrace_generic_words[5];

/* The table entry of a kvmtrace id, or NULL; its index in the table is below KVMTRACE_NR_IDS. */
const struct kvmtrace_id *kvmtrace_id_find(__u32 id);
int kvmtrace_id_index(const struct kvmtrace_id *k);

/* The kvmtrace id that describes ev: a per-cause id, KVMTRACE_VMEXIT, or 0 (no counterpart). */
__u32 kvmtrace_classify(const struct vmexit_event *ev);

/* The value of word src (enum kvmtrace_word) for ev. */
__u64 kvmtrace_word_value(__u8 src, const struct vmexit_event *ev);

#endif /* VMEXIT_KVMTRACE_IDS_H */
