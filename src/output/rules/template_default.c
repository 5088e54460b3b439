// SPDX-License-Identifier: GPL-2.0
/* The stream's line when no --format is given, written in the rules language. */
#include "template.h"

/*
 * The stream line without --format. The per-cause kvmtrace ids decode I/O ports and CR
 * numbers for both VMX and SVM in one rule each; reason names win over them. RULES(E) is the
 * whole file, E the columns every exit starts with.
 */
#define P "%(reltime)13.6f %(walltime)17.6f %(guest)-16s %(vcpu)4d %(reason_label)-22s " \
	"%(latency)10s"
/* --keys: the exit's key, as stat --by key's KEY column, after its latency. */
#define PK P " %(key_label)-26s"
/* Ends the line of an exit: " in_flight" when it never completed, its latency its age. */
#define F "%(in_flight)s"
/* kvm events (--kvm-events) happen at an instant: the same columns up to the vCPU. */
#define K "%(reltime)13.6f %(walltime)17.6f %(guest)-16s %(vcpu)4d "
#define RULES(E) \
	"# vmexit's built-in stream format (see docs/formats.md)\n" \
	"type:exit\t" E " rip=0x%(rip)x info1=0x%(info1)x info2=0x%(info2)x" \
	" intr_info=0x%(intr_info)x error_code=0x%(error_code)x" F "\n" \
	"type:user_exit\t" E " errno=%(errno)d" F "\n" \
	"type:tsc_offset\t%(reltime)13.6f %(walltime)17.6f %(guest)-16s %(vcpu)4d tsc_offset" \
	" 0x%(info1)x -> 0x%(info2)x\n" \
	"vmx:EXCEPTION_NMI\t" E " rip=0x%(rip)x intr_info=0x%(intr_info)x" \
	" error_code=0x%(error_code)x qual=0x%(info1)x" F "\n" \
	"vmx:EPT_VIOLATION,vmx:EPT_MISCONFIG\t" E " rip=0x%(rip)x qual=0x%(info1)x" F "\n" \
	"svm:npf\t" E " rip=0x%(rip)x error=0x%(info1)x gpa=0x%(info2)x" F "\n" \
	"0x00020004\t" E " rip=0x%(rip)x in port=0x%(1)04x size=%(2)d" F "\n" \
	"0x00020005\t" E " rip=0x%(rip)x out port=0x%(1)04x size=%(2)d" F "\n" \
	"0x00020006\t" E " rip=0x%(rip)x read cr%(1)d" F "\n" \
	"0x00020007\t" E " rip=0x%(rip)x write cr%(1)d" F "\n" \
	"0x0002000D\t" E " rip=0x%(rip)x vector=0x%(1)02x" F "\n" \
	"0x00020013\t" E " rip=0x%(rip)x offset=0x%(1)03x" F "\n" \
	"type:kvm_event\t" K "kvm_event %(kvm_event)s info1=0x%(info1)x info2=0x%(info2)x\n" \
	"kvm:pio\t" K "pio %(access)s port 0x%(port)x size %(size)d val 0x%(val)x\n" \
	"kvm:mmio\t" K "mmio %(access)s gpa 0x%(gpa)x size %(size)d val 0x%(val)x\n" \
	"kvm:msr\t" K "msr %(access)s 0x%(msr)x val 0x%(val)x exception %(exception)d\n" \
	"kvm:cpuid\t" K "cpuid 0x%(function)x index 0x%(index)x eax 0x%(eax)x ebx 0x%(ebx)x" \
	" ecx 0x%(ecx)x edx 0x%(edx)x\n" \
	"kvm:inj_virq\t" K "inj_virq vector 0x%(vector)02x soft %(soft)d reinjected" \
	" %(reinjected)d\n" \
	"kvm:page_fault\t" K "page_fault rip 0x%(rip)x address 0x%(fault_address)x" \
	" error_code 0x%(error_code)x\n" \
	"type:wake\t" K "wake %(source)s vector 0x%(intr_info)02x %(latency)s guest" \
	" %(guest_part_ns)d exit %(exit_part_ns)d polled %(polled_part_ns)d slept" \
	" %(slept_part_ns)d runq %(runq_part_ns)d oncpu %(oncpu_part_ns)d\n" \
	"type:wake_posted\t" K "wake_posted %(source)s vector 0x%(intr_info)02x\n" \
	"type:wake_untimed\t" K "wake_untimed %(source)s vector 0x%(intr_info)02x\n" \
	"type:halt\t" K "halt %(halt_end)s %(latency)s poll" \
	" %(hlt_poll_ns)d sleep %(hlt_sleep_ns)d runq %(hlt_runq_ns)d other %(hlt_other_ns)d\n" \
	"type:hlt\t" K "hlt halts %(intr_info)d %(latency)s poll %(hlt_poll_ns)d sleep" \
	" %(hlt_sleep_ns)d runq %(hlt_runq_ns)d other %(hlt_other_ns)d\n"

const char tmpl_default_rules[] = RULES(P);
const char tmpl_default_key_rules[] = RULES(PK);
#undef RULES
#undef PK
#undef P
#undef F
#undef K

int tmpl_rules_default(struct tmpl_rules **out, char *err, size_t errlen)
{
	return tmpl_rules_parse(tmpl_default_rules, sizeof(tmpl_default_rules) - 1,
				"<built-in>", out, err, errlen);
}

int tmpl_rules_default_keys(struct tmpl_rules **out, char *err, size_t errlen)
{
	return tmpl_rules_parse(tmpl_default_key_rules, sizeof(tmpl_default_key_rules) - 1,
				"<built-in>", out, err, errlen);
}
