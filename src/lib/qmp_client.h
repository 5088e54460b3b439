/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A QMP client that asks one question and hangs up: the qmp_capabilities handshake, then one
 * HMP command through human-monitor-command (vmexit asks only `info` commands), all within a
 * deadline, so that a VMM that does not answer (busy, or another client such as libvirt holds
 * its only QMP connection) costs at most that long.
 */
#ifndef VMEXIT_QMP_CLIENT_H
#define VMEXIT_QMP_CLIENT_H

#include <stddef.h>

/*
 * Asks the QMP server listening on the unix socket path to run command_line (an HMP command)
 * within timeout_ms. 0 with *text, its output (malloc'd), and *server_pid, the process that
 * listens on the socket (SO_PEERCRED); else -errno and why, one line without the path, in err:
 * "is not a socket", "no answer within 500 ms", "closed the connection", "answered something
 * that is not QMP", "refused the command: ...".
 */
int qmp_hmp_ask(const char *path, const char *command_line, int timeout_ms, char **text,
		int *server_pid, char *err, size_t errlen);

#endif /* VMEXIT_QMP_CLIENT_H */
