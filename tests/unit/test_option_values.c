// SPDX-License-Identifier: GPL-2.0
/* The checked number parsers every option value goes through. */
#include <limits.h>
#include "check.h"
#include "option_values.h"

int main(void)
{
	long l;
	double d;

	CHECK(strict_long("42", 10, &l) && l == 42);
	CHECK(strict_long("-7", 10, &l) && l == -7);
	CHECK(strict_long("0x10", 0, &l) && l == 16);
	CHECK(!strict_long("0x10", 10, &l));		/* base 10: "x10" is left over */
	CHECK(!strict_long("", 10, &l));
	CHECK(!strict_long("12abc", 10, &l));
	CHECK(!strict_long("1 ", 10, &l));
	CHECK(!strict_long("99999999999999999999999", 10, &l));	/* overflow */
	CHECK(strict_long("9223372036854775807", 10, &l) && l == LONG_MAX);

	CHECK(strict_double("0.5", &d) && d == 0.5);
	CHECK(strict_double("1e3", &d) && d == 1000);
	CHECK(!strict_double("nan", &d));
	CHECK(!strict_double("inf", &d));
	CHECK(!strict_double("1e999", &d));		/* overflow */
	CHECK(!strict_double("1.5s", &d));
	CHECK(!strict_double("", &d));

	CHECK_DONE("option_values");
}
