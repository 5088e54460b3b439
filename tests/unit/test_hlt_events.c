// SPDX-License-Identifier: GPL-2.0
/*
 * stream --wake's HLT anatomy events (VMEXIT_EV_HALT, VMEXIT_EV_HLT, include/vmexit.h): the
 * exact JSON object and built-in line of a hand-made halt and halted exit, the parts where
 * include/wake.h's hlt_event_part() keeps them; how a halt ended, told from its flags and poll
 * part as bpf/wake.bpf.c counts it; and the event filter, which keeps them whatever -r and
 * --min-latency say.
 *
 * The halted exit: web01's (pid 100) vCPU 1 exits at 1 s, halts from 1.000001 s: polls 3,000 ns,
 * sleeps 1,000,000, waits 2,000 on the run-queue, 500 more on CPU to kvm_vcpu_wakeup (KVM's
 * halt: 1,005,500 ns); the entry 700 ns after it (1,000 ns of the exit before the halt: other
 * 2,200 in all, 1,007,200 ns).
 */
#include <stdlib.h>
#include "check.h"
#include "event_filter.h"
#include "event_output.h"
#include "event_render.h"
#include "hlt_events.h"
#include "wake.h"

int main(void)
{
	struct name_cache names = { 0 };
	struct vmexit_event halt = { .type = VMEXIT_EV_HALT, .ts_ns = 1000001000,
				     .latency_ns = 1005500, .tgid = 100, .tid = 101, .vcpu = 1,
				     .cpu = 2, .error_code = VMEXIT_HALT_WAITED |
				     VMEXIT_HALT_VALID };
	struct vmexit_event hlt = { .type = VMEXIT_EV_HLT, .ts_ns = 1000000000,
				    .latency_ns = 1007200, .tgid = 100, .tid = 101, .vcpu = 1,
				    .cpu = 2, .intr_info = 1 };
	struct event_filter flt = { .vcpu = -1 };
	char *out;

	*hlt_event_part(&halt, HLT_PART_POLL) = *hlt_event_part(&hlt, HLT_PART_POLL) = 3000;
	*hlt_event_part(&halt, HLT_PART_SLEEP) = *hlt_event_part(&hlt, HLT_PART_SLEEP) = 1000000;
	*hlt_event_part(&halt, HLT_PART_RUNQ) = *hlt_event_part(&hlt, HLT_PART_RUNQ) = 2000;
	*hlt_event_part(&halt, HLT_PART_OTHER) = 500;
	*hlt_event_part(&hlt, HLT_PART_OTHER) = 2200;
	name_cache_set(&names, 100, "web01");
	CHECK_EQ_U64(halt_end_of(&halt), HALT_END_POLL_SLEPT);
	out = render(EVOUT_JSON, &halt, &names);
	CHECK_STR(out, "{\"type\":\"halt\",\"ts_ns\":1000001000,\"time\":1.000001000,\"rel_ns\":0,"
		  "\"latency_ns\":1005500,\"pid\":100,\"guest\":\"web01\",\"tid\":101,\"vcpu\":1,"
		  "\"cpu\":2,\"end\":\"poll_slept\",\"valid\":true,\"parts_ns\":{\"poll\":3000,"
		  "\"sleep\":1000000,\"runq\":2000,\"other\":500}}\n");
	free(out);
	out = render(EVOUT_JSON, &hlt, &names);
	CHECK_STR(out, "{\"type\":\"hlt\",\"ts_ns\":1000000000,\"time\":1.000000000,\"rel_ns\":0,"
		  "\"latency_ns\":1007200,\"pid\":100,\"guest\":\"web01\",\"tid\":101,\"vcpu\":1,"
		  "\"cpu\":2,\"halts\":1,\"parts_ns\":{\"poll\":3000,\"sleep\":1000000,"
		  "\"runq\":2000,\"other\":2200}}\n");
	free(out);
	out = render(EVOUT_LINES, &halt, &names);
	CHECK(strstr(out, " web01               1 halt poll_slept 1.0ms poll 3000 sleep 1000000 "
		      "runq 2000 other 500\n") != NULL);
	if (getenv("V"))
		fputs(out, stdout);
	free(out);
	out = render(EVOUT_LINES, &hlt, &names);
	CHECK(strstr(out, " web01               1 hlt halts 1 1.0ms poll 3000 sleep 1000000 "
		      "runq 2000 other 2200\n") != NULL);
	if (getenv("V"))
		fputs(out, stdout);
	free(out);
	/* How a halt ended: no wait is polled; a wait with no poll part slept from its start. */
	halt.error_code = VMEXIT_HALT_VALID;
	CHECK_EQ_U64(halt_end_of(&halt), HALT_END_POLLED);
	halt.error_code = VMEXIT_HALT_WAITED;
	*hlt_event_part(&halt, HLT_PART_POLL) = 0;
	CHECK_EQ_U64(halt_end_of(&halt), HALT_END_SLEPT);
	out = render(EVOUT_JSON, &halt, &names);
	CHECK(strstr(out, "\"end\":\"slept\",\"valid\":false,") != NULL);
	free(out);
	/* Not exits: -r and --min-latency leave them; -p and -c apply. */
	flt.nr_reasons = 1;
	flt.reasons[0].isa = VMEXIT_ISA_VMX;
	flt.reasons[0].reason = 30;
	flt.min_latency_ns = 10000000;
	CHECK(event_filter_match(&flt, &halt));
	CHECK(event_filter_match(&flt, &hlt));
	flt.vcpu = 0;
	CHECK(!event_filter_match(&flt, &hlt));
	flt.vcpu = -1;
	flt.nr_pids = 1;
	flt.pids[0] = 200;
	CHECK(!event_filter_match(&flt, &halt));
	name_cache_free(&names);
	CHECK_DONE("test_hlt_events");
}
