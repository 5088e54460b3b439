// SPDX-License-Identifier: GPL-2.0
/* guest_select: which rows' guests serve -g / -p exports, the kernel counting every VMM. */
#include "check.h"
#include "guest_select.h"

int main(void)
{
	static const int pids[] = { 4242 };
	static const char *const names[] = { "web01", "db" };
	struct guest_select s = { pids, 1, names, 2 };
	struct guest_select names_only = { NULL, 0, names, 2 };

	CHECK(guest_select_pick(&s, 7, "web01") == GUEST_WANTED);
	CHECK(guest_select_pick(&s, 7, "db") == GUEST_WANTED);
	/* A -p pid is wanted whatever its name, known or not. */
	CHECK(guest_select_pick(&s, 4242, "other") == GUEST_WANTED);
	CHECK(guest_select_pick(&s, 4242, "4242") == GUEST_WANTED);
	/* No name yet (the pid as text): kept until its name says. */
	CHECK(guest_select_pick(&s, 7, "7") == GUEST_UNKNOWN);
	CHECK(guest_select_pick(&s, 7, NULL) == GUEST_UNKNOWN);
	CHECK(guest_select_pick(&names_only, 4242, "4242") == GUEST_UNKNOWN);
	/* Another guest's name: dropped. Names match whole, not as prefixes. */
	CHECK(guest_select_pick(&s, 7, "web011") == GUEST_UNWANTED);
	CHECK(guest_select_pick(&s, 7, "web") == GUEST_UNWANTED);
	CHECK(guest_select_pick(&names_only, 4242, "other") == GUEST_UNWANTED);
	CHECK_DONE("guest_select");
}
