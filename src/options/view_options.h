/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMEXIT_VIEW_OPTIONS_H
#define VMEXIT_VIEW_OPTIONS_H

#include "stat_output.h"

struct cmd_options;

/*
 * The summary-view options stat and report share (input: struct stat_view): --by, -s/--sort,
 * --csv, --json, --hist, -u/--units, --tsc-mhz. A bad value is an argp_error.
 */
extern const struct cmd_options stat_view_options;

#endif /* VMEXIT_VIEW_OPTIONS_H */
