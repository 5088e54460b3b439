// SPDX-License-Identifier: GPL-2.0
/* The rules language's %(name) fields and event type names (docs/formats.md lists them). */
#include "template_rules.h"
#include "wake.h"

const struct field_def tmpl_fields[] = {
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
	/* info1 of a user exit, signed: a KVM_RUN that failed with EINTR is -4, not 2^64 - 4. */
	{ "errno",	 F_INFO1,	FK_S,	  64, 0, 1 },
	{ "intr_info",	 F_INTR_INFO,	FK_U,	  64, 0, 1 },
	{ "error_code",	 F_ERROR_CODE,	FK_U,	  64, 0, 1 },
	{ "latency_ns",	 F_LATENCY_NS,	FK_U,	  64, 0, 1 },
	{ "latency_us",	 F_LATENCY_US,	FK_U,	  64, 0, 1000 },
	{ "oncpu_ns",	 F_ONCPU_NS,	FK_U,	  64, 0, 1 },
	{ "blocked_ns",	 F_BLOCKED_NS,	FK_U,	  64, 0, 1 },
	{ "runq_ns",	 F_RUNQ_NS,	FK_U,	  64, 0, 1 },
	{ "ts_ns",	 F_TS_NS,	FK_U,	  64, 0, 1 },
	{ "rel_ns",	 F_REL_NS,	FK_S,	  64, 0, 1 },
	{ "time",	 F_TIME,	FK_U,	  64, 0, 1000000000 },
	{ "reltime",	 F_RELTIME,	FK_S,	  64, 0, 1000000000 },
	{ "walltime",	 F_WALLTIME,	FK_U,	  64, 0, 1000000000 },
	{ "reason_label", F_REASON_LABEL, FK_STR, 64, 0, 1 },
	{ "latency",	 F_LATENCY,	FK_STR,	  64, 0, 1 },
	{ "type",	 F_TYPE,	FK_NAMED, 64, 0, 1 },
	{ "in_flight",	 F_IN_FLIGHT,	FK_NAMED, 64, 0, 1 },
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
	{ "key",	 F_KEY,		FK_U,	  64, 0, 1 },
	{ "key_kind",	 F_KEY_KIND,	FK_NAMED, 64, 0, 1 },
	{ "key_dir",	 F_KEY_DIR,	FK_NAMED, 64, 0, 1 },
	{ "key_name",	 F_KEY_NAME,	FK_STR,	  64, 0, 1 },
	{ "key_label",	 F_KEY_LABEL,	FK_STR,	  64, 0, 1 },
	/* stream --wake: types wake, wake_posted and wake_untimed (vector %(intr_info), latency %(latency)). */
	{ "source",	 F_WAKE_SOURCE,	FK_NAMED, 64, 0, 1 },
#define WAKE_PART_FIELD(ID, name) { #name "_part_ns", F_WAKE_PART, FK_U, 64, WAKE_PART_##ID, 1 },
	WAKE_PARTS(WAKE_PART_FIELD)
#undef WAKE_PART_FIELD
	/* stream --wake: types halt and hlt (a halted exit's halts are its %(intr_info)). */
	{ "halt_end",	 F_HALT_END,	FK_NAMED, 64, 0, 1 },
#define HLT_PART_FIELD(ID, name) { "hlt_" #name "_ns", F_HLT_PART, FK_U, 64, HLT_PART_##ID, 1 },
	HLT_PARTS(HLT_PART_FIELD)
#undef HLT_PART_FIELD
};

const unsigned int tmpl_nr_fields = ARRAY_SIZE(tmpl_fields);
const struct field_def *const tmpl_pid_field = &tmpl_fields[4];

const char *const tmpl_type_names[NR_EV_TYPES] = {
	[VMEXIT_EV_EXIT] = "exit",
	[VMEXIT_EV_USER_EXIT] = "user_exit",
	[VMEXIT_EV_TSC_OFFSET] = "tsc_offset",
	[VMEXIT_EV_KVM_EVENT] = "kvm_event",
	[VMEXIT_EV_WAKE] = "wake",
	[VMEXIT_EV_WAKE_POSTED] = "wake_posted",
	[VMEXIT_EV_WAKE_UNTIMED] = "wake_untimed",
	[VMEXIT_EV_HALT] = "halt",
	[VMEXIT_EV_HLT] = "hlt",
};
