// SPDX-License-Identifier: GPL-2.0
/*
 * Per-event JSON (`--events --json`, `stream --json`): the exact text, byte for byte, of every
 * kind of event with edge values, as downstream parsers read it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "event_output.h"
#include "wake.h"

static const char want[] =
	"{\"type\":\"exit\",\"ts_ns\":17280000123456789,\"time\":17280000.123456787,\"rel_ns\":0,"
	"\"latency_ns\":2500,\"pid\":100,\"guest\":\"web01\",\"tid\":101,\"vcpu\":0,\"cpu\":3,"
	"\"isa\":\"vmx\",\"reason\":48,\"reason_name\":\"EPT_VIOLATION\","
	"\"rip\":\"0xffffffffffffffff\",\"info1\":\"0x182\",\"info2\":\"0xfee00000\","
	"\"intr_info\":2147483884,\"error_code\":0,\"latency_cycles\":5238}\n"
	"{\"type\":\"user_exit\",\"ts_ns\":17280000000000000,\"time\":17280000.000000000,"
	"\"rel_ns\":-123456789,\"latency_ns\":0,\"pid\":200,"
	"\"guest\":\"t\\\"en\\\\ant\\u0001\\ufffd\",\"tid\":201,\"vcpu\":-1,\"cpu\":4294967295,"
	"\"isa\":\"user\",\"reason\":2,\"reason_name\":\"IO\","	/* no rip, info1...: none */
	"\"errno\":-4,\"in_flight\":true,\"latency_cycles\":0}\n"
	"{\"type\":\"exit\",\"ts_ns\":1,\"time\":0.000000001,\"rel_ns\":-17280000123456788,"
	"\"latency_ns\":18446744073709551615,\"pid\":4294967295,\"guest\":\"4294967295\","
	"\"tid\":7,\"vcpu\":2147483647,\"cpu\":0,\"isa\":\"svm\",\"reason\":74565,"
	"\"reason_name\":\"UNKNOWN_0x12345\",\"rip\":\"0x0\",\"info1\":\"0x0\",\"info2\":\"0x0\","
	"\"intr_info\":0,\"error_code\":0,\"latency_cycles\":38647367680459259904}\n"
	"{\"type\":\"tsc_offset\",\"ts_ns\":17280001000000000,\"time\":17280001.000000000,"
	"\"rel_ns\":876543211,\"latency_ns\":0,\"pid\":100,\"guest\":\"web01\",\"tid\":101,"
	"\"vcpu\":0,\"cpu\":0,\"isa\":\"?\",\"prev_offset\":\"0x0\","
	"\"next_offset\":\"0x8000000000000000\"}\n"
	"{\"type\":\"kvm_event\",\"ts_ns\":17280001000000010,\"time\":17280001.000000011,"
	"\"rel_ns\":876543221,\"latency_ns\":0,\"pid\":100,\"guest\":\"web01\",\"tid\":101,"
	"\"vcpu\":0,\"cpu\":0,\"kvm_event\":\"pio\",\"access\":\"write\",\"port\":\"0x3f8\","
	"\"size\":1,\"count\":1,\"val\":\"0x41\"}\n"
	"{\"type\":\"kvm_event\",\"ts_ns\":17280001000000100,\"time\":17280001.000000101,"
	"\"rel_ns\":876543311,\"latency_ns\":0,\"pid\":100,\"guest\":\"web01\",\"tid\":101,"
	"\"vcpu\":0,\"cpu\":0,\"kvm_event\":99,\"rip\":\"0x3\",\"info1\":\"0x1\","
	"\"info2\":\"0x2\",\"intr_info\":4,\"error_code\":5}\n"
	"{\"type\":\"unknown\",\"ts_ns\":17280001000001000,\"time\":17280001.000000998,"
	"\"rel_ns\":876544211,\"latency_ns\":0,\"pid\":100,\"guest\":\"web01\",\"tid\":101,"
	"\"vcpu\":0,\"cpu\":0,\"isa\":\"?\",\"reason\":0,\"reason_name\":\"0x0\",\"rip\":\"0x0\","
	"\"info1\":\"0x0\",\"info2\":\"0x0\",\"intr_info\":0,\"error_code\":0,"
	"\"latency_cycles\":0}\n"
	"{\"type\":\"wake_posted\",\"ts_ns\":17280001000002000,\"time\":17280001.000002000,"
	"\"rel_ns\":876545211,\"latency_ns\":0,\"pid\":100,\"guest\":\"web01\",\"tid\":150,"
	"\"vcpu\":1,\"cpu\":2,\"source\":\"msi\",\"vector\":66}\n"
	/* time is a double: 17280001.000003 has none nearer than this */
	"{\"type\":\"wake_untimed\",\"ts_ns\":17280001000003000,\"time\":17280001.000002999,"
	"\"rel_ns\":876546211,\"latency_ns\":0,\"pid\":100,\"guest\":\"web01\",\"tid\":150,"
	"\"vcpu\":0,\"cpu\":1,\"source\":\"unknown\",\"vector\":236}\n"
	"{\"lost\":3,\"cause\":\"cells_full\",\"what\":\"statistics cells full\","
	"\"ts_ns\":17280002000000000,\"time\":17280002.000000000}\n"
	"{\"stuck\":true,\"ts_ns\":17280002000000000,\"time\":17280002.000000000,"
	"\"age_ns\":1500000000,\"pid\":200,\"guest\":\"t\\\"en\\\\ant\\u0001\\ufffd\",\"tid\":201,"
	"\"vcpu\":-1,\"kind\":\"user\",\"isa\":\"user\",\"reason\":6,\"reason_name\":\"MMIO\"}\n";

/*
 * stream --wake: the delivery programs' losses, as they grow, one marker per cause that loses
 * deliveries (slots 2, threads 0, the ring 4; a full cell map loses none of the stream's: no
 * marker), and the totals of two such growths at the end.
 */
static void test_wake_lost(struct evout_opts *opts, const char *want_out)
{
	__u64 d1[NR_WAKE_LOSSES] = { [WAKE_LOST_SLOTS] = 2, [WAKE_LOST_CELLS] = 9,
				     [WAKE_LOST_RING] = 4 };
	__u64 d2[NR_WAKE_LOSSES] = { [WAKE_LOST_RING] = 1 };
	struct evout o = {};
	char *buf = NULL, *sum = NULL;
	size_t size = 0, sum_size = 0;
	FILE *f;

	CHECK_EQ_U64(evout_open(&o, opts), 0);
	f = open_memstream(&buf, &size);
	CHECK(f != NULL);
	if (!f)
		return;
	o.f = f;
	evout_wake_lost(&o, 17280002000000000ull, d1);
	evout_wake_lost(&o, 17280003000000000ull, d2);
	CHECK_EQ_U64(evout_close(&o), 0);
	fclose(f);
	if (getenv("V"))
		fputs(buf, stdout);
	CHECK_STR(buf, want_out);
	f = open_memstream(&sum, &sum_size);
	CHECK(f != NULL);
	if (!f)
		return;
	evout_wake_summary(f, o.wake_lost);
	fclose(f);
	CHECK_STR(sum, "vmexit: --wake lost: 2 pending interrupts past the vCPU's slots\n"
		  "vmexit: --wake lost: 9 cells (map full)\n"
		  "vmexit: --wake lost: 5 deliveries the event ring could not take\n");
	free(buf);
	free(sum);
}

int main(void)
{
	struct name_cache names = { 0 };
	struct evout_opts opts = { .mode = EVOUT_JSON, .tsc_mhz = 2095.078, .names = &names };
	struct evout o;
	struct vmexit_event e[] = {
		/* 200 days of uptime: "time" keeps printf's double rounding (...787, not 789) */
		{ .type = VMEXIT_EV_EXIT, .ts_ns = 17280000123456789ull, .latency_ns = 2500,
		  .tgid = 100, .tid = 101, .vcpu = 0, .cpu = 3, .isa = VMEXIT_ISA_VMX,
		  .reason = 48, .rip = UINT64_MAX, .info1 = 0x182, .info2 = 0xfee00000,
		  .intr_info = 0x800000ec, .error_code = 0 },
		/* earlier than the first: negative rel_ns; errno -4; a name to escape; never
		 * completed */
		{ .type = VMEXIT_EV_USER_EXIT | VMEXIT_EV_IN_FLIGHT, .ts_ns = 17280000000000000ull, .latency_ns = 0,
		  .tgid = 200, .tid = 201, .vcpu = -1, .cpu = UINT32_MAX, .isa = VMEXIT_ISA_USER,
		  .reason = 2, .info1 = (__u64)-4 },
		{ .type = VMEXIT_EV_EXIT, .ts_ns = 1, .latency_ns = UINT64_MAX, .tgid = UINT32_MAX,
		  .tid = 7, .vcpu = INT32_MAX, .isa = VMEXIT_ISA_SVM, .reason = 0x12345 },
		{ .type = VMEXIT_EV_TSC_OFFSET, .ts_ns = 17280001000000000ull, .tgid = 100,
		  .tid = 101, .vcpu = 0, .info1 = 0, .info2 = 1ull << 63 },
		{ .type = VMEXIT_EV_KVM_EVENT, .ts_ns = 17280001000000010ull, .tgid = 100,
		  .tid = 101, .vcpu = 0, .reason = VMEXIT_KVM_PIO, .info1 = 0x3f8, .info2 = 0x41,
		  .rip = 1, .intr_info = 1, .error_code = 1 },
		/* a kvm event id from a newer vmexit: what there is */
		{ .type = VMEXIT_EV_KVM_EVENT, .ts_ns = 17280001000000100ull, .tgid = 100,
		  .tid = 101, .vcpu = 0, .reason = 99, .info1 = 1, .info2 = 2, .rip = 3,
		  .intr_info = 4, .error_code = 5 },
		{ .type = 77, .ts_ns = 17280001000001000ull, .tgid = 100, .tid = 101 },
		/* stream --wake: an MSI KVM posted to vCPU 1, from the VMM's thread 150 */
		{ .type = VMEXIT_EV_WAKE_POSTED, .ts_ns = 17280001000002000ull, .tgid = 100,
		  .tid = 150, .vcpu = 1, .cpu = 2, .reason = WAKE_SRC_MSI, .intr_info = 0x42 },
		/* stream --wake: a timer made pending for vCPU 0 before its first entry was seen */
		{ .type = VMEXIT_EV_WAKE_UNTIMED, .ts_ns = 17280001000003000ull, .tgid = 100,
		  .tid = 150, .vcpu = 0, .cpu = 1, .reason = WAKE_SRC_UNKNOWN, .intr_info = 0xec },
	};
	__u64 lost[NR_LOST] = { 0 };
	char *buf = NULL;
	size_t size = 0;
	FILE *f;

	name_cache_set(&names, 100, "web01");
	name_cache_set(&names, 200, "t\"en\\ant\x01\xff");
	CHECK_EQ_U64(evout_open(&o, &opts), 0);
	f = open_memstream(&buf, &size);
	CHECK(f != NULL);
	if (!f)
		CHECK_DONE("event_output");
	o.f = f;
	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++)
		CHECK_EQ_U64(evout_event(&o, &e[i]), 0);
	lost[0] = 3;
	evout_lost(&o, 17280002000000000ull, lost);
	evout_stuck(&o, &(struct inflight_exit){ .start_ns = 17280002000000000ull, .tgid = 200,
						 .tid = 201, .vcpu = -1, .isa = VMEXIT_ISA_USER,
						 .reason = 6 },
		    17280002000000000ull + 1500000000);
	CHECK_EQ_U64(evout_close(&o), 0);	/* flushes; stdout is not closed */
	fclose(f);
	if (getenv("V"))
		fputs(buf, stdout);
	CHECK_STR(buf, want);
	free(buf);

	/* The default lines: the name escaped (text_escape.h), a line for each event. */
	buf = NULL;
	size = 0;
	opts.mode = EVOUT_LINES;
	CHECK_EQ_U64(evout_open(&o, &opts), 0);
	f = open_memstream(&buf, &size);
	CHECK(f != NULL);
	if (!f)
		CHECK_DONE("event_output");
	o.f = f;
	CHECK_EQ_U64(evout_event(&o, &e[1]), 0);
	CHECK_EQ_U64(evout_event(&o, &e[sizeof(e) / sizeof(e[0]) - 2]), 0);
	CHECK_EQ_U64(evout_event(&o, &e[sizeof(e) / sizeof(e[0]) - 1]), 0);
	evout_stuck(&o, &(struct inflight_exit){ .start_ns = 17280002000000000ull, .tgid = 200,
						 .tid = 201, .vcpu = -1, .isa = VMEXIT_ISA_USER,
						 .reason = 6 },
		    17280002000000000ull + 1500000000);
	CHECK_EQ_U64(evout_close(&o), 0);
	fclose(f);
	if (getenv("V"))
		fputs(buf, stdout);
	/* A header naming the columns and the clock (no CLOCK_REALTIME offset given: the
	 * monotonic one); the tables' reason names and scaled latencies. */
	CHECK_STR(buf, "# REL_TIME(s) CLOCK_MONOTONIC(s) GUEST            vCPU REASON       "
		  "             LATENCY\n"
		  "     0.000000   17280000.000000 t\"en\\ant\\x01\\xff   -1 KVM_EXIT_IO       "
		  "            0ns errno=-4 in_flight\n"
		  "     1.000002   17280001.000002 web01               1 wake_posted msi vector "
		  "0x42\n"
		  "     1.000003   17280001.000003 web01               0 wake_untimed unknown "
		  "vector 0xec\n"
		  "# STUCK t\"en\\ant\\x01\\xff pid 200 tid 201 vcpu -1 KVM_EXIT_MMIO in flight for "
		  "1.500000 s since 17280002.000000\n");
	free(buf);
	opts.mode = EVOUT_JSON;
	test_wake_lost(&opts,
		"{\"lost\":2,\"type\":\"wake\",\"cause\":\"slots\",\"what\":\"pending interrupts "
		"past the vCPU's slots\",\"ts_ns\":17280002000000000,\"time\":17280002.000000000}\n"
		"{\"lost\":4,\"type\":\"wake\",\"cause\":\"ring\",\"what\":\"deliveries the event "
		"ring could not take\",\"ts_ns\":17280002000000000,\"time\":17280002.000000000}\n"
		"{\"lost\":1,\"type\":\"wake\",\"cause\":\"ring\",\"what\":\"deliveries the event "
		"ring could not take\",\"ts_ns\":17280003000000000,\"time\":17280003.000000000}\n");
	opts.mode = EVOUT_LINES;
	test_wake_lost(&opts,
		"# REL_TIME(s) CLOCK_MONOTONIC(s) GUEST            vCPU REASON       "
		"             LATENCY\n"
		"# LOST 2 (--wake: pending interrupts past the vCPU's slots) at 17280002.000000\n"
		"# LOST 4 (--wake: deliveries the event ring could not take) at 17280002.000000\n"
		"# LOST 1 (--wake: deliveries the event ring could not take) at 17280003.000000\n");
	name_cache_free(&names);
	CHECK_DONE("event_output");
}
