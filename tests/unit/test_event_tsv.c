// SPDX-License-Identifier: GPL-2.0
/*
 * stream/report --tsv: a header, one tab-separated line per exit (guest exits and exits to the
 * VMM, completed or in flight), nothing for other events, markers as comment lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "event_output.h"
#include "lost_causes.h"
#include "reasons.h"

int main(void)
{
	struct name_cache names = { 0 };
	struct evout_opts opts = { .mode = EVOUT_TSV, .names = &names };
	struct evout o;
	struct vmexit_event e[] = {
		{ .type = VMEXIT_EV_EXIT, .ts_ns = 17280000123456789ull, .latency_ns = 2500,
		  .tgid = 100, .tid = 101, .vcpu = 0, .isa = VMEXIT_ISA_VMX, .reason = 48 },
		{ .type = VMEXIT_EV_USER_EXIT | VMEXIT_EV_IN_FLIGHT, .ts_ns = 5, .latency_ns = 0,
		  .tgid = 200, .tid = 201, .vcpu = -1, .isa = VMEXIT_ISA_USER, .reason = 2 },
		/* not exits: no line */
		{ .type = VMEXIT_EV_TSC_OFFSET, .ts_ns = 6, .tgid = 100, .tid = 101 },
		{ .type = VMEXIT_EV_KVM_EVENT, .ts_ns = 7, .tgid = 100, .tid = 101,
		  .reason = VMEXIT_KVM_PIO },
	};
	__u64 lost[NR_LOST] = { 0 };
	char want[1024], r0[REASON_STR_MAX], r1[REASON_STR_MAX], r6[REASON_STR_MAX];
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	CHECK_EQ_U64(evout_open(&o, &opts), 0);
	f = open_memstream(&buf, &size);
	CHECK(f != NULL);
	if (!f)
		CHECK_DONE("event_tsv");
	o.f = f;
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		CHECK_EQ_U64(evout_event(&o, &e[i]), 0);
	lost[0] = 3;
	evout_lost(&o, 9, lost);
	evout_stuck(&o, &(struct inflight_exit){ .start_ns = 10, .tgid = 200, .tid = 201,
						 .vcpu = -1, .isa = VMEXIT_ISA_USER, .reason = 6 },
		    10 + 1500000000);
	CHECK_EQ_U64(evout_close(&o), 0);
	fclose(f);
	if (getenv("V"))
		fputs(buf, stdout);
	/* The reasons as every other output labels them (reasons.h); the stuck marker's by name. */
	reason_label(VMEXIT_ISA_VMX, 48, r0, sizeof(r0));
	reason_label(VMEXIT_ISA_USER, 2, r1, sizeof(r1));
	snprintf(r6, sizeof(r6), "%s", reason_name(VMEXIT_ISA_USER, 6));
	snprintf(want, sizeof(want),
		 "#ts_ns\tpid\ttid\tvcpu\treason\tlatency_ns\tin_flight\n"
		 "17280000123456789\t100\t101\t0\t%s\t2500\t0\n"
		 "5\t200\t201\t-1\t%s\t0\t1\n"
		 "# LOST 3 records (%s) at ts_ns 9\n"
		 "# STUCK pid 200 tid 201 vcpu -1 %s in flight for 1500000000 ns since ts_ns 10\n",
		 r0, r1, lost_cause_text(0), r6);
	CHECK_STR(buf, want);
	free(buf);
	name_cache_free(&names);
	CHECK_DONE("event_tsv");
}
