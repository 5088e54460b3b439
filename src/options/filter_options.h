/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter options: -p, -g, -c, -r (and --min-latency where a command offers it) as given,
 * for live tracing (cli_filters.c, applied in the kernel) and for report (matched against a
 * recording). No live-session types here: report includes this.
 */
#ifndef VMEXIT_FILTER_OPTIONS_H
#define VMEXIT_FILTER_OPTIONS_H

#include "cmd_options.h"
#include "event_filter.h"

#define MAX_GUEST_NAMES	16

struct filter_options {
	struct event_filter f;		/* -p, -c, -r, --min-latency */
	const char *guests[MAX_GUEST_NAMES];	/* -g, as given: names still to match */
	int nr_guests;
	/* Called with each -p once stored (live tracing: is it running?); may be NULL. */
	void (*pid_given)(const char *arg, __u32 pid);
};

/* Every vCPU: the state before any -c. */
void filter_options_init(struct filter_options *fo);

OPT_STORE(opt_pid, struct filter_options);		/* -p: one more pid */
OPT_STORE(opt_guest, struct filter_options);		/* -g: one more name */
OPT_STORE(opt_vcpu, __s32);				/* -c */
OPT_STORE(opt_reasons, struct event_filter);		/* -r: more reasons */

/*
 * The entries of -p, -g, -c and -r under a group header, into the struct filter_options
 * `member` of `type`: one list for every command.
 */
#define FILTER_OPTIONS(header, guest_doc, group, type, member)                                \
	OPT_HEADER(header, group),                                                            \
	{ "pid", 'p', "PID", 0, "Only this VMM process (repeatable)", group,                  \
	  OPT_TO(type, member, opt_pid) },                                                    \
	{ "guest", 'g', "NAME", 0, guest_doc, group, OPT_TO(type, member, opt_guest) },       \
	{ "vcpu", 'c', "N", 0, "Only this vCPU", group, OPT_TO(type, member.f.vcpu, opt_vcpu) }, \
	{ "reason", 'r', "LIST", 0, "Only these exit reasons: names or numbers, comma-separated " \
	  "(svm:npf, vmx:48, IO, KVM_EXIT_IO, kvm_userspace_exit(IO))", group,               \
	  OPT_TO(type, member.f, opt_reasons) }

#endif /* VMEXIT_FILTER_OPTIONS_H */
