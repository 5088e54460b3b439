/* SPDX-License-Identifier: GPL-2.0 */
/* --guest-symbols GUEST=FILE (stat and report with --by rip, top with --rips). */
#ifndef VMEXIT_GUEST_SYMBOLS_OPTION_H
#define VMEXIT_GUEST_SYMBOLS_OPTION_H

#include "cmd_options.h"
#include "guest_symbols.h"

/* Loads FILE for GUEST; a file that does not parse ends the run with FILE:LINE:COLUMN: what. */
OPT_STORE(opt_guest_symbols, struct guest_symbols);

#endif /* VMEXIT_GUEST_SYMBOLS_OPTION_H */
