/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exit-reason names for the four sources of exits: Intel VMX basic exit reasons, AMD SVM exit
 * codes, AArch64 exception classes (VMEXIT_ISA_ARM64) and the KVM_EXIT_* codes KVM hands to
 * the VMM. Names are the ones the kernel's kvm_exit and kvm_userspace_exit tracepoints print,
 * so vmexit output reads like perf/trace-cmd output.
 */
#ifndef VMEXIT_REASONS_H
#define VMEXIT_REASONS_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "vmexit.h"

/* VMX exit reason bit 31: the VM entry itself failed (the low 16 bits say why). */
#define VMX_FAILED_VMENTRY	0x80000000u
#define VMX_BASIC_MASK		0xffffu

const char *isa_name(__u32 isa);			/* "vmx", "svm", "user", "arm64", "?" */
/* vmx/intel, svm/amd, user, arm64/aarch64: 0 or -EINVAL */
int isa_parse(const char *s, __u32 *isa);

/* The table's name for (isa, reason), or NULL when there is none. */
const char *reason_name(__u32 isa, __u32 reason);

/*
 * Names this build lacks, asked for on a miss: `vmexit report` passes the table a recording's
 * writer knew, so exits a newer kernel made keep their names. NULL fn: no fallback.
 */
void reason_names_fallback(const char *(*fn)(void *ctx, __u32 isa, __u32 reason), void *ctx);

/*
 * A printable name for any (isa, reason): the table name, "FAILED_VMENTRY|<basic>" for failed
 * VMX entries, "restart" / "error(EFAULT)" / "error(-N)" for user exits carrying an errno, and
 * "UNKNOWN_0x<hex>" otherwise. reason_parse_list() accepts every string this returns. Always
 * NUL-terminated (truncated to len); returns buf.
 */
const char *reason_str(__u32 isa, __u32 reason, char *buf, size_t len);
/*
 * The name text outputs print (tables, CSV, stream lines, top --log, list): reason_str(), an
 * exit to the VMM as KVM's API names it (KVM_EXIT_IO: IO alone would read as any ISA's). JSON
 * and Prometheus keep reason_str() next to their kind field; top's drill-down, kvm_stat's
 * kvm_userspace_exit(IO). reason_parse_list() accepts each. Returns buf.
 */
const char *reason_label(__u32 isa, __u32 reason, char *buf, size_t len);

/* Longest string reason_str() can produce, with its NUL. */
#define REASON_STR_MAX		64

struct reason_entry {
	__u32 code;
	const char *name;
};

/* The whole table for isa, sorted by code (NULL and *n = 0 for an unknown isa). */
const struct reason_entry *reason_table(__u32 isa, size_t *n);

/*
 * Looks name up in one isa: table names case-insensitively (' ', '_' and '-' are equal, and
 * "KVM_EXIT_" is optional for user exits), plus the forms reason_str() prints.
 * 0 and *reason, or -ENOENT.
 */
int reason_lookup(__u32 isa, const char *name, __u32 *reason);

struct reason_sel {
	__u32 isa;
	__u32 reason;
};

/*
 * Parses a comma-separated -r/--reason list. Each item is NAME, NUMBER (decimal or 0x hex),
 * or ISA:NAME / ISA:NUMBER. A bare name selects it in every ISA whose table has it ("io" is
 * both SVM io and KVM_EXIT_IO); a bare number selects that code in every ISA.
 * Duplicates are dropped. Returns the number of pairs written to out, or -1 with err holding
 * one line that names the bad item and says how to list valid names.
 */
int reason_parse_list(const char *list, struct reason_sel *out, int max, char *err,
		      size_t errlen);

/*
 * The other kvm tracepoints (VMEXIT_EV_KVM_EVENT, enum vmexit_kvm_event): the one names table
 * every output uses. The name is the tracepoint's without "kvm_" ("pio" is kvm:kvm_pio).
 */
const char *kvm_event_name(__u32 id);	/* "pio", ...; NULL when unknown */
/* id, or -ENOENT; "pio" and "kvm_pio", any case. */
int kvm_event_lookup(const char *name);
/* "kvm:pio, kvm:mmio, ... or kvm:page_fault" for prefix "kvm:", in buf (truncated to len). */
const char *kvm_event_list(const char *prefix, char *buf, size_t len);
/*
 * Parses a --kvm-events list: comma-separated names, or "all". 0 and *mask (bit id set for
 * each event), or -1 with err naming the bad item and the valid names.
 */
int kvm_event_parse_list(const char *list, __u32 *mask, char *err, size_t errlen);
#define KVM_EVENTS_ALL	(((1u << VMEXIT_KVM_NR) - 1) & ~1u)
/* "pio, mmio, ..., " for option help texts: VMEXIT_KVM_EVENTS(KVM_EVENT_HELP_NAME) "or all" */
#define KVM_EVENT_HELP_NAME(ID, id, name) #name ", "

/* Every known name, grouped by ISA, for `vmexit list` and error help. 0, or the -errno of the
 * first write that failed (out_error(): it is gone by the end of a list longer than a buffer). */
int reason_list_print(FILE *f);

#endif /* VMEXIT_REASONS_H */
