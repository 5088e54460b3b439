// SPDX-License-Identifier: GPL-2.0
/* stat's table: durations in a fixed unit (-u) and the STUCK section's threshold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "durations.h"
#include "stat_output.h"
#include "tracker.h"

static void test_fmt_duration(void)
{
	char b[32];

	/* Scaled, and -u ns / us as they were. */
	CHECK_STR(fmt_duration(0, 8200, b, sizeof(b)), "8.2us");
	CHECK_STR(fmt_duration(0, 1000000000, b, sizeof(b)), "1.00s");
	CHECK_STR(fmt_duration(1, 8200, b, sizeof(b)), "8200");
	CHECK_STR(fmt_duration(1000, 8200, b, sizeof(b)), "8.2");
	CHECK_STR(fmt_duration(1000, 400, b, sizeof(b)), "0.4");
	/* -u ms: microsecond exits keep their digits below 1 ms, not all "0.0". */
	CHECK_STR(fmt_duration(1000000, 8200, b, sizeof(b)), "0.008");
	CHECK_STR(fmt_duration(1000000, 74300, b, sizeof(b)), "0.074");
	CHECK_STR(fmt_duration(1000000, 999400, b, sizeof(b)), "0.999");
	CHECK_STR(fmt_duration(1000000, 1000000, b, sizeof(b)), "1.0");
	CHECK_STR(fmt_duration(1000000, 12345678, b, sizeof(b)), "12.3");
}

/* The STUCK header gives the threshold with its unit, whatever -u says; ages follow -u. */
static void test_stuck_header(void)
{
	struct inflight_exit e = { .tgid = 42, .tid = 43, .vcpu = 0, .start_ns = 1000000000ull };
	struct name_cache names = {};
	struct row_table rows;
	struct stat_report rep = { .rows = &rows, .inflight = &e, .nr_inflight = 1,
				   .now_ns = 3500000000ull, .stuck_ns = 1000000000ull };
	struct stat_view v = { .unit_ns = 1000, .names = &names };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	row_table_init(&rows);
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	stat_print(&v, &rep, f);
	fclose(f);
	CHECK(strstr(text, "STUCK: exits in flight for 1.00s or more\n") != NULL);
	CHECK(strstr(text, " 2500000.0\n") != NULL);
	if (!strstr(text, "1.00s or more"))
		fprintf(stderr, "%s", text);
	free(text);
	row_table_free(&rows);
	name_cache_free(&names);
}

/* stat_print() of rep with json or not, into a string the caller frees. */
static char *printed(struct stat_report *rep, bool json)
{
	struct name_cache names = {};
	struct stat_view v = { .names = &names, .fmt = json ? OUT_JSON : OUT_TABLE };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	if (!f)
		return NULL;
	stat_print(&v, rep, f);
	fclose(f);
	name_cache_free(&names);
	return text;
}

static int count_of(const char *text, const char *what)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, what)); p++)
		n++;
	return n;
}

/*
 * Only exits in flight for --stuck or more are listed (an alert on a non-empty list has no false
 * positive): not a thread's last exit of microseconds, nor an exit younger than --stuck; but one
 * that completed after --stuck between two samples is, and so is one its thread exited in after
 * as long. The summary counts the ended ones on its no-latency line.
 */
static void test_stuck_only(void)
{
	const __u64 S = 1000000000ull;
	struct inflight_exit inflight[] = {
#define IO	.isa = VMEXIT_ISA_USER, .reason = 2
		{ .tid = 1, IO, .start_ns = 10 * S, .nr = 1 },			/* 2.5 s: stuck */
		{ .tid = 2, IO, .start_ns = 12 * S, .nr = 1 },			/* 0.5 s: not yet */
		{ .tid = 3, IO, .start_ns = 11 * S, .end_ns = 11 * S + 9000, .nr = 1 },	/* last */
		{ .tid = 4, IO, .start_ns = 9 * S, .end_ns = 11 * S, .nr = 1 },	/* ended after 2 s */
	};
	struct inflight_exit done[] = {
		{ .tid = 5, IO, .start_ns = 5 * S, .end_ns = 8 * S, .completed = true, .nr = 2 },
#undef IO
	};
	struct row_table rows;
	struct row *r;
	struct stat_report rep = { .rows = &rows, .inflight = inflight, .nr_inflight = 4,
				   .stuck = done, .nr_stuck = 1, .now_ns = 12500000000ull,
				   .stuck_ns = S };
	char *t;

	row_table_init(&rows);
	t = printed(&rep, false);
	CHECK(t && strstr(t, "STUCK: exits in flight for 1.00s or more\n"));
	CHECK(t && count_of(t, " KVM_EXIT_IO ") == 3);
	CHECK(t && strstr(t, "       1 KVM_EXIT_IO                 2.50s\n"));
	CHECK(t && strstr(t, "       4 KVM_EXIT_IO                 2.00s  (ended with its thread)\n"));
	CHECK(t && strstr(t, "       5 KVM_EXIT_IO                 3.00s  (completed; 2 such exits)\n"));
	if (t && count_of(t, " KVM_EXIT_IO ") != 3)
		fprintf(stderr, "%s", t);
	free(t);
	t = printed(&rep, true);
	CHECK(t && count_of(t, "\"tid\":") == 3);
	CHECK(t && strstr(t, "\"tid\":1,") && strstr(t, "\"tid\":4,") && strstr(t, "\"tid\":5,"));
	CHECK(t && strstr(t, "\"age_ns\":3000000000,\"ended\":false,\"completed\":true,\"count\":2"));
	free(t);
	/* Nothing stuck: no section, nothing in JSON's in_flight. */
	rep.nr_inflight = 3;
	rep.inflight = inflight + 1;
	rep.nr_stuck = 0;
	inflight[3].start_ns = 11 * S - 5000;		/* ended after 5 us */
	t = printed(&rep, false);
	CHECK(t && !strstr(t, "STUCK"));
	free(t);
	t = printed(&rep, true);
	CHECK(t && strstr(t, "\"in_flight\":[]"));
	free(t);
	/* The summary: ended exits are counted on its line; its list is the run's (stuck), not
	 * the last sample's ended ones. */
	r = row_table_get(&rows, &(struct row_key){ .tgid = 7, .vcpu = -1, .isa = VMEXIT_ISA_USER });
	CHECK(r != NULL);
	if (r) {
		r->count = 5;
		r->completed = 2;
	}
	rep.final = true;
	rep.ended = 2;
	rep.inflight = inflight;
	rep.nr_inflight = 4;
	rep.nr_stuck = 1;
	inflight[3].start_ns = 9 * S;
	t = printed(&rep, false);
	CHECK(t && strstr(t, "note: 3 exit(s) counted with no latency: 2 ended with their thread, 1 "
			  "still in flight at the end\n"));
	CHECK(t && strstr(t, "STUCK: exits in flight for 1.00s or more during the run\n"));
	CHECK(t && strstr(t, "       1 KVM_EXIT_IO ") && strstr(t, "       5 KVM_EXIT_IO ") &&
	      count_of(t, " KVM_EXIT_IO ") == 2);
	if (t && count_of(t, " KVM_EXIT_IO ") != 2)
		fprintf(stderr, "%s", t);
	free(t);
	row_table_free(&rows);
}

/*
 * A loss is fixed where it happened: vmexit's own ring buffer (--ringbuf-kb), or the buffers of
 * the tool whose capture report reads (trace-cmd record -b, perf record -m), never the other's.
 */
static void test_lost_hint_by_source(void)
{
	static const struct {
		enum lost_source src;
		const char *fix;
	} want[] = {
		{ LOST_SRC_VMEXIT, "(raise --ringbuf-kb)" },
		{ LOST_SRC_TRACE_CMD, "trace-cmd record -b KB)" },
		{ LOST_SRC_PERF, "perf record -m PAGES)" },
	};
	static const char *const fixes[] = { "--ringbuf-kb", "record -b", "record -m" };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct row_table rows;
		struct stat_report rep = { .rows = &rows, .final = true,
					   .lost_source = want[i].src };
		char *text;

		row_table_init(&rows);
		rep.lost[LOST_RINGBUF_FULL] = 7;
		rep.lost[LOST_UNMATCHED_RUN] = 2;	/* the same wherever the events came from */
		text = printed(&rep, false);
		CHECK(text && strstr(text, "LOST: 7 "));
		CHECK(text && strstr(text, want[i].fix));
		CHECK(text && strstr(text, "LOST: 2 userspace exits not followed by KVM_RUN"));
		for (size_t j = 0; j < sizeof(fixes) / sizeof(fixes[0]); j++)
			CHECK(!text || j == i || !strstr(text, fixes[j]));
		if (text && !strstr(text, want[i].fix))
			fprintf(stderr, "%s", text);
		free(text);
		row_table_free(&rows);
	}
}

/*
 * Exits to the VMM and no guest exit (kvm_exit never fired): the summary says the exits KVM
 * handles in the kernel are absent and how to see them; with a guest exit, or in an interval,
 * not. And --by key groups a VGA console's byte writes by page (no map): 376 in one row.
 */
static void test_no_kvm_exit_note(void)
{
	const char *note = "note: no guest exit seen (kvm:kvm_exit did not fire)";
	struct row_table rows;
	struct stat_report rep = { .rows = &rows, .final = true, .interval_s = 1 };
	struct row *r;
	char *t;

	row_table_init(&rows);
	r = row_table_get(&rows, &(struct row_key){ .tgid = 7, .vcpu = -1, .isa = VMEXIT_ISA_USER,
						   .reason = 2 });
	CHECK(r != NULL);
	r->count = r->completed = 10;
	t = printed(&rep, false);
	CHECK(t && strstr(t, note) && strstr(t, "--kvm-events pio,cpuid"));
	free(t);
	rep.final = false;
	t = printed(&rep, false);
	CHECK(t && !strstr(t, note));
	free(t);
	rep.final = true;
	r = row_table_get(&rows, &(struct row_key){ .tgid = 7, .vcpu = -1, .isa = VMEXIT_ISA_SVM,
						   .reason = 0x7b });
	CHECK(r != NULL);
	r->count = r->completed = 1;
	t = printed(&rep, false);
	CHECK(t && !strstr(t, note));
	free(t);
	row_table_free(&rows);
}

int main(void)
{
	test_no_kvm_exit_note();
	test_fmt_duration();
	test_stuck_header();
	test_stuck_only();
	test_lost_hint_by_source();
	CHECK_DONE("stat_output");
}
