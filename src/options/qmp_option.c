// SPDX-License-Identifier: GPL-2.0
#include "qmp_option.h"

void opt_qmp(const char *arg, void *to, struct argp_state *state)
{
	if (!*arg)
		argp_error(state, "--qmp: give auto or the path of a QMP socket");
	*(const char **)to = arg;
}

void qmp_option_check(const char *qmp, int timeout_ms, struct argp_state *state)
{
	if (timeout_ms && !qmp)
		argp_error(state, "--qmp-timeout times --qmp's asks: add --qmp auto|PATH");
}
