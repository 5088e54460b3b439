// SPDX-License-Identifier: GPL-2.0
/* The one duration parser (a unit always, a range), its one message, and the print units. */
#include <errno.h>
#include <math.h>
#include "check.h"
#include "durations.h"

static const char *const refused[] = {
	"1e99ns", "18446744073709551615ns", "18446744073709551615", "1e12s", "1e99",
	"-1s", "nan", "nans", "s", "", "1 s", "1S",
};

int main(void)
{
	char buf[256];
	double ns;
	__u64 n;
	const char *u;

	/* A bare number is refused, whatever the range: it would read as ns or as seconds. */
	CHECK(parse_duration("800", 0, DUR_WEEK, &ns) < 0);
	CHECK(parse_duration("0.5", 0, DUR_WEEK, &ns) < 0);
	CHECK(parse_duration("0", 0, DUR_WEEK, &ns) < 0);
	/* Every unit, in the range the caller allows. */
	CHECK(!parse_duration("3ns", 0, DUR_WEEK, &ns) && ns == 3);
	CHECK(!parse_duration("250us", 0, DUR_WEEK, &ns) && ns == 250e3);
	CHECK(!parse_duration("1.5ms", 0, DUR_WEEK, &ns) && ns == 1.5e6);
	CHECK(!parse_duration("2s", 0, DUR_WEEK, &ns) && ns == 2e9);
	CHECK(!parse_duration("5m", 0, DUR_WEEK, &ns) && ns == 300e9);
	CHECK(!parse_duration("2h", 0, DUR_WEEK, &ns) && ns == 7200e9);
	CHECK(!parse_duration("168h", 0, DUR_WEEK, &ns) && ns == DUR_WEEK);
	CHECK(!parse_duration("0s", 0, DUR_WEEK, &ns) && ns == 0);
	CHECK(parse_duration("0s", DUR_NS, DUR_WEEK, &ns) < 0);
	CHECK(parse_duration("169h", 0, DUR_WEEK, &ns) < 0);
	CHECK(parse_duration("5ms", DUR_S, DUR_WEEK, &ns) < 0);
	CHECK(parse_duration("5d", 0, DUR_WEEK, &ns) < 0);
	/* Past 2^64 ns: refused by the range, never cast into a small number (1e99 ns, 2^64 - 1
	 * ns as written, 1e12 s all turned --min-latency off); and what is no duration at all. */
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		if (parse_duration_ns(refused[i], 0, DUR_WEEK, &n) != -EINVAL) {
			fprintf(stderr, "'%s' taken as a duration\n", refused[i]);
			check_failures++;
		}
	}
	CHECK(!parse_duration_ns("1000s", 0, DUR_WEEK, &n) && n == 1000000000000ull);
	CHECK(!parse_duration_ns("168h", 0, DUR_WEEK, &n) && n == 604800000000000ull);
	CHECK(!parse_duration_ns("1.5ns", 0, DUR_WEEK, &n) && n == 2);	/* rounded */
	/* Not a duration whatever the range. */
	CHECK(parse_duration("infs", 0, INFINITY, &ns) < 0);
	CHECK(parse_duration("1e999s", 0, INFINITY, &ns) < 0);

	/* The one message: the option, the value, the units, the range. */
	duration_refusal(buf, sizeof(buf), "--min-latency", "1e99", 0, DUR_WEEK);
	CHECK_STR(buf, "invalid --min-latency '1e99': give a duration with its unit (ns, us, ms, "
		  "s, m or h) from 0ns to 168h, e.g. 500ms or 2s");
	duration_refusal(buf, sizeof(buf), "--stuck", "500", DUR_NS, 90e9);
	CHECK_STR(buf, "invalid --stuck '500': give a duration with its unit (ns, us, ms, s, m or "
		  "h) from 1ns to 90s, e.g. 500ms or 2s");

	/* Exactly, for errors: the best unit up to s, whole minutes and hours as such. */
	duration_str(buf, sizeof(buf), 960);
	CHECK_STR(buf, "960ns");
	duration_str(buf, sizeof(buf), 1024);
	CHECK_STR(buf, "1.024us");
	duration_str(buf, sizeof(buf), 137438953472.0);
	CHECK_STR(buf, "137.438953472s");
	duration_str(buf, sizeof(buf), 300e9);
	CHECK_STR(buf, "5m");
	duration_str(buf, sizeof(buf), 8760 * DUR_H);
	CHECK_STR(buf, "8760h");
	duration_str(buf, sizeof(buf), 0);
	CHECK_STR(buf, "0ns");

	/* Printing: ns below 1 us, then the largest unit up to s not above the value. */
	u = duration_unit(999, &ns);
	CHECK(!strcmp(u, "ns") && ns == 1);
	u = duration_unit(1000, &ns);
	CHECK(!strcmp(u, "us") && ns == 1e3);
	u = duration_unit(999999999, &ns);
	CHECK(!strcmp(u, "ms") && ns == 1e6);
	u = duration_unit(3600000000000ull, &ns);	/* an hour still prints in s */
	CHECK(!strcmp(u, "s") && ns == 1e9);
	u = duration_unit(0, &ns);
	CHECK(!strcmp(u, "ns") && ns == 1);
	CHECK_DONE("durations");
}
