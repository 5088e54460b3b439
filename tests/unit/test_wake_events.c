// SPDX-License-Identifier: GPL-2.0
/*
 * stream --wake's events (VMEXIT_EV_WAKE, include/vmexit.h): the exact JSON object and built-in
 * line of a hand-made delivery, its parts where include/wake.h's wake_event_part() keeps them;
 * and the event filter, which keeps deliveries whatever -r and --min-latency say (not exits).
 *
 * The delivery: web01's (pid 100) timer 0x40 to vCPU 1, pending at 1 s, delivered 12,345 ns
 * later after 10,000 ns asleep, 2,000 on the run-queue and 345 on CPU (the sum).
 */
#include <stdlib.h>
#include "check.h"
#include "event_filter.h"
#include "event_output.h"
#include "event_render.h"
#include "wake.h"

int main(void)
{
	struct name_cache names = { 0 };
	struct vmexit_event ev = { .type = VMEXIT_EV_WAKE, .ts_ns = 1000000000, .latency_ns = 12345,
				   .tgid = 100, .tid = 101, .vcpu = 1, .cpu = 2,
				   .reason = WAKE_SRC_TIMER, .intr_info = 0x40 };
	struct event_filter flt = { .vcpu = -1 };
	char *out;

	*wake_event_part(&ev, WAKE_PART_SLEPT) = 10000;
	*wake_event_part(&ev, WAKE_PART_RUNQ) = 2000;
	*wake_event_part(&ev, WAKE_PART_ONCPU) = 345;
	name_cache_set(&names, 100, "web01");
	out = render(EVOUT_JSON, &ev, &names);
	CHECK_STR(out, "{\"type\":\"wake\",\"ts_ns\":1000000000,\"time\":1.000000000,\"rel_ns\":0,"
		  "\"latency_ns\":12345,\"pid\":100,\"guest\":\"web01\",\"tid\":101,\"vcpu\":1,"
		  "\"cpu\":2,\"source\":\"timer\",\"vector\":64,\"parts_ns\":{\"guest\":0,"
		  "\"exit\":0,\"polled\":0,\"slept\":10000,\"runq\":2000,\"oncpu\":345}}\n");
	free(out);
	out = render(EVOUT_LINES, &ev, &names);
	CHECK(strstr(out, "\n     0.000000          1.000000 web01               1 wake timer "
		      "vector 0x40 12.3us guest 0 exit 0 polled 0 slept 10000 runq 2000 "
		      "oncpu 345\n") != NULL);
	if (getenv("V"))
		fputs(out, stdout);
	free(out);
	/* Not an exit: -r and --min-latency leave it; -p and -c apply. */
	flt.nr_reasons = 1;
	flt.reasons[0].isa = VMEXIT_ISA_VMX;
	flt.reasons[0].reason = 30;
	flt.min_latency_ns = 1000000;
	CHECK(event_filter_match(&flt, &ev));
	flt.vcpu = 0;
	CHECK(!event_filter_match(&flt, &ev));
	flt.vcpu = -1;
	flt.nr_pids = 1;
	flt.pids[0] = 200;
	CHECK(!event_filter_match(&flt, &ev));
	name_cache_free(&names);
	CHECK_DONE("test_wake_events");
}
