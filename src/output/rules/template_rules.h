/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The compiled form of a rules file, shared by its two users: template_parse.c builds it and
 * template_render.c walks it once per event. Not for the rest of vmexit: template.h is the API.
 */
#ifndef VMEXIT_TEMPLATE_RULES_H
#define VMEXIT_TEMPLATE_RULES_H

#include <stdbool.h>
#include <linux/types.h>

#include "fmt_num.h"
#include "hashmap.h"
#include "kvmtrace_ids.h"
#include "vmexit.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define TMPL_MAX_RULES	65534	/* rule indices are stored + 1 in __u16 tables */
#define DIRECT_REASONS	2048	/* (isa, reason < this) is looked up in a flat table */
#define NR_ISA		4	/* VMEXIT_ISA_* are 1..3 */
#define NR_EV_TYPES	10	/* enum vmexit_event_type is below this */

/* The %(name) fields (template_fields.c has the table of names). */
enum field_id {
	F_TSC, F_RELTSC, F_EVENT, F_VCPU, F_PID, F_WORD, F_REASON, F_REASON_NAME, F_ISA, F_GUEST,
	F_TID, F_CPU, F_RIP, F_INFO1, F_INFO2, F_INTR_INFO, F_ERROR_CODE, F_LATENCY_NS,
	F_LATENCY_US, F_TS_NS, F_REL_NS, F_TIME, F_RELTIME, F_TYPE,
	F_ONCPU_NS, F_BLOCKED_NS, F_RUNQ_NS,	/* --split: latency_ns in three parts, else 0 */
	F_KVM_EVENT,	/* which kvm tracepoint; %s its name */
	F_ACCESS,	/* kvm events: read / write / unsatisfied-read */
	F_KVM,		/* a named field of kvm events: reasons.c's table, by its name */
	F_IN_FLIGHT,	/* 1: the exit never completed (tracing or its thread ended first) */
	F_WALLTIME,	/* ts_ns on CLOCK_REALTIME (env->real_offset_ns) */
	F_REASON_LABEL,	/* reason_label(): the tables' KVM_EXIT_IO */
	F_LATENCY,	/* latency_ns as the tables print it (env->unit_ns), with its unit */
	F_KEY,		/* --keys: the exit's key (port, address, ...), 0 without */
	F_KEY_KIND,	/* its kind; %s its name (port, mmio, ..., none) */
	F_KEY_DIR,	/* its direction; %s in, out, read, write, hv or "" */
	F_KEY_NAME,	/* the built-in name of the key, "" if none */
	F_KEY_LABEL,	/* stat --by key's KEY column: "0x3f8 out serial", "(none)" */
	F_WAKE_SOURCE,	/* stream --wake: the delivery's source (wake.h); %s its name */
	F_WAKE_PART,	/* ... one of its parts (word: enum wake_part), ns; 0 for other events */
	F_HLT_PART,	/* a halt's or halted exit's part (word: enum hlt_part), ns; else 0 */
	F_HALT_END,	/* how a halt ended (hlt_events.h); %s its name */
};

enum field_kind {
	FK_U,		/* unsigned number */
	FK_S,		/* signed number; x/o/u show its two's complement at its own width */
	FK_NAMED,	/* unsigned number whose %s is a name (isa, type, in_flight) */
	FK_STR,		/* text only */
};

struct field_def {
	const char *name;
	__u8 id;
	__u8 kind;
	__u8 bits;	/* width of a FK_S field, for x/o/u of negative values */
	__u8 word;	/* F_WORD: 1..5 */
	__u32 scale;	/* the value is ns (or µs...) but the field is in units of scale */
};

extern const struct field_def tmpl_fields[];
extern const unsigned int tmpl_nr_fields;
extern const struct field_def *const tmpl_pid_field;	/* "pid", the fallback of %(guest) */
/* type:NAME selectors and %(type)s, by enum vmexit_event_type (NULL: none). */
extern const char *const tmpl_type_names[NR_EV_TYPES];

struct op {
	__u8 field;		/* enum field_id, or OP_LITERAL */
	__u8 word;		/* F_WORD: 1..5 */
	__u8 fidx;		/* index in tmpl_fields[] */
	struct fmt_spec spec;
	__u32 off, len;		/* OP_LITERAL: span of the rule's lit */
};

#define OP_LITERAL	0xff

struct rule {
	struct op *ops;
	int nops;
	char *lit;		/* unescaped literal text, '\n' appended */
	int line;
};

enum { LVL_BARE = 1, LVL_QUALIFIED = 2 };

/* Selections of reason codes too large for the flat table (SVM's 0x400 up, say). */
struct reason_id {
	__u32 isa, reason;
};

struct big_sel {
	__u16 rule;		/* index + 1 */
	__u8 level;
};

DEFINE_HASHMAP(big_sels, struct reason_id, struct big_sel)

struct tmpl_rules {
	struct rule *rules;
	int nrules, cap;
	bool need_reltsc;
	__u16 direct[NR_ISA][DIRECT_REASONS];	/* rule index + 1; 0: none */
	__u8 level[NR_ISA][DIRECT_REASONS];
	struct big_sels big;			/* reasons from DIRECT_REASONS up */
	__u16 kvmtrace_class[KVMTRACE_NR_CLASS];	/* 0x0002xxxx rules, by low bits */
	__u16 type_rule[NR_EV_TYPES];		/* by enum vmexit_event_type */
	__u16 kvm_rule[VMEXIT_KVM_NR];		/* kvm:NAME, by enum vmexit_kvm_event */
	__u16 def;
	int kvmtrace_line[KVMTRACE_NR_IDS];	/* duplicates, incl. never-matching ids */
	int type_line[NR_EV_TYPES];
	int kvm_line[VMEXIT_KVM_NR];
	int def_line;
};

#endif /* VMEXIT_TEMPLATE_RULES_H */
