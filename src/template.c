// SPDX-License-Identifier: GPL-2.0
/*
 * The per-event template engine: compiles a rules file into literal spans and field operations,
 * picks the rule for each event, and renders it with a formatter of our own. The rules file is
 * user input, so none of its text ever reaches printf as a format string; the few snprintf()
 * calls below use constant formats and only for error messages and reason names.
 *
 * The language (and its compatibility with the 2008 kvmtrace_format "formats" files) is
 * documented in docs/formats.md; keep the two in step.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt_num.h"
#include "hashmap.h"
#include "reasons.h"
#include "template.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define TMPL_MAX_WIDTH	255	/* width and precision bound: keeps every field's output bounded */
#define TMPL_MAX_RULES	65534	/* rule indices are stored + 1 in __u16 tables */
#define DIRECT_REASONS	2048	/* (isa, reason < this) is looked up in a flat table */
#define NR_ISA		4	/* VMEXIT_ISA_* are 1..3 */

/* ------------------------------------------------------------------------------------------ */
/* Fields */

enum field_id {
	F_TSC, F_RELTSC, F_EVENT, F_VCPU, F_PID, F_WORD, F_REASON, F_REASON_NAME, F_ISA, F_GUEST,
	F_TID, F_CPU, F_RIP, F_INFO1, F_INFO2, F_INTR_INFO, F_ERROR_CODE, F_LATENCY_NS,
	F_LATENCY_US, F_TS_NS, F_REL_NS, F_TIME, F_RELTIME, F_TYPE,
	F_KVM_EVENT,	/* which kvm tracepoint; %s its name */
	F_ACCESS,	/* kvm events: read / write / unsatisfied-read */
	F_KVM,		/* a named field of kvm events: reasons.c's table, by its name */
};

enum field_kind {
	FK_U,		/* unsigned number */
	FK_S,		/* signed number; x/o/u show its two's complement at its own width */
	FK_NAMED,	/* unsigned number whose %s is a name (isa, type) */
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

#define F_PID_IDX	4	/* fields[] index of "pid", the fallback of %(guest) */

static const struct field_def fields[] = {
	{ "tsc",	 F_TSC,		FK_U,	  64, 0, 1 },
	{ "reltsc",	 F_RELTSC,	FK_S,	  64, 0, 1 },
	{ "event",	 F_EVENT,	FK_U,	  64, 0, 1 },
	{ "vcpu",	 F_VCPU,	FK_S,	  32, 0, 1 },
	{ "pid",	 F_PID,		FK_U,	  64, 0, 1 },
	{ "1",		 F_WORD,	FK_U,	  64, 1, 1 },
	{ "2",		 F_WORD,	FK_U,	  64, 2, 1 },
	{ "3",		 F_WORD,	FK_U,	  64, 3, 1 },
	{ "4",		 F_WORD,	FK_U,	  64, 4, 1 },
	{ "5",		 F_WORD,	FK_U,	  64, 5, 1 },
	{ "reason",	 F_REASON,	FK_U,	  64, 0, 1 },
	{ "reason_name", F_REASON_NAME,	FK_STR,	  64, 0, 1 },
	{ "isa",	 F_ISA,		FK_NAMED, 64, 0, 1 },
	{ "guest",	 F_GUEST,	FK_STR,	  64, 0, 1 },
	{ "tid",	 F_TID,		FK_U,	  64, 0, 1 },
	{ "cpu",	 F_CPU,		FK_U,	  64, 0, 1 },
	{ "rip",	 F_RIP,		FK_U,	  64, 0, 1 },
	{ "info1",	 F_INFO1,	FK_U,	  64, 0, 1 },
	{ "info2",	 F_INFO2,	FK_U,	  64, 0, 1 },
	{ "intr_info",	 F_INTR_INFO,	FK_U,	  64, 0, 1 },
	{ "error_code",	 F_ERROR_CODE,	FK_U,	  64, 0, 1 },
	{ "latency_ns",	 F_LATENCY_NS,	FK_U,	  64, 0, 1 },
	{ "latency_us",	 F_LATENCY_US,	FK_U,	  64, 0, 1000 },
	{ "ts_ns",	 F_TS_NS,	FK_U,	  64, 0, 1 },
	{ "rel_ns",	 F_REL_NS,	FK_S,	  64, 0, 1 },
	{ "time",	 F_TIME,	FK_U,	  64, 0, 1000000000 },
	{ "reltime",	 F_RELTIME,	FK_S,	  64, 0, 1000000000 },
	{ "type",	 F_TYPE,	FK_NAMED, 64, 0, 1 },
	{ "kvm_event",	 F_KVM_EVENT,	FK_NAMED, 64, 0, 1 },
	{ "access",	 F_ACCESS,	FK_STR,	  64, 0, 1 },
	{ "port",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "gpa",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "msr",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "val",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "size",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "count",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "exception",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "function",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "index",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "eax",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "ebx",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "ecx",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "edx",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "found",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "used_max_basic", F_KVM,	FK_U,	  64, 0, 1 },
	{ "vector",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "soft",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "reinjected",	 F_KVM,		FK_U,	  64, 0, 1 },
	{ "fault_address", F_KVM,	FK_U,	  64, 0, 1 },
};

/* ------------------------------------------------------------------------------------------ */
/* kvmtrace compatibility: its event ids, what they select, and what %(1)..%(5) mean for them */

enum word_src {
	W_ZERO,		/* the seed's word exists but our record does not carry it */
	W_REASON, W_RIP, W_INFO1, W_INFO2, W_INTR_INFO,
	W_PF_ERR,	/* page-fault error code / EPT exit qualification */
	W_PF_ADDR,	/* faulting address when recorded (CR2, SVM GPA), else 0 */
	W_IO_PORT, W_IO_SIZE, W_CR_NUM, W_DR_NUM, W_VECTOR, W_LMSW, W_APIC_OFF,
};

#define SEED_VMENTRY	0x00010001u
#define SEED_VMEXIT	0x00010002u
#define SEED_CLASS_BASE	0x00020000u	/* the per-cause ids, 0x00020001.. */
#define SEED_PAGE_FAULT	0x00020001u
#define SEED_IO_READ	0x00020004u
#define SEED_IO_WRITE	0x00020005u
#define SEED_CR_READ	0x00020006u
#define SEED_CR_WRITE	0x00020007u
#define SEED_DR_READ	0x00020008u
#define SEED_DR_WRITE	0x00020009u
#define SEED_MSR_READ	0x0002000au
#define SEED_MSR_WRITE	0x0002000bu
#define SEED_CPUID	0x0002000cu
#define SEED_INTR	0x0002000du
#define SEED_NMI	0x0002000eu
#define SEED_VMMCALL	0x0002000fu
#define SEED_HLT	0x00020010u
#define SEED_CLTS	0x00020011u
#define SEED_LMSW	0x00020012u
#define SEED_APIC	0x00020013u
#define NR_SEED_CLASS	0x14		/* low bits of the per-cause ids index the class table */

struct seed_def {
	__u32 id;
	const char *name;
	bool never;		/* no event of ours carries its meaning: accepted, never matches */
	__u8 words[5];
};

static const __u8 generic_words[5] = { W_REASON, W_RIP, W_INFO1, W_INFO2, W_INTR_INFO };

static const struct seed_def seed_ids[] = {
	{ SEED_VMENTRY,	   "VMENTRY",	  true,  { 0 } },
	{ SEED_VMEXIT,	   "VMEXIT",	  false,
	  { W_REASON, W_RIP, W_INFO1, W_INFO2, W_INTR_INFO } },
	{ SEED_PAGE_FAULT, "PAGE_FAULT",  false, { W_PF_ERR, W_PF_ADDR } },
	{ 0x00020002,	   "INJ_VIRQ",	  true,  { 0 } },
	{ 0x00020003,	   "PEND_INTR",	  true,  { 0 } },
	{ SEED_IO_READ,	   "IO_READ",	  false, { W_IO_PORT, W_IO_SIZE } },
	{ SEED_IO_WRITE,   "IO_WRITE",	  false, { W_IO_PORT, W_IO_SIZE } },
	{ SEED_CR_READ,	   "CR_READ",	  false, { W_CR_NUM } },
	{ SEED_CR_WRITE,   "CR_WRITE",	  false, { W_CR_NUM } },
	{ SEED_DR_READ,	   "DR_READ",	  false, { W_DR_NUM } },
	{ SEED_DR_WRITE,   "DR_WRITE",	  false, { W_DR_NUM } },
	{ SEED_MSR_READ,   "MSR_READ",	  false, { 0 } },
	{ SEED_MSR_WRITE,  "MSR_WRITE",	  false, { 0 } },
	{ SEED_CPUID,	   "CPUID",	  false, { 0 } },
	{ SEED_INTR,	   "INTR",	  false, { W_VECTOR } },
	{ SEED_NMI,	   "NMI",	  false, { 0 } },
	{ SEED_VMMCALL,	   "VMMCALL",	  false, { 0 } },
	{ SEED_HLT,	   "HLT",	  false, { 0 } },
	{ SEED_CLTS,	   "CLTS",	  false, { 0 } },
	{ SEED_LMSW,	   "LMSW",	  false, { W_LMSW } },
	{ SEED_APIC,	   "APIC_ACCESS", false, { W_APIC_OFF } },
};

static const struct seed_def *seed_find(__u32 id)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(seed_ids); i++)
		if (seed_ids[i].id == id)
			return &seed_ids[i];
	return NULL;
}

/* VMX basic exit reasons and SVM exit codes the classifier needs (SDM / APM numbering). */
#define VMX_EXCEPTION_NMI	0
#define VMX_EXTINT		1
#define VMX_CPUID		10
#define VMX_HLT			12
#define VMX_VMCALL		18
#define VMX_CR_ACCESS		28
#define VMX_DR_ACCESS		29
#define VMX_IO			30
#define VMX_MSR_READ		31
#define VMX_MSR_WRITE		32
#define VMX_APIC_ACCESS		44
#define VMX_EPT_VIOLATION	48
#define SVM_PF_EXCP		0x4e
#define SVM_INTR		0x60
#define SVM_NMI			0x61
#define SVM_CPUID		0x72
#define SVM_HLT			0x78
#define SVM_IO			0x7b
#define SVM_MSR			0x7c
#define SVM_VMMCALL		0x81
#define SVM_NPF			0x400
#define SVM_AVIC_NOACCEL	0x402

#define INTR_INFO_VALID		0x80000000u
#define INTR_TYPE(ii)		(((ii) >> 8) & 7)
#define INTR_TYPE_NMI		2
#define INTR_TYPE_HW_EXC	3

/* The kvmtrace event id that describes ev: a per-cause id, VMEXIT, or 0 (no counterpart). */
static __u32 seed_classify(const struct vmexit_event *ev)
{
	__u32 r = ev->reason;
	__u64 q = ev->info1;

	if (ev->type != VMEXIT_EV_EXIT)
		return 0;
	if (ev->isa == VMEXIT_ISA_VMX && !(r & VMX_FAILED_VMENTRY)) {
		switch (r & VMX_BASIC_MASK) {
		case VMX_EXCEPTION_NMI:
			if (!(ev->intr_info & INTR_INFO_VALID))
				break;
			if (INTR_TYPE(ev->intr_info) == INTR_TYPE_NMI)
				return SEED_NMI;
			if (INTR_TYPE(ev->intr_info) == INTR_TYPE_HW_EXC &&
			    (ev->intr_info & 0xff) == 14)
				return SEED_PAGE_FAULT;
			break;
		case VMX_EXTINT:	return SEED_INTR;
		case VMX_CPUID:		return SEED_CPUID;
		case VMX_HLT:		return SEED_HLT;
		case VMX_VMCALL:	return SEED_VMMCALL;
		case VMX_CR_ACCESS:
			/* Exit qualification bits 5:4: mov to CR, mov from CR, CLTS, LMSW. */
			switch ((q >> 4) & 3) {
			case 0:	return SEED_CR_WRITE;
			case 1:	return SEED_CR_READ;
			case 2:	return SEED_CLTS;
			default: return SEED_LMSW;
			}
		case VMX_DR_ACCESS:	return (q & 0x10) ? SEED_DR_READ : SEED_DR_WRITE;
		case VMX_IO:		return (q & 0x8) ? SEED_IO_READ : SEED_IO_WRITE;
		case VMX_MSR_READ:	return SEED_MSR_READ;
		case VMX_MSR_WRITE:	return SEED_MSR_WRITE;
		case VMX_APIC_ACCESS:	return SEED_APIC;
		case VMX_EPT_VIOLATION:	return SEED_PAGE_FAULT;
		}
	} else if (ev->isa == VMEXIT_ISA_SVM) {
		if (r < 0x10)
			return SEED_CR_READ;
		if (r < 0x20)
			return SEED_CR_WRITE;
		if (r < 0x30)
			return SEED_DR_READ;
		if (r < 0x40)
			return SEED_DR_WRITE;
		switch (r) {
		case SVM_PF_EXCP:
		case SVM_NPF:		return SEED_PAGE_FAULT;
		case SVM_INTR:		return SEED_INTR;
		case SVM_NMI:		return SEED_NMI;
		case SVM_CPUID:		return SEED_CPUID;
		case SVM_HLT:		return SEED_HLT;
		case SVM_IO:		return (q & 1) ? SEED_IO_READ : SEED_IO_WRITE;
		case SVM_MSR:		return q ? SEED_MSR_WRITE : SEED_MSR_READ;
		case SVM_VMMCALL:	return SEED_VMMCALL;
		case SVM_AVIC_NOACCEL:	return SEED_APIC;
		}
	}
	return SEED_VMEXIT;
}

static __u64 word_value(__u8 src, const struct vmexit_event *ev)
{
	bool vmx = ev->isa == VMEXIT_ISA_VMX;

	switch (src) {
	case W_REASON:		return ev->reason;
	case W_RIP:		return ev->rip;
	case W_INFO1:		return ev->info1;
	case W_INFO2:		return ev->info2;
	case W_INTR_INFO:	return ev->intr_info;
	case W_PF_ERR:
		/* A VMX #PF exception exit keeps the error code apart; the others in info1. */
		if (vmx && (ev->reason & VMX_BASIC_MASK) == VMX_EXCEPTION_NMI)
			return ev->error_code;
		return ev->info1;
	case W_PF_ADDR:
		if (vmx)	/* CR2 is the #PF exit qualification; EPT's GPA is not recorded */
			return (ev->reason & VMX_BASIC_MASK) == VMX_EXCEPTION_NMI ? ev->info1 : 0;
		return ev->info2;
	case W_IO_PORT:		return (ev->info1 >> 16) & 0xffff;
	case W_IO_SIZE:
		/* VMX: size - 1 in bits 2:0; SVM: one-hot SZ8/SZ16/SZ32 in bits 6:4. */
		return vmx ? (ev->info1 & 7) + 1 : (ev->info1 >> 4) & 7;
	case W_CR_NUM:		return vmx ? ev->info1 & 0xf : ev->reason & 0xf;
	case W_DR_NUM:		return vmx ? ev->info1 & 7 : ev->reason & 0xf;
	case W_VECTOR:
		return vmx && (ev->intr_info & INTR_INFO_VALID) ? ev->intr_info & 0xff : 0;
	case W_LMSW:		return (ev->info1 >> 16) & 0xffff;
	case W_APIC_OFF:	return ev->info1 & 0xfff;
	default:		return 0;
	}
}

/* ------------------------------------------------------------------------------------------ */
/* Compiled rules */

enum {
	FL_MINUS = 1, FL_ZERO = 2, FL_PLUS = 4, FL_SPACE = 8, FL_ALT = 16,
};

struct op {
	__u8 field;		/* enum field_id, or OP_LITERAL */
	__u8 conv;		/* d u x X o f s ('i' is stored as 'd') */
	__u8 flags;
	__u8 word;		/* F_WORD: 1..5 */
	__u8 fidx;		/* index in fields[] */
	__u16 width;
	__s16 prec;		/* -1: not given */
	__u32 off, len;		/* OP_LITERAL: span of the rule's lit */
};

#define OP_LITERAL	0xff

struct rule {
	struct op *ops;
	int nops;
	char *lit;		/* unescaped literal text, '\n' appended */
	int line;
};

/* A selection for a reason code too large for the flat table. */
struct big_sel {
	__u32 isa, reason;
	__u16 rule;		/* index + 1 */
	__u8 level;
};

enum { LVL_BARE = 1, LVL_QUALIFIED = 2 };

struct tmpl_rules {
	struct rule *rules;
	int nrules, cap;
	bool need_reltsc;
	__u16 direct[NR_ISA][DIRECT_REASONS];	/* rule index + 1; 0: none */
	__u8 level[NR_ISA][DIRECT_REASONS];
	struct big_sel *big;
	int nbig, capbig;
	__u16 seed_class[NR_SEED_CLASS];	/* 0x0002xxxx rules, by low bits */
	__u16 type_rule[5];			/* by enum vmexit_event_type */
	__u16 kvm_rule[VMEXIT_KVM_NR];		/* kvm:NAME, by enum vmexit_kvm_event */
	__u16 def;
	int seed_line[ARRAY_SIZE(seed_ids)];	/* duplicate detection, incl. never-matching ids */
	int type_line[5];
	int kvm_line[VMEXIT_KVM_NR];
	int def_line;
};

/* ------------------------------------------------------------------------------------------ */
/* Parser */

struct parser {
	const char *file;
	int line;
	const char *lstart;	/* start of the current line, for columns */
	char *err;
	size_t errlen;
	struct tmpl_rules *r;
};

__attribute__((format(printf, 3, 4)))
static int perr(struct parser *p, const char *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->errlen)
		return -EINVAL;
	n = snprintf(p->err, p->errlen, "%s:%d:%d: ", p->file, p->line, (int)(at - p->lstart) + 1);
	if (n >= 0 && (size_t)n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Levenshtein distance, capped: only used to suggest field names in errors. */
static int edit_distance(const char *a, size_t la, const char *b)
{
	size_t lb = strlen(b), i, j;
	int row[32], prev, tmp;

	if (la >= ARRAY_SIZE(row) || lb >= ARRAY_SIZE(row))
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			int best = prev + (tolower((unsigned char)a[i - 1]) != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static int unknown_field(struct parser *p, const char *at, const char *name, size_t n)
{
	char list[512];
	size_t i, used = 0;
	bool close = false;

	list[0] = '\0';
	/* Close names first ("did you mean"); with none close, every valid name. */
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		int d = edit_distance(name, n, fields[i].name);

		/* Short names are too alike for two edits to mean anything. */
		if (d <= (n <= 4 ? 1 : 2) && (size_t)d < n && used < sizeof(list)) {
			used += snprintf(list + used, sizeof(list) - used, "%s'%s'",
					 close ? " or " : "", fields[i].name);
			close = true;
		}
	}
	if (close)
		return perr(p, at, "unknown field '%.*s' (did you mean %s?)",
			    (int)(n > 64 ? 64 : n), name, list);
	for (i = 0; i < ARRAY_SIZE(fields) && used < sizeof(list); i++)
		used += snprintf(list + used, sizeof(list) - used, "%s%s", i ? " " : "",
				 fields[i].name);
	return perr(p, at, "unknown field '%.*s' (valid: %s)", (int)(n > 64 ? 64 : n), name, list);
}

static int push_op(struct rule *ru, int *cap, const struct op *op)
{
	if (ru->nops == *cap) {
		int ncap = *cap ? *cap * 2 : 8;
		struct op *n = realloc(ru->ops, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ru->ops = n;
		*cap = ncap;
	}
	ru->ops[ru->nops++] = *op;
	return 0;
}

/* Appends one literal byte, merging with a preceding literal op. */
static int push_lit(struct rule *ru, int *cap, size_t *litlen, char c)
{
	struct op op = { .field = OP_LITERAL, .off = *litlen, .len = 1 };

	ru->lit[(*litlen)++] = c;
	if (ru->nops && ru->ops[ru->nops - 1].field == OP_LITERAL) {
		ru->ops[ru->nops - 1].len++;
		return 0;
	}
	return push_op(ru, cap, &op);
}

#define CONV_HELP	"(use d, u, x, X, o, f or s)"

/* Reads a width/precision number; rejects what no terminal could want. */
static int parse_num(struct parser *p, const char **s, const char *end, const char *what,
		     int *val)
{
	const char *start = *s;
	long v = 0;

	while (*s < end && isdigit((unsigned char)**s)) {
		v = v * 10 + (**s - '0');
		if (v > TMPL_MAX_WIDTH)
			return perr(p, start, "%s too large (at most %d)", what, TMPL_MAX_WIDTH);
		(*s)++;
	}
	*val = v;
	return 0;
}

/* Compiles one %(name)FMT field; *s points just past the '%'. */
static int parse_field(struct parser *p, struct rule *ru, int *cap, const char **s,
		       const char *end)
{
	const char *pct = *s - 1, *name, *c;
	const struct field_def *f = NULL;
	struct op op = { .prec = -1 };
	size_t i, n;
	int v, err;

	name = *s + 1;
	for (c = name; c < end && *c != ')'; c++)
		;
	if (c >= end)
		return perr(p, pct, "unterminated '%%(' (missing ')')");
	n = c - name;
	if (!n)
		return perr(p, pct, "empty field name in '%%()'");
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		if (strlen(fields[i].name) == n && !memcmp(fields[i].name, name, n)) {
			f = &fields[i];
			break;
		}
	}
	if (!f)
		return unknown_field(p, name, name, n);
	op.field = f->id;
	op.word = f->word;
	op.fidx = f - fields;
	c++;

	for (; c < end; c++) {
		if (*c == '-')
			op.flags |= FL_MINUS;
		else if (*c == '0')
			op.flags |= FL_ZERO;
		else if (*c == '+')
			op.flags |= FL_PLUS;
		else if (*c == ' ')
			op.flags |= FL_SPACE;
		else if (*c == '#')
			op.flags |= FL_ALT;
		else
			break;
	}
	if (c < end && *c == '*')
		return perr(p, c, "'*' width is not supported: give a number");
	err = parse_num(p, &c, end, "width", &v);
	if (err)
		return err;
	op.width = v;
	if (c < end && *c == '.') {
		c++;
		if (c < end && *c == '*')
			return perr(p, c, "'*' precision is not supported: give a number");
		err = parse_num(p, &c, end, "precision", &v);
		if (err)
			return err;
		op.prec = v;
	}
	/* Python's % accepts and ignores a length modifier; so do we, for its files' sake. */
	if (c < end && (*c == 'h' || *c == 'l' || *c == 'L'))
		c++;
	if (c >= end)
		return perr(p, pct, "missing conversion after '%%(%.*s)' " CONV_HELP, (int)n,
			    name);
	switch (*c) {
	case 'd':
	case 'i':
		op.conv = 'd';
		break;
	case 'u':
	case 'x':
	case 'X':
	case 'o':
	case 'f':
	case 's':
		op.conv = *c;
		break;
	default:
		if (isprint((unsigned char)*c))
			return perr(p, c, "bad conversion '%c' for field '%s' " CONV_HELP, *c,
				    f->name);
		return perr(p, c, "bad conversion byte 0x%02x for field '%s' " CONV_HELP,
			    (unsigned char)*c, f->name);
	}
	if (f->kind == FK_STR && op.conv != 's')
		return perr(p, c, "field '%s' is text: use %%(%s)s", f->name, f->name);
	if (op.field == F_RELTSC)
		p->r->need_reltsc = true;
	*s = c + 1;
	return push_op(ru, cap, &op);
}

/* Compiles the template text [s, end) into ru. */
static int parse_template(struct parser *p, struct rule *ru, const char *s, const char *end)
{
	size_t litlen = 0;
	int cap = 0, err = 0;

	/* Unescaping only shrinks the text; +1 for the line's newline. */
	ru->lit = malloc(end - s + 1);
	if (!ru->lit)
		return -ENOMEM;
	while (s < end && !err) {
		if (*s == '%') {
			if (s + 1 < end && s[1] == '%') {
				err = push_lit(ru, &cap, &litlen, '%');
				s += 2;
			} else if (s + 1 < end && s[1] == '(') {
				s++;
				err = parse_field(p, ru, &cap, &s, end);
			} else {
				err = perr(p, s, "'%%' must start a field '%%(name)d' or be "
					   "written '%%%%'");
			}
		} else if (*s == '\\') {
			char c;

			if (s + 1 >= end)
				return perr(p, s, "'\\' at end of line (write '\\\\' for a "
					    "backslash)");
			switch (s[1]) {
			case 'n':  c = '\n'; break;
			case 't':  c = '\t'; break;
			case '\\': c = '\\'; break;
			default:
				return perr(p, s, "unknown escape '\\%c' (use \\n, \\t or \\\\)",
					    isprint((unsigned char)s[1]) ? s[1] : '?');
			}
			err = push_lit(ru, &cap, &litlen, c);
			s += 2;
		} else {
			err = push_lit(ru, &cap, &litlen, *s++);
		}
	}
	if (!err)
		err = push_lit(ru, &cap, &litlen, '\n');
	return err;
}

static int bind_reason(struct parser *p, const char *at, const char *item, __u32 isa,
		       __u32 reason, __u8 level, int rule)
{
	struct tmpl_rules *r = p->r;
	__u16 *slot;
	__u8 *lvl;
	char name[REASON_STR_MAX];
	int i;

	if (isa >= NR_ISA)
		return 0;
	if (reason < DIRECT_REASONS) {
		slot = &r->direct[isa][reason];
		lvl = &r->level[isa][reason];
	} else {
		for (i = 0; i < r->nbig; i++)
			if (r->big[i].isa == isa && r->big[i].reason == reason)
				break;
		if (i == r->nbig) {
			if (r->nbig == r->capbig) {
				int ncap = r->capbig ? r->capbig * 2 : 8;
				struct big_sel *n = realloc(r->big, ncap * sizeof(*n));

				if (!n)
					return -ENOMEM;
				r->big = n;
				r->capbig = ncap;
			}
			r->big[i] = (struct big_sel){ .isa = isa, .reason = reason };
			r->nbig++;
		}
		slot = &r->big[i].rule;
		lvl = &r->big[i].level;
	}
	/* An ISA-qualified selector overrides a bare one; two at the same level conflict. */
	if (*slot && *lvl == level && *slot - 1 != rule)
		return perr(p, at, "duplicate selector '%s': %s:%s already has the rule on line %d",
			    item, isa_name(isa), reason_str(isa, reason, name, sizeof(name)),
			    r->rules[*slot - 1].line);
	if (*lvl > level)
		return 0;
	*slot = rule + 1;
	*lvl = level;
	return 0;
}

/* Strict decimal / 0x hex u32; *hex8 says it was written as kvmtrace does, 0x + 8 digits. */
static bool parse_u32_strict(const char *s, __u32 *v, bool *hex8)
{
	unsigned long long x = 0;
	const char *d = s;
	int base = 10;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		d = s + 2;
	}
	if (!*d)
		return false;
	for (; *d; d++) {
		int c = tolower((unsigned char)*d), dv;

		if (isdigit(c))
			dv = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			dv = c - 'a' + 10;
		else
			return false;
		x = x * base + dv;
		if (x > 0xffffffffull)
			return false;
	}
	*v = x;
	*hex8 = base == 16 && strlen(s) == 10;
	return true;
}

static int bind_once(struct parser *p, const char *at, const char *item, int *line_slot,
		     __u16 *rule_slot, int rule)
{
	if (*line_slot && *line_slot != p->line)
		return perr(p, at, "duplicate selector '%s': already selected on line %d", item,
			    *line_slot);
	*line_slot = p->line;
	if (rule_slot)
		*rule_slot = rule + 1;
	return 0;
}

static const char *const type_names[] = {
	[VMEXIT_EV_EXIT] = "exit",
	[VMEXIT_EV_USER_EXIT] = "user_exit",
	[VMEXIT_EV_TSC_OFFSET] = "tsc_offset",
	[VMEXIT_EV_KVM_EVENT] = "kvm_event",
};

/* Binds one comma-separated selector item (NUL-terminated copy) to rule. */
static int parse_item(struct parser *p, const char *at, const char *item, int rule)
{
	struct tmpl_rules *r = p->r;
	struct reason_sel sel[16];
	char rerr[256];
	bool hex8;
	__u32 v;
	int i, n, err;

	if (!strcasecmp(item, "default"))
		return bind_once(p, at, item, &r->def_line, &r->def, rule);
	if (!strncasecmp(item, "type:", 5)) {
		for (i = 1; i < (int)ARRAY_SIZE(type_names); i++)
			if (!strcasecmp(item + 5, type_names[i]))
				return bind_once(p, at, item, &r->type_line[i], &r->type_rule[i],
						 rule);
		return perr(p, at, "unknown event type in '%s' (use type:exit, type:user_exit, "
			    "type:tsc_offset or type:kvm_event)", item);
	}
	if (!strncasecmp(item, "kvm:", 4)) {
		i = kvm_event_lookup(item + 4);
		if (i < 0)
			return perr(p, at, "unknown kvm event in '%s' (use kvm:pio, kvm:mmio, "
				    "kvm:msr, kvm:cpuid, kvm:inj_virq or kvm:page_fault)", item);
		return bind_once(p, at, item, &r->kvm_line[i], &r->kvm_rule[i], rule);
	}
	if (parse_u32_strict(item, &v, &hex8)) {
		const struct seed_def *sd;

		if (v == 0 && hex8)	/* kvmtrace's catch-all rule */
			return bind_once(p, at, item, &r->def_line, &r->def, rule);
		if (v >= 0x10000 && v <= 0x2ffff) {
			sd = seed_find(v);
			if (!sd)
				return perr(p, at, "unknown kvmtrace event id '%s' (known: "
					    "0x00010001-0x00010002, 0x00020001-0x00020013)", item);
			i = sd - seed_ids;
			if (sd->id == SEED_VMEXIT) {
				err = bind_once(p, at, item, &r->type_line[VMEXIT_EV_EXIT],
						&r->type_rule[VMEXIT_EV_EXIT], rule);
				if (err)
					return err;
			}
			return bind_once(p, at, item, &r->seed_line[i],
					 sd->never || sd->id == SEED_VMEXIT ?
					 NULL : &r->seed_class[sd->id & 0xff], rule);
		}
	}
	n = reason_parse_list(item, sel, ARRAY_SIZE(sel), rerr, sizeof(rerr));
	if (n < 0)
		return perr(p, at, "%s", rerr);
	for (i = 0; i < n; i++) {
		err = bind_reason(p, at, item, sel[i].isa, sel[i].reason,
				  strchr(item, ':') ? LVL_QUALIFIED : LVL_BARE, rule);
		if (err)
			return err;
	}
	return 0;
}

static int parse_selector(struct parser *p, const char *s, const char *end, int rule)
{
	char item[128];
	const char *c;
	int err;

	while (s <= end) {
		for (c = s; c < end && *c != ','; c++)
			;
		if (c == s)
			return perr(p, s, "empty item in selector");
		if ((size_t)(c - s) >= sizeof(item))
			return perr(p, s, "selector item too long");
		memcpy(item, s, c - s);
		item[c - s] = '\0';
		err = parse_item(p, s, item, rule);
		if (err)
			return err;
		s = c + 1;
	}
	return 0;
}

static int parse_line(struct parser *p, const char *s, const char *end)
{
	struct tmpl_rules *r = p->r;
	const char *sel, *sel_end;
	struct rule *ru;
	int err;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end || *s == '#')
		return 0;
	sel = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	sel_end = s;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end)
		return perr(p, s, "missing template after selector '%.*s'",
			    (int)(sel_end - sel > 64 ? 64 : sel_end - sel), sel);

	if (r->nrules >= TMPL_MAX_RULES)
		return perr(p, sel, "too many rules (at most %d)", TMPL_MAX_RULES);
	if (r->nrules == r->cap) {
		int ncap = r->cap ? r->cap * 2 : 16;
		struct rule *n = realloc(r->rules, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		r->rules = n;
		r->cap = ncap;
	}
	ru = &r->rules[r->nrules++];
	memset(ru, 0, sizeof(*ru));
	ru->line = p->line;
	err = parse_selector(p, sel, sel_end, r->nrules - 1);
	if (err)
		return err;
	return parse_template(p, ru, s, end);
}

void tmpl_rules_free(struct tmpl_rules *r)
{
	int i;

	if (!r)
		return;
	for (i = 0; i < r->nrules; i++) {
		free(r->rules[i].ops);
		free(r->rules[i].lit);
	}
	free(r->rules);
	free(r->big);
	free(r);
}

int tmpl_rules_parse(const char *text, size_t len, const char *filename,
		     struct tmpl_rules **out, char *err, size_t errlen)
{
	struct parser p = { .file = filename ? filename : "<rules>", .err = err,
			    .errlen = errlen };
	const char *s = text, *end = text + len, *eol, *nul;
	int ret = 0;

	*out = NULL;
	if (errlen)
		err[0] = '\0';
	p.r = calloc(1, sizeof(*p.r));
	if (!p.r) {
		snprintf(err, errlen, "%s: out of memory", p.file);
		return -ENOMEM;
	}
	while (s < end && !ret) {
		p.line++;
		p.lstart = s;
		eol = memchr(s, '\n', end - s);
		if (!eol)
			eol = end;
		nul = memchr(s, '\0', eol - s);
		if (nul) {
			ret = perr(&p, nul, "NUL byte in rules text");
			break;
		}
		/* CRLF files: the CR is line ending, not template text. */
		ret = parse_line(&p, s, eol > s && eol[-1] == '\r' ? eol - 1 : eol);
		s = eol + 1;
	}
	if (ret == -ENOMEM)
		snprintf(err, errlen, "%s:%d: out of memory", p.file, p.line);
	if (ret) {
		tmpl_rules_free(p.r);
		return ret;
	}
	*out = p.r;
	return 0;
}

int tmpl_rules_load(const char *path, struct tmpl_rules **out, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int ret;

	*out = NULL;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	for (;;) {
		if (len == cap) {
			char *nb;

			cap = cap ? cap * 2 : 4096;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				snprintf(err, errlen, "%s: out of memory", path);
				return -ENOMEM;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		snprintf(err, errlen, "%s: read error", path);
		return -EIO;
	}
	fclose(f);
	ret = tmpl_rules_parse(buf, len, path, out, err, errlen);
	free(buf);
	return ret;
}

/*
 * The stream line without --format. The per-cause kvmtrace ids decode I/O ports and CR
 * numbers for both VMX and SVM in one rule each; reason names win over them.
 */
#define P "%(reltime)13.6f %(time)17.6f %(guest)-16s %(vcpu)3d %(reason_name)-20s " \
	"%(latency_us)11.3fus"
/* kvm events (--kvm-events) happen at an instant: the same columns up to the vCPU. */
#define K "%(reltime)13.6f %(time)17.6f %(guest)-16s %(vcpu)3d "
const char tmpl_default_rules[] =
	"# vmexit's built-in stream format (see docs/formats.md)\n"
	"type:exit\t" P " rip=0x%(rip)x info1=0x%(info1)x info2=0x%(info2)x"
	" intr_info=0x%(intr_info)x error_code=0x%(error_code)x\n"
	"type:user_exit\t" P " errno=%(info1)d\n"
	"type:tsc_offset\t%(reltime)13.6f %(time)17.6f %(guest)-16s %(vcpu)3d tsc_offset"
	" 0x%(info1)x -> 0x%(info2)x\n"
	"vmx:EXCEPTION_NMI\t" P " rip=0x%(rip)x intr_info=0x%(intr_info)x"
	" error_code=0x%(error_code)x qual=0x%(info1)x\n"
	"vmx:EPT_VIOLATION,vmx:EPT_MISCONFIG\t" P " rip=0x%(rip)x qual=0x%(info1)x\n"
	"svm:npf\t" P " rip=0x%(rip)x error=0x%(info1)x gpa=0x%(info2)x\n"
	"0x00020004\t" P " rip=0x%(rip)x in port=0x%(1)04x size=%(2)d\n"
	"0x00020005\t" P " rip=0x%(rip)x out port=0x%(1)04x size=%(2)d\n"
	"0x00020006\t" P " rip=0x%(rip)x read cr%(1)d\n"
	"0x00020007\t" P " rip=0x%(rip)x write cr%(1)d\n"
	"0x0002000D\t" P " rip=0x%(rip)x vector=0x%(1)02x\n"
	"0x00020013\t" P " rip=0x%(rip)x offset=0x%(1)03x\n"
	"type:kvm_event\t" K "kvm_event %(kvm_event)s info1=0x%(info1)x info2=0x%(info2)x\n"
	"kvm:pio\t" K "pio %(access)s port 0x%(port)x size %(size)d val 0x%(val)x\n"
	"kvm:mmio\t" K "mmio %(access)s gpa 0x%(gpa)x size %(size)d val 0x%(val)x\n"
	"kvm:msr\t" K "msr %(access)s 0x%(msr)x val 0x%(val)x exception %(exception)d\n"
	"kvm:cpuid\t" K "cpuid 0x%(function)x index 0x%(index)x eax 0x%(eax)x ebx 0x%(ebx)x"
	" ecx 0x%(ecx)x edx 0x%(edx)x\n"
	"kvm:inj_virq\t" K "inj_virq vector 0x%(vector)02x soft %(soft)d reinjected"
	" %(reinjected)d\n"
	"kvm:page_fault\t" K "page_fault rip 0x%(rip)x address 0x%(fault_address)x"
	" error_code 0x%(error_code)x\n";
#undef P
#undef K

int tmpl_rules_default(struct tmpl_rules **out, char *err, size_t errlen)
{
	return tmpl_rules_parse(tmpl_default_rules, sizeof(tmpl_default_rules) - 1,
				"<built-in>", out, err, errlen);
}

/* ------------------------------------------------------------------------------------------ */
/* Per-vCPU previous timestamps for %(reltsc), keyed by thread id (one thread per vCPU) */

DEFINE_HASHMAP(thread_ts, __u32, __u64)

void tmpl_env_release(struct tmpl_env *env)
{
	struct thread_ts *v = env->priv;

	if (v) {
		thread_ts_free(v);
		free(v);
	}
	env->priv = NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Rendering */

struct rctx {
	const struct vmexit_event *ev;
	struct tmpl_env *env;
	const __u8 *words;
	__s64 reltsc;
	__u32 cls;
};

struct out {
	char *buf;
	size_t lim;		/* bytes that may be stored (len - 1) */
	size_t pos;		/* bytes produced, stored or not */
};

static inline void put(struct out *o, const char *s, size_t n)
{
	if (o->pos < o->lim) {
		size_t room = o->lim - o->pos;

		memcpy(o->buf + o->pos, s, n < room ? n : room);
	}
	o->pos += n;
}

static inline void pad(struct out *o, char c, size_t n)
{
	if (o->pos < o->lim) {
		size_t room = o->lim - o->pos;

		memset(o->buf + o->pos, c, n < room ? n : room);
	}
	o->pos += n;
}

static __u64 tsc_of(const struct tmpl_env *env, __u64 ns)
{
	__u64 hz;

	/* !(> 0) also catches NaN; the cap keeps the double-to-integer conversion defined. */
	if (!(env->tsc_mhz > 0))
		return ns;
	if (env->tsc_mhz > 1e6)
		return ns * 1000000u;
	/* Integer Hz and 128-bit product: exact, no double rounding at large uptimes. */
	hz = (__u64)(env->tsc_mhz * 1e6 + 0.5);
	return (__u64)((unsigned __int128)ns * hz / 1000000000u);
}

/* Lays out sign, prefix, precision zeros and digits in width, as C's printf does. */
static void emit_number(struct out *o, const struct op *op, char sign, const char *prefix,
			size_t plen, int zeros, const char *digits, int ndig)
{
	size_t body = (sign ? 1 : 0) + plen + zeros + ndig;
	size_t fill = op->width > body ? op->width - body : 0;
	/* As in C: '-' beats '0', and a precision turns '0' off for integers. */
	bool zero = !(op->flags & FL_MINUS) && (op->flags & FL_ZERO) && op->prec < 0;

	if (fill && !(op->flags & FL_MINUS) && !zero)
		pad(o, ' ', fill);
	if (sign)
		put(o, &sign, 1);
	put(o, prefix, plen);
	if (fill && zero)
		pad(o, '0', fill);
	pad(o, '0', zeros);
	put(o, digits, ndig);
	if (fill && (op->flags & FL_MINUS))
		pad(o, ' ', fill);
}

static void emit_str(struct out *o, const struct op *op, const char *s, size_t n)
{
	size_t fill;

	if (op->prec >= 0 && n > (size_t)op->prec)
		n = op->prec;
	fill = op->width > n ? op->width - n : 0;
	if (fill && !(op->flags & FL_MINUS))
		pad(o, ' ', fill);
	put(o, s, n);
	if (fill && (op->flags & FL_MINUS))
		pad(o, ' ', fill);
}

static char sign_of(const struct op *op, bool neg)
{
	if (neg)
		return '-';
	if (op->flags & FL_PLUS)
		return '+';
	if (op->flags & FL_SPACE)
		return ' ';
	return 0;
}

static const __u64 pow10_u64[] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull,
};

/* %f of mag/scale: exact decimal arithmetic, ties to even like printf on exact values. */
static void emit_fixed(struct out *o, const struct op *op, __u64 mag, bool neg, __u32 scale)
{
	char ibuf[24], fbuf[16];
	int p = op->prec < 0 ? 6 : op->prec, fp = p < 9 ? p : 9, ni, extra = p - fp;
	__u64 ip = mag / scale, frac9 = (mag % scale) * (1000000000u / scale), q, rem, div;
	char sign = sign_of(op, neg);
	bool dot = p || (op->flags & FL_ALT);
	size_t body, fill;

	div = pow10_u64[9 - fp];
	q = frac9 / div;
	rem = frac9 % div;
	if (rem * 2 > div || (rem * 2 == div && ((fp ? q : ip) & 1)))
		q++;
	if (q == pow10_u64[fp]) {
		q = 0;
		ip++;
	}
	ni = fmt_utoa_rev(ibuf + sizeof(ibuf), ip, 10, false);
	if (fp) {
		int nf = fmt_utoa_rev(fbuf + sizeof(fbuf), q, 10, false);

		memset(fbuf + sizeof(fbuf) - fp, '0', fp - nf);
	}
	body = (sign ? 1 : 0) + ni + dot + p;
	fill = op->width > body ? op->width - body : 0;
	if (fill && !(op->flags & (FL_MINUS | FL_ZERO)))
		pad(o, ' ', fill);
	if (sign)
		put(o, &sign, 1);
	if (fill && !(op->flags & FL_MINUS) && (op->flags & FL_ZERO))
		pad(o, '0', fill);
	put(o, ibuf + sizeof(ibuf) - ni, ni);
	if (dot)
		put(o, ".", 1);
	put(o, fbuf + sizeof(fbuf) - fp, fp);
	pad(o, '0', extra);
	if (fill && (op->flags & FL_MINUS))
		pad(o, ' ', fill);
}

static void emit_int(struct out *o, const struct op *op, const struct field_def *f, __u64 raw)
{
	char dbuf[24];
	bool neg = false;
	__u64 mag = raw;
	unsigned int base = 10;
	const char *prefix = "";
	size_t plen = 0;
	int ndig, zeros;

	if (f->kind == FK_S) {
		neg = (__s64)raw < 0;
		if (neg && (op->conv == 'd' || op->conv == 'f' || op->conv == 's'))
			mag = -raw;
		else if (f->bits < 64)	/* x/o/u of a negative s32: its 32-bit pattern */
			mag &= (1ull << f->bits) - 1;
	}
	if (op->conv == 'f') {
		emit_fixed(o, op, mag, neg, f->scale);
		return;
	}
	mag /= f->scale;
	switch (op->conv) {
	case 'x':
	case 'X':
		base = 16;
		if ((op->flags & FL_ALT) && mag) {
			prefix = op->conv == 'x' ? "0x" : "0X";
			plen = 2;
		}
		break;
	case 'o':
		base = 8;
		break;
	}
	/* C: an explicit zero precision prints no digits for zero. */
	if (op->prec == 0 && mag == 0 && op->conv != 's')
		ndig = 0;
	else
		ndig = fmt_utoa_rev(dbuf + sizeof(dbuf), mag, base, op->conv == 'X');
	if (op->conv == 's') {
		if (neg)
			dbuf[sizeof(dbuf) - ++ndig] = '-';
		emit_str(o, op, dbuf + sizeof(dbuf) - ndig, ndig);
		return;
	}
	zeros = op->prec > ndig ? op->prec - ndig : 0;
	if (op->conv == 'o' && (op->flags & FL_ALT) && !zeros &&
	    (!ndig || dbuf[sizeof(dbuf) - ndig] != '0'))
		zeros = 1;
	emit_number(o, op, op->conv == 'd' ? sign_of(op, neg) : 0, prefix, plen, zeros,
		    dbuf + sizeof(dbuf) - ndig, ndig);
}

static __u64 field_value(const struct op *op, const struct rctx *c)
{
	const struct vmexit_event *ev = c->ev;

	switch (op->field) {
	case F_TSC:		return tsc_of(c->env, ev->ts_ns);
	case F_RELTSC:		return c->reltsc;
	case F_EVENT:		return c->cls;
	case F_VCPU:		return (__s64)ev->vcpu;
	case F_PID:		return ev->tgid;
	case F_WORD:		return word_value(c->words[op->word - 1], ev);
	case F_REASON:		return ev->reason;
	case F_ISA:		return ev->isa;
	case F_TID:		return ev->tid;
	case F_CPU:		return ev->cpu;
	case F_RIP:		return ev->rip;
	case F_INFO1:		return ev->info1;
	case F_INFO2:		return ev->info2;
	case F_INTR_INFO:	return ev->intr_info;
	case F_ERROR_CODE:
		/* A page fault's error code has bits above 31 (SVM NPF): the 64-bit copy. */
		if (ev->type == VMEXIT_EV_KVM_EVENT && ev->reason == VMEXIT_KVM_PAGE_FAULT)
			return ev->info2;
		return ev->error_code;
	case F_LATENCY_NS:
	case F_LATENCY_US:	return ev->latency_ns;
	case F_TS_NS:
	case F_TIME:		return ev->ts_ns;
	case F_REL_NS:
	case F_RELTIME:		return ev->ts_ns - c->env->first_ts_ns;
	case F_TYPE:		return ev->type;
	case F_KVM_EVENT:	return ev->type == VMEXIT_EV_KVM_EVENT ? ev->reason : 0;
	case F_KVM: {
		const struct kvm_event_field *kf;

		if (ev->type != VMEXIT_EV_KVM_EVENT)
			return 0;
		kf = kvm_event_field_find(ev->reason, fields[op->fidx].name);
		return kf ? kvm_event_field_value(kf, ev) : 0;
	}
	default:		return 0;
	}
}

static void render_rule(const struct rule *ru, const struct rctx *c, struct out *o)
{
	const struct vmexit_event *ev = c->ev;
	char tmp[REASON_STR_MAX];
	const char *s;
	int i;

	for (i = 0; i < ru->nops; i++) {
		const struct op *op = &ru->ops[i];
		const struct field_def *f;

		if (op->field == OP_LITERAL) {
			put(o, ru->lit + op->off, op->len);
			continue;
		}
		f = &fields[op->fidx];
		switch (op->field) {
		case F_REASON_NAME:
			s = reason_name(ev->isa, ev->reason);
			if (!s)
				s = reason_str(ev->isa, ev->reason, tmp, sizeof(tmp));
			emit_str(o, op, s, strlen(s));
			continue;
		case F_GUEST:
			s = c->env->guest_name ? c->env->guest_name(c->env->ctx, ev->tgid) : NULL;
			if (s)
				emit_str(o, op, s, strlen(s));
			else	/* no name: the tgid, as a number */
				emit_int(o, op, &fields[F_PID_IDX], ev->tgid);
			continue;
		case F_ISA:
			if (op->conv == 's' && ev->isa >= VMEXIT_ISA_VMX &&
			    ev->isa <= VMEXIT_ISA_ARM64) {
				s = isa_name(ev->isa);
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_TYPE:
			if (op->conv == 's' && ev->type >= VMEXIT_EV_EXIT &&
			    ev->type < ARRAY_SIZE(type_names)) {
				s = type_names[ev->type];
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_KVM_EVENT:
			s = ev->type == VMEXIT_EV_KVM_EVENT ? kvm_event_name(ev->reason) : NULL;
			if (op->conv == 's' && s) {
				emit_str(o, op, s, strlen(s));
				continue;
			}
			break;
		case F_ACCESS:
			s = kvm_event_access(ev);
			emit_str(o, op, s, strlen(s));
			continue;
		}
		emit_int(o, op, f, field_value(op, c));
	}
}

/* The rule for ev (index), or -1; sets c->words to the %(1)..%(5) layout it was chosen by. */
static int match(const struct tmpl_rules *r, struct rctx *c)
{
	const struct vmexit_event *ev = c->ev;
	int i;

	c->words = generic_words;
	if ((ev->type == VMEXIT_EV_EXIT || ev->type == VMEXIT_EV_USER_EXIT) && ev->isa < NR_ISA) {
		if (ev->reason < DIRECT_REASONS) {
			if (r->direct[ev->isa][ev->reason])
				return r->direct[ev->isa][ev->reason] - 1;
		} else {
			for (i = 0; i < r->nbig; i++)
				if (r->big[i].isa == ev->isa && r->big[i].reason == ev->reason &&
				    r->big[i].rule)
					return r->big[i].rule - 1;
		}
	}
	if ((c->cls & 0xffff0000u) == SEED_CLASS_BASE && r->seed_class[c->cls & 0xff]) {
		c->words = seed_find(c->cls)->words;
		return r->seed_class[c->cls & 0xff] - 1;
	}
	if (ev->type == VMEXIT_EV_KVM_EVENT && ev->reason < VMEXIT_KVM_NR &&
	    r->kvm_rule[ev->reason])
		return r->kvm_rule[ev->reason] - 1;
	if (ev->type < ARRAY_SIZE(r->type_rule) && r->type_rule[ev->type])
		return r->type_rule[ev->type] - 1;
	return r->def ? r->def - 1 : -1;
}

/* Matches and advances the per-stream state once per event. */
static int prepare(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		   struct rctx *c)
{
	c->ev = ev;
	c->env = env;
	c->reltsc = 0;
	c->cls = seed_classify(ev);
	if (!env->first_ts_ns)
		env->first_ts_ns = ev->ts_ns;
	if (r->need_reltsc) {
		struct thread_ts *v = env->priv;
		__u64 *prev;
		bool added;

		if (!v)
			v = env->priv = calloc(1, sizeof(*v));
		/* Out of memory only costs %(reltsc) its value (0), not the line. */
		prev = v ? thread_ts_get(v, &ev->tid, &added) : NULL;
		if (prev) {
			if (!added)
				c->reltsc = tsc_of(env, ev->ts_ns) - tsc_of(env, *prev);
			*prev = ev->ts_ns;
		}
	}
	return match(r, c);
}

int tmpl_render(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		char *buf, size_t len)
{
	struct out o = { .buf = buf, .lim = len ? len - 1 : 0 };
	struct rctx c;
	int i = prepare(r, env, ev, &c);

	if (i >= 0)
		render_rule(&r->rules[i], &c, &o);
	if (len)
		buf[o.pos < o.lim ? o.pos : o.lim] = '\0';
	return o.pos > INT_MAX ? INT_MAX : (int)o.pos;
}

int tmpl_render_file(struct tmpl_rules *r, struct tmpl_env *env, const struct vmexit_event *ev,
		     FILE *f)
{
	char stack[2048], *buf = stack;
	struct out o = { .buf = stack, .lim = sizeof(stack) };
	struct rctx c;
	int i = prepare(r, env, ev, &c), ret;

	if (i < 0)
		return 0;
	render_rule(&r->rules[i], &c, &o);
	if (o.pos > sizeof(stack)) {
		/* Rare long line: render again into a fitting buffer (the state is not touched). */
		buf = malloc(o.pos);
		if (!buf)
			return -ENOMEM;
		o = (struct out){ .buf = buf, .lim = o.pos };
		render_rule(&r->rules[i], &c, &o);
	}
	ret = fwrite(buf, 1, o.pos, f) == o.pos ? (int)o.pos : -EIO;
	if (buf != stack)
		free(buf);
	return ret;
}
