// SPDX-License-Identifier: GPL-2.0
/* The one duration parser (its three rules for a bare number and units) and the print unit. */
#include "check.h"
#include "durations.h"

int main(void)
{
	double ns;
	const char *u;

	/* Bare numbers: in the unit the caller names, or refused. */
	CHECK(!parse_duration("800", DUR_NS, DUR_NS, DUR_S, &ns) && ns == 800);
	CHECK(!parse_duration("0.5", DUR_S, DUR_NS, DUR_S, &ns) && ns == 5e8);
	CHECK(parse_duration("5", DUR_UNIT_REQUIRED, DUR_NS, DUR_S, &ns) < 0);
	/* Units, within the range the caller allows. */
	CHECK(!parse_duration("250us", DUR_NS, DUR_NS, DUR_S, &ns) && ns == 250e3);
	CHECK(!parse_duration("1.5ms", DUR_UNIT_REQUIRED, DUR_NS, DUR_S, &ns) && ns == 1.5e6);
	CHECK(!parse_duration("5m", DUR_UNIT_REQUIRED, DUR_S, DUR_H, &ns) && ns == 300e9);
	CHECK(!parse_duration("2h", DUR_UNIT_REQUIRED, DUR_S, DUR_H, &ns) && ns == 7200e9);
	CHECK(parse_duration("5m", DUR_NS, DUR_NS, DUR_S, &ns) < 0);
	CHECK(parse_duration("5ms", DUR_UNIT_REQUIRED, DUR_S, DUR_H, &ns) < 0);
	CHECK(parse_duration("5d", DUR_UNIT_REQUIRED, DUR_S, DUR_H, &ns) < 0);
	/* Not a duration whatever the rule. */
	CHECK(parse_duration("-1s", DUR_NS, DUR_NS, DUR_H, &ns) < 0);
	CHECK(parse_duration("nan", DUR_NS, DUR_NS, DUR_H, &ns) < 0);
	CHECK(parse_duration("inf", DUR_NS, DUR_NS, DUR_H, &ns) < 0);
	CHECK(parse_duration("1e999s", DUR_NS, DUR_NS, DUR_H, &ns) < 0);
	CHECK(parse_duration("s", DUR_NS, DUR_NS, DUR_H, &ns) < 0);
	CHECK(parse_duration("", DUR_NS, DUR_NS, DUR_H, &ns) < 0);
	CHECK(parse_duration("1 s", DUR_NS, DUR_NS, DUR_H, &ns) < 0);

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
