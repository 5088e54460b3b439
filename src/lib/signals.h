/* SPDX-License-Identifier: GPL-2.0 */
/* Ctrl-C, SIGTERM and SIGHUP (unless ignored or handled already: nohup, serve, top -L) end a
 * trace cleanly: every loop checks `exiting`, then prints its end. */
#ifndef VMEXIT_SIGNALS_H
#define VMEXIT_SIGNALS_H

#include <signal.h>

extern volatile sig_atomic_t exiting;
void install_signal_handlers(void);

#endif /* VMEXIT_SIGNALS_H */
