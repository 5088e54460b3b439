/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --qmp auto|PATH and --qmp-timeout (stat, top, serve, record): names of ports and addresses
 * from QEMU (qmp_names.h). QMP_OPTION(type, member, grp) gives both options: member is the
 * const char * of --qmp, member##_timeout_ms the int of --qmp-timeout (0: QMP_TIMEOUT_MS).
 */
#ifndef VMEXIT_QMP_OPTION_H
#define VMEXIT_QMP_OPTION_H

#include "cmd_options.h"

OPT_STORE(opt_qmp, const char *);	/* "auto" or a non-empty path */

#define QMP_OPTION(type, member, grp)                                                         \
	{ "qmp", 0, "auto|PATH", 0, "Name ports and addresses as QEMU's memory map does "      \
	  "(info mtree -f over QMP): auto finds the socket on each VMM's command line, "       \
	  "PATH is one VMM's (stat and top --keys, serve --keys N; record --keys keeps the "  \
	  "maps for report)", grp, OPT_TO(type, member, opt_qmp) },                           \
	{ "qmp-timeout", 0, "DURATION", 0, "With --qmp: how long one ask may take, connect to "  \
	  "answer (default 500ms, at most 60s); the view waits that long for a QEMU that is "  \
	  "slow to answer", grp, OPT_TO(type, member##_timeout_ms, opt_qmp_timeout) }

/* --qmp-timeout without --qmp: a usage error naming the option to add. */
void qmp_option_check(const char *qmp, int timeout_ms, struct argp_state *state);

#endif /* VMEXIT_QMP_OPTION_H */
