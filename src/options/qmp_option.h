/* SPDX-License-Identifier: GPL-2.0 */
/* --qmp auto|PATH (stat, top, serve): names of ports and addresses from QEMU (qmp_names.h). */
#ifndef VMEXIT_QMP_OPTION_H
#define VMEXIT_QMP_OPTION_H

#include "cmd_options.h"

OPT_STORE(opt_qmp, const char *);	/* "auto" or a non-empty path */

#define QMP_OPTION(type, member, grp)                                                         \
	{ "qmp", 0, "auto|PATH", 0, "Name ports and addresses as QEMU's memory map does "      \
	  "(info mtree -f over QMP): auto finds the socket on each VMM's command line, "       \
	  "PATH is one VMM's (stat and top --keys, serve --keys N; record --keys keeps the "  \
	  "maps for report)", grp, OPT_TO(type, member, opt_qmp) }

#endif /* VMEXIT_QMP_OPTION_H */
