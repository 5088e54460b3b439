// SPDX-License-Identifier: GPL-2.0
#include <signal.h>
#include <stddef.h>
#include "signals.h"

volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

void install_signal_handlers(void)
{
	struct sigaction sa = { .sa_handler = on_signal }, old;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/*
	 * A hang-up (the ssh session that started us dropped) ends the run as Ctrl-C does: the
	 * default action would lose the summary and leave a record file cut inside its header.
	 * Unless something chose otherwise: nohup and serve ignore it, top -L reopens its file.
	 */
	if (!sigaction(SIGHUP, NULL, &old) && old.sa_handler == SIG_DFL)
		sigaction(SIGHUP, &sa, NULL);
}
