// SPDX-License-Identifier: GPL-2.0
/* stat's table: durations in a fixed unit (-u) and the STUCK section's threshold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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
	CHECK(strstr(text, "STUCK: exits in flight for 1.00s or more,") != NULL);
	CHECK(strstr(text, " 2500000.0\n") != NULL);
	if (!strstr(text, "1.00s or more"))
		fprintf(stderr, "%s", text);
	free(text);
	row_table_free(&rows);
	name_cache_free(&names);
}

int main(void)
{
	test_fmt_duration();
	test_stuck_header();
	CHECK_DONE("stat_output");
}
