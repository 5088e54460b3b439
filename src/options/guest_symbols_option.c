// SPDX-License-Identifier: GPL-2.0
#include "guest_symbols_option.h"

void opt_guest_symbols(const char *arg, void *to, struct argp_state *state)
{
	char err[512];

	if (guest_symbols_add(to, arg, err, sizeof(err))) {
		guest_symbols_free(to);
		argp_failure(state, 1, 0, "%s", err);
	}
}
